"""Project scopes: the memory folder follows the working directory's git project, by the
rule of docs/configuration.md ("Which folder"), and a switch turns memory off per
repository. Through the real CLI in a subprocess, in real ``git init`` repositories,
with HOME pointed at tmp_path."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.errors import ProjectMapError, WrongFolder
from sagemem.files.gitroot import claude_project_key
from sagemem.files.scopes import MAX_READABLE_CHARS, find_project, slug, use_folder

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True)
                                .returncode != 0, reason="needs git")
HOOK_PROMPT = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "what pets?",
                          "session_id": "s1"})
NEW_PETS = ("new", "--type", "user", "--name", "pets", "--description", "The user's pets",
            "--body", "The user has two cats.")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit (a worktree needs one)."""
    path = tmp_path / "src" / "app"
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=path)
    return path


def sagemem(home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None,
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    environ.update({"HOME": str(home), "SAGE_MEM_GLOBAL_DIR": "off",
                    "SAGE_MEM_SEMANTIC": "off", **(env or {})})
    return subprocess.run([sys.executable, "-m", "sagemem", *args], cwd=cwd, env=environ,
                          input=stdin, capture_output=True, text=True, timeout=60)


def folder(home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None
           ) -> dict[str, object]:
    """``sagemem config --json``'s memory folder and the rule that chose it."""
    done = sagemem(home, cwd, *args, "config", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return {**data["folder"], "memory_dir": data["settings"]["memory_dir"]["value"],
            "source": data["settings"]["memory_dir"]["source"],
            "state_dir": data["settings"]["state_dir"]["value"]}


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == "" and done.stderr.startswith("error: ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    return done.stderr


# -- the rule, step by step -------------------------------------------------------------

def test_option_wins_over_everything(home: Path, repo: Path, tmp_path: Path) -> None:
    chosen = folder(home, repo, "--dir", str(tmp_path / "mine"))
    assert (chosen["rule"], chosen["memory_dir"]) == ("option", str(tmp_path / "mine"))


def test_env_wins_over_the_project(home: Path, repo: Path, tmp_path: Path) -> None:
    chosen = folder(home, repo, env={"SAGE_MEM_DIR": str(tmp_path / "env")})
    assert (chosen["rule"], chosen["memory_dir"]) == ("env", str(tmp_path / "env"))


def test_outside_any_repository_the_default_folder(home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    chosen = folder(home, plain)
    assert chosen["rule"] == "default" and chosen["project_root"] is None
    assert chosen["memory_dir"] == str(home / ".sage-mem" / "memory")


def test_git_root_rule_names_the_folder_by_the_roots_slug(home: Path, repo: Path) -> None:
    chosen = folder(home, repo)
    expected = home / ".sage-mem" / "projects" / slug(repo) / "memory"
    assert chosen == {"rule": "git root", "project_root": str(repo), "file": None,
                      "memory": "on", "memory_dir": str(expected), "source": "project",
                      "state_dir": str(expected.parent / ".sage-mem")}
    text = sagemem(home, repo, "config").stdout
    assert f"{expected}  (git root {repo})" in text


def test_slug_is_the_readable_path_then_eight_hex_of_its_sha256() -> None:
    digest = hashlib.sha256(b"/home/u/src/my_app.v2").hexdigest()[:8]
    assert slug(Path("/home/u/src/my_app.v2")) == f"-home-u-src-my-app-v2-{digest}"


@pytest.mark.parametrize("roots", [
    ("/home/u/client.app", "/home/u/client-app", "/home/u/client_app"),
    ("/home/u/日本", "/home/u/中国"),
])
def test_roots_claude_codes_rule_folds_together_get_their_own_folders(roots: tuple[str, ...]
                                                                      ) -> None:
    assert len({claude_project_key(Path(root)) for root in roots}) == 1
    assert len({slug(Path(root)) for root in roots}) == len(roots)


def test_a_long_roots_slug_keeps_its_tail_readable() -> None:
    root = Path("/home/u/" + "deep/" * 40 + "my-project")
    name = slug(root)
    assert len(name) == MAX_READABLE_CHARS + 9 and name[:-9].endswith("-deep-my-project")
    assert name != slug(root.parent / "my_project")


def test_a_subdirectory_and_a_linked_worktree_share_the_projects_folder(
        home: Path, repo: Path, tmp_path: Path) -> None:
    deep = repo / "pkg" / "mod"
    deep.mkdir(parents=True)
    git("worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature", cwd=repo)
    worktree_sub = tmp_path / "feature" / "docs"
    worktree_sub.mkdir()
    chosen = {folder(home, where)["memory_dir"] for where in
              (repo, deep, tmp_path / "feature", worktree_sub)}
    assert chosen == {str(home / ".sage-mem" / "projects" / slug(repo) / "memory")}
    assert find_project(worktree_sub).worktree == tmp_path / "feature"  # type: ignore[union-attr]


def test_a_submodules_git_file_is_a_project_of_its_own(home: Path, repo: Path) -> None:
    # a submodule's .git file points into the parent's .git/modules/<name>, which has no
    # commondir: it is a repository of its own, not a worktree of the parent
    modules = repo / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "HEAD").write_text("ref: refs/heads/main\n")
    sub = repo / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    chosen = folder(home, sub)
    assert chosen["project_root"] == str(sub)
    assert chosen["memory_dir"] == str(home / ".sage-mem" / "projects" / slug(sub) / "memory")


def test_a_forged_git_file_does_not_lead_to_another_projects_memory(
        home: Path, repo: Path, tmp_path: Path) -> None:
    # an unpacked folder: .git = "gitdir: fake", fake/commondir = the victim's .git
    unpacked = tmp_path / "x" / "unpacked"
    (unpacked / "fake").mkdir(parents=True)
    (unpacked / ".git").write_text("gitdir: fake\n")
    (unpacked / "fake" / "commondir").write_text(f"{repo / '.git'}\n")
    chosen = folder(home, unpacked)
    assert chosen["project_root"] == str(unpacked)
    assert chosen["memory_dir"] == str(home / ".sage-mem" / "projects" / slug(unpacked)
                                       / "memory")
    shown = sagemem(home, unpacked, "scope").stdout
    assert f"project     {unpacked}" in shown and str(repo) not in shown


def test_the_users_map_names_a_folder_anywhere(home: Path, repo: Path, tmp_path: Path
                                               ) -> None:
    old = home / ".sage-mem" / "memory"
    assert sagemem(home, repo, "init", str(old)).returncode == 0
    done = sagemem(home, repo, "scope", "use", str(old))
    assert done.returncode == 0, done.stderr
    chosen = folder(home, repo / ".")
    assert chosen["rule"] == "user project map" and chosen["memory_dir"] == str(old)
    assert chosen["file"] == str(home / ".sage-mem" / "projects.json")
    assert chosen["state_dir"] == str(home / ".sage-mem" / ".sage-mem")  # adopted in place


def test_the_repository_file_names_a_folder_inside_it_with_state_outside(
        home: Path, repo: Path) -> None:
    (repo / ".sagemem.json").write_text('{"memory_dir": "docs/memory"}')
    chosen = folder(home, repo)
    assert (chosen["rule"], chosen["memory_dir"]) == ("repository file",
                                                      str(repo / "docs" / "memory"))
    assert not chosen["state_dir"].startswith(str(repo))  # type: ignore[union-attr]
    assert sagemem(home, repo, "init").returncode == 0
    assert (repo / "docs" / "memory" / "MEMORY.md").is_file()


@pytest.mark.parametrize("named", ["../outside", "/etc", "docs/../../outside", "."])
def test_a_repository_file_naming_a_folder_outside_it_is_refused(
        home: Path, repo: Path, named: str) -> None:
    (repo / ".sagemem.json").write_text(json.dumps({"memory_dir": named}))
    for command in (("list",), ("config",), NEW_PETS):
        error = one_error(sagemem(home, repo, *command))
        assert ".sagemem.json" in error
    assert not (repo.parent / "outside").exists()


def test_a_repository_file_leading_out_through_a_symlink_is_refused(
        home: Path, repo: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (repo / "docs").symlink_to(tmp_path / "elsewhere")
    (repo / ".sagemem.json").write_text('{"memory_dir": "docs/memory"}')
    error = one_error(sagemem(home, repo, "init"))
    assert "symlink" in error and ".sagemem.json" in error
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_malformed_repository_file_is_one_error_line(home: Path, repo: Path) -> None:
    (repo / ".sagemem.json").write_text('{"memory": "sometimes"}')
    assert ".sagemem.json" in one_error(sagemem(home, repo, "list"))


# -- the switch ------------------------------------------------------------------------

def test_off_in_the_users_map_changes_nothing_in_the_repository(home: Path, repo: Path
                                                                ) -> None:
    assert sagemem(home, repo, "scope", "off").returncode == 0
    assert not (repo / ".sagemem.json").exists()
    error = one_error(sagemem(home, repo, "list"))
    assert error == (f"error: memory is off for {repo} ({home / '.sage-mem' / 'projects.json'}); "
                     "sagemem scope on turns it back on, or pass --dir\n")
    shown = sagemem(home, repo, "scope").stdout
    assert "user project map" in shown and "memory_dir  off" in shown
    assert sagemem(home, repo, "scope", "on").returncode == 0
    assert sagemem(home, repo, "init").returncode == 0


def test_off_in_the_repository_file_travels_and_the_users_on_outvotes_it(
        home: Path, repo: Path) -> None:
    assert sagemem(home, repo, "scope", "off", "--repo").returncode == 0
    assert json.loads((repo / ".sagemem.json").read_text()) == {"memory": "off"}
    assert ".sagemem.json" in one_error(sagemem(home, repo, "list"))
    assert sagemem(home, repo, "scope", "on").returncode == 0  # the user's own choice
    assert sagemem(home, repo, "init").returncode == 0
    assert json.loads((repo / ".sagemem.json").read_text()) == {"memory": "off"}


def test_on_with_repo_edits_the_repository_file_keeping_its_other_keys(
        home: Path, repo: Path) -> None:
    (repo / ".sagemem.json").write_text('{"memory": "off", "memory_dir": "notes"}')
    assert sagemem(home, repo, "scope", "on", "--repo").returncode == 0
    assert json.loads((repo / ".sagemem.json").read_text()) == {"memory_dir": "notes"}
    assert folder(home, repo)["memory_dir"] == str(repo / "notes")


def test_dir_and_env_win_over_the_switch(home: Path, repo: Path, tmp_path: Path) -> None:
    sagemem(home, repo, "scope", "off")
    assert sagemem(home, repo, "--dir", str(tmp_path / "m"), "init").returncode == 0
    assert sagemem(home, repo, "list", env={"SAGE_MEM_DIR": str(tmp_path / "m")}
                   ).returncode == 0


def test_the_prompt_hook_and_inject_are_silent_when_memory_is_off(
        home: Path, repo: Path) -> None:
    sagemem(home, repo, "init")
    assert sagemem(home, repo, *NEW_PETS).returncode == 0
    sagemem(home, repo, "scope", "off")
    hook = sagemem(home, repo, "hook", "claude-code", stdin=HOOK_PROMPT)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    inject = sagemem(home, repo, "inject", "what pets?")
    assert (inject.returncode, inject.stdout, inject.stderr) == (0, "", "")
    sagemem(home, repo, "scope", "on")
    assert "cats" in sagemem(home, repo, "hook", "claude-code", stdin=HOOK_PROMPT).stdout


def test_the_mcp_server_refuses_to_start_when_memory_is_off(home: Path, repo: Path) -> None:
    pytest.importorskip("mcp")
    sagemem(home, repo, "scope", "off", "--repo")
    assert "memory is off" in one_error(sagemem(home, repo, "mcp"))


def test_scope_outside_a_repository_says_there_is_no_project(home: Path, tmp_path: Path
                                                             ) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "not inside a git working tree" in one_error(sagemem(home, plain, "scope", "off"))
    assert "(not in a git working tree)" in sagemem(home, plain, "scope").stdout


def test_a_project_folder_may_not_be_the_global_layers(home: Path, repo: Path) -> None:
    global_dir = home / ".sage-mem" / "global"
    done = sagemem(home, repo, "scope", "use", str(global_dir),
                   env={"SAGE_MEM_GLOBAL_DIR": str(global_dir)})
    assert "global layer" in one_error(done)
    assert not (home / ".sage-mem" / "projects.json").exists()


# -- the user's map ----------------------------------------------------------------------

def test_a_malformed_project_map_is_one_line_and_never_overwritten(home: Path, repo: Path
                                                                   ) -> None:
    path = home / ".sage-mem" / "projects.json"
    path.parent.mkdir()
    path.write_text('{"version": 1, "projects": {"relative": {"memory": "off"}}')
    assert str(path) in one_error(sagemem(home, repo, "config"))
    assert str(path) in one_error(sagemem(home, repo, "scope", "off"))
    assert path.read_text() == '{"version": 1, "projects": {"relative": {"memory": "off"}}'


def test_use_folder_keeps_every_other_projects_entry(home: Path, tmp_path: Path) -> None:
    path = home / ".sage-mem" / "projects.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"version": 1, "projects": {"/other": {"memory": "off"}}}))
    recorded = use_folder(tmp_path / "app", tmp_path / "auto-memory", home=home)
    assert recorded == tmp_path / "auto-memory"
    assert json.loads(path.read_text())["projects"] == {
        "/other": {"memory": "off"}, str(tmp_path / "app"): {"memory_dir": str(recorded)}}


def test_a_project_map_entry_must_be_absolute(home: Path, tmp_path: Path) -> None:
    path = home / ".sage-mem" / "projects.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"version": 1, "projects": {
        str(tmp_path): {"memory_dir": "relative/folder"}}}))
    with pytest.raises(ProjectMapError):
        use_folder(tmp_path, tmp_path / "m", home=home)


# -- what a new user's trial found --------------------------------------------------------

@pytest.mark.parametrize("named", [".git", ".git/hooks", "docs/.GIT/memory", "ok\u0000x",
                                   "ok\nx"])
def test_a_repository_file_naming_git_or_a_control_character_is_refused(
        home: Path, repo: Path, named: str) -> None:
    (repo / ".sagemem.json").write_text(json.dumps({"memory_dir": named}))
    for command in (("init",), ("list",), ("config",)):
        assert ".sagemem.json" in one_error(sagemem(home, repo, *command))
    assert not (repo / ".git" / "MEMORY.md").exists()
    assert not (repo / ".git" / "hooks" / "MEMORY.md").exists()


def test_a_repository_file_reaching_git_through_a_symlink_is_refused(
        home: Path, repo: Path) -> None:
    (repo / "docs").symlink_to(repo / ".git")
    (repo / ".sagemem.json").write_text('{"memory_dir": "docs/hooks"}')
    assert ".git" in one_error(sagemem(home, repo, "init"))
    assert not (repo / ".git" / "hooks" / "MEMORY.md").exists()


def test_a_control_character_in_the_users_map_is_one_error_line(home: Path, repo: Path
                                                                ) -> None:
    path = home / ".sage-mem" / "projects.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"version": 1, "projects": {
        str(repo): {"memory_dir": "/tmp/ok\u0000x"}}}))
    assert str(path) in one_error(sagemem(home, repo, "list"))


def test_a_symlink_to_the_global_folder_is_the_global_folder(home: Path, repo: Path,
                                                            tmp_path: Path) -> None:
    global_dir = home / ".sage-mem" / "global"
    global_dir.mkdir(parents=True)
    link = tmp_path / "glink"
    link.symlink_to(global_dir)
    env = {"SAGE_MEM_GLOBAL_DIR": str(global_dir)}
    assert "global layer" in one_error(sagemem(home, repo, "scope", "use", str(link), env=env))
    path = home / ".sage-mem" / "projects.json"
    assert not path.exists()
    path.write_text(json.dumps({"version": 1, "projects": {str(repo): {"memory_dir": str(link)}}}))
    assert "global layer" in one_error(sagemem(home, repo, "init", env=env))
    assert list(global_dir.iterdir()) == []


def test_a_repository_file_added_to_a_used_project_keeps_every_folders_state_apart(
        home: Path, repo: Path) -> None:
    assert sagemem(home, repo, "init").returncode == 0
    assert sagemem(home, repo, *NEW_PETS).returncode == 0
    states = set()
    for named in ("mem", "mem2", None):
        if named is None:
            (repo / ".sagemem.json").unlink()
        else:
            (repo / ".sagemem.json").write_text(json.dumps({"memory_dir": named}))
            assert sagemem(home, repo, "init").returncode == 0
        done = sagemem(home, repo, "list")
        assert done.returncode == 0, done.stderr
        assert ("pets" in done.stdout) is (named is None)
        states.add(folder(home, repo)["state_dir"])
    assert len(states) == 3
    assert all(str(home / ".sage-mem" / "projects" / slug(repo)) in state for state in states)


def test_a_clash_sagemem_chose_does_not_blame_options_nobody_passed(
        home: Path, repo: Path, tmp_path: Path) -> None:
    (repo / ".sagemem.json").write_text('{"memory_dir": "mem"}')
    state = Path(folder(home, repo)["state_dir"])  # type: ignore[arg-type]
    state.mkdir(parents=True)
    (state / "folder.json").write_text(json.dumps({"version": 1, "folder": str(tmp_path / "x")}))
    error = one_error(sagemem(home, repo, "list"))
    assert "belongs to memory folder" in error and "--state-dir" not in error
    assert "SAGE_MEM_STATE_DIR" not in error
    assert "--state-dir" in str(WrongFolder(state, tmp_path / "x", repo / "mem"))


def test_on_with_repo_says_memory_stays_off_while_the_users_map_says_off(
        home: Path, repo: Path) -> None:
    assert sagemem(home, repo, "scope", "off").returncode == 0
    done = sagemem(home, repo, "scope", "on", "--repo")
    assert done.returncode == 0, done.stderr
    assert f"memory is still off for {repo}: the user project map" in done.stdout
    assert "sagemem scope on changes it" in done.stdout
    assert not (repo / ".sagemem.json").exists()  # never left holding {}
    assert "memory is on" in sagemem(home, repo, "scope", "on").stdout
    done = sagemem(home, repo, "scope", "off", "--repo")
    assert f"memory is off for {repo}" in done.stdout
    assert "memory is on" in sagemem(home, repo, "scope", "on").stdout
    done = sagemem(home, repo, "scope", "off", "--repo")
    assert "memory is still on" in done.stdout and "sagemem scope off" in done.stdout


def test_on_with_repo_removes_the_repository_file_it_empties(home: Path, repo: Path) -> None:
    assert sagemem(home, repo, "scope", "off", "--repo").returncode == 0
    done = sagemem(home, repo, "scope", "on", "--repo")
    assert "removed" in done.stdout and "memory is on" in done.stdout
    assert not (repo / ".sagemem.json").exists()


def test_the_users_on_outvoting_the_repositorys_off_is_named_as_the_rule(
        home: Path, repo: Path) -> None:
    sagemem(home, repo, "scope", "off", "--repo")
    sagemem(home, repo, "scope", "on")
    chosen = folder(home, repo)
    assert chosen["rule"] == "user project map" and chosen["memory"] == "on"
    assert chosen["file"] == str(home / ".sage-mem" / "projects.json")
    assert chosen["memory_dir"] == str(home / ".sage-mem" / "projects" / slug(repo) / "memory")
    assert "rule        user project map" in sagemem(home, repo, "scope").stdout


def test_a_relative_key_in_the_users_map_is_named_as_the_key(home: Path, repo: Path) -> None:
    path = home / ".sage-mem" / "projects.json"
    path.parent.mkdir()
    path.write_text('{"version": 1, "projects": {"rel/path": {"memory": "off"}}}')
    error = one_error(sagemem(home, repo, "list"))
    assert "key 'rel/path' must be a project root's absolute path" in error
    assert "must map to" not in error


def test_use_refuses_a_folder_that_does_not_exist_or_is_a_file(
        home: Path, repo: Path, tmp_path: Path) -> None:
    error = one_error(sagemem(home, repo, "scope", "use", str(tmp_path / "nonexist")))
    assert "does not exist" in error and f"sagemem init {tmp_path / 'nonexist'}" in error
    (tmp_path / "afile").write_text("x")
    assert "is not a folder" in one_error(sagemem(home, repo, "scope", "use",
                                                  str(tmp_path / "afile")))
    assert not (home / ".sage-mem" / "projects.json").exists()


def test_a_repository_through_a_symlink_is_the_same_project(home: Path, repo: Path,
                                                           tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(repo)
    # a worktree whose .git file names the repository by the symlinked path (a process's
    # own working directory is always its real path; git's files need not be)
    git("worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature", cwd=repo)
    (tmp_path / "feature" / ".git").write_text(f"gitdir: {link}/.git/worktrees/feature\n")
    by_link, by_path = folder(home, tmp_path / "feature"), folder(home, repo)
    assert by_link["project_root"] == str(repo) and by_link == by_path
    assert find_project(link / ".") == find_project(repo)
    assert sagemem(home, tmp_path / "feature", "scope", "off").returncode == 0
    assert "memory is off" in one_error(sagemem(home, repo, "list"))
