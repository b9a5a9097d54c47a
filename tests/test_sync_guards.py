"""``sagemem sync`` in a code project: only the memory folder is committed and pushed,
whatever its name, and a sync that cannot keep to that stops with one error.

Each test reproduces a reviewer's finding through real git (a bare remote, clones in
tmp_path): a folder name git read as a pattern (``m*``, ``notes[old]``), the user's
unpushed code commit pushed along, a conflicted file taken as resolved because it held
no markers, the journal position moved past a commit a hook refused."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from git_clones import ALPHA, Clone, _clone, git_env, two_clones
from test_sync import conflicted, new_memory, one_error, synced


@dataclass(frozen=True)
class Project(Clone):
    """A code project's clone whose memory folder is ``folder``."""

    folder: str = "memory"

    @property
    def mem(self) -> Path:
        return self.top / self.folder


def code_project(tmp_path: Path, folder: str = "memory") -> Project:
    """A pushed ``main.py`` in a clone of a bare remote, and ``sagemem init`` run for
    ``folder`` in it."""
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare",
                    str(tmp_path / "remote.git")], env=env, check=True)
    plain = _clone(tmp_path, "one", env)
    project = Project(plain.top, env, folder)
    (project.top / "main.py").write_text("print('v1')\n")
    project.git("add", "main.py")
    project.git("commit", "-q", "-m", "code")
    project.git("push", "-q", "origin", "main")
    assert project.sagemem("init").returncode == 0
    return project


def remote_files(project: Project) -> list[str]:
    project.git("fetch", "-q", "origin")
    return project.git("ls-tree", "-r", "--name-only", "origin/main").stdout.splitlines()


def head_files(project: Project) -> list[str]:
    return project.git("show", "--name-only", "--format=", "HEAD").stdout.split()


# -- 1. the folder's name is a path, never a pattern ---------------------------------------

def test_a_folder_named_like_a_pattern_commits_only_itself(tmp_path: Path) -> None:
    """``.sagemem.json`` naming ``m*``: main.py's edit and mnotes.txt stay out."""
    project = code_project(tmp_path, "m*")
    (project.top / ".sagemem.json").write_text(json.dumps({"memory_dir": "m*"}))
    (project.top / "main.py").write_text("print('v2, unfinished')\n")
    (project.top / "mnotes.txt").write_text("my notes\n")

    def sagemem(*args: str) -> subprocess.CompletedProcess[str]:  # the folder from the file
        return subprocess.run([sys.executable, "-m", "sagemem", *args], cwd=project.top,
                              env=project.env, text=True, capture_output=True, check=False)

    assert sagemem("init").returncode == 0
    assert sagemem("new", "--type", "user", "--name", "Pets", "--description", "pets",
                   "--body", "A cat.").returncode == 0
    done = sagemem("sync")
    assert done.returncode == 0, done.stderr
    assert head_files(project) == ["m*/MEMORY.md", "m*/user_pets.md"]
    assert "mnotes.txt" not in remote_files(project)
    assert project.git("show", "origin/main:main.py").stdout == "print('v1')\n"
    status = project.git("status", "--porcelain").stdout
    assert " M main.py" in status and "?? mnotes.txt" in status  # put back, as left


def test_a_folder_with_brackets_commits_only_itself(tmp_path: Path) -> None:
    """``notes[old]`` as a pattern is ``notes`` then one of o, l, d: ``notesd`` stays out."""
    project = code_project(tmp_path, "notes[old]")
    (project.top / "notesd").write_text("not a memory\n")
    new_memory(project, "Pets")
    synced(project)
    assert head_files(project) == ["notes[old]/MEMORY.md", "notes[old]/user_pets.md"]
    assert "?? notesd" in project.git("status", "--porcelain").stdout
    new_memory(project, "Cats")
    assert "would commit" in synced(project, "--dry-run").stdout
    synced(project)
    assert "notes[old]/user_cats.md" in remote_files(project)


def test_a_pathspec_setting_in_the_environment_does_not_change_the_folder(
        tmp_path: Path) -> None:
    """GIT_GLOB_PATHSPECS or GIT_LITERAL_PATHSPECS in the user's shell: the same commit."""
    project = code_project(tmp_path, "m*")
    (project.top / "mnotes.txt").write_text("my notes\n")
    new_memory(project, "Pets")
    globbing = Project(project.top, {**project.env, "GIT_GLOB_PATHSPECS": "1"}, "m*")
    synced(globbing)
    assert head_files(project) == ["m*/MEMORY.md", "m*/user_pets.md"]
    new_memory(project, "Cats")
    literal = Project(project.top, {**project.env, "GIT_LITERAL_PATHSPECS": "1"}, "m*")
    synced(literal)
    assert head_files(project) == ["m*/MEMORY.md", "m*/user_cats.md"]


# -- 2. only memory commits are pushed; local merges are not flattened ----------------------

def wip_commit(project: Project) -> str:
    (project.top / "main.py").write_text("print('v2, broken')\n")
    project.git("commit", "-q", "-am", "WIP: do not push")
    return project.git("rev-parse", "--short", "HEAD").stdout.strip()


def test_a_local_code_commit_is_never_pushed(tmp_path: Path) -> None:
    project = code_project(tmp_path)
    short = wip_commit(project)
    new_memory(project, "Pets")
    err = one_error(project.sagemem("sync"))
    assert f"{short} WIP: do not push" in err and "--no-push" in err and "git push" in err
    assert "kept" in err  # the memory commit is made and stays local
    assert head_files(project) == ["memory/MEMORY.md", "memory/user_pets.md"]
    assert remote_files(project) == ["main.py"]
    assert project.git("show", "origin/main:main.py").stdout == "print('v1')\n"
    assert "nothing to commit" in synced(project, "--no-push").stdout


def test_dry_run_names_the_commits_a_sync_would_not_push(tmp_path: Path) -> None:
    project = code_project(tmp_path)
    short = wip_commit(project)
    new_memory(project, "Pets")
    done = synced(project, "--dry-run")
    assert "would commit" in done.stdout and "would push" not in done.stdout
    assert f"{short} WIP: do not push" in done.stderr
    report = json.loads(synced(project, "--dry-run", "--json").stdout)
    assert report["held"] == [f"{short} WIP: do not push"] and report["pushed"] == 0


def test_many_code_commits_are_named_three_and_counted(tmp_path: Path) -> None:
    project = code_project(tmp_path)
    for n in range(5):
        (project.top / "main.py").write_text(f"print({n})\n")
        project.git("commit", "-q", "-am", f"step {n}")
    err = one_error(project.sagemem("sync"))
    assert "step 4" in err and "step 2" in err and "step 1" not in err and "5 commits" in err


def test_commits_of_the_memory_folder_alone_are_pushed(tmp_path: Path) -> None:
    """A memory edit committed by hand (not by sync) travels with the next sync."""
    project = code_project(tmp_path)
    new_memory(project, "Pets")
    project.git("add", "-A", "memory")
    project.git("commit", "-q", "-m", "my own memory commit")
    new_memory(project, "Cats")
    assert "pushed 2 commits" in synced(project).stdout


def test_a_local_merge_commit_is_not_flattened_by_the_rebase(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    new_memory(one, "Cats")
    synced(one)
    two.git("checkout", "-q", "-b", "side")
    two.write("beta.md", two.read("beta.md") + "side line\n")
    two.commit("side work")
    two.git("checkout", "-q", "main")
    two.git("merge", "-q", "--no-ff", "-m", "Merge branch side", "side")
    merge = two.git("rev-parse", "HEAD").stdout
    err = one_error(two.sagemem("sync"))
    assert "Merge branch side" in err and "git pull --rebase=merges" in err
    assert two.git("rev-parse", "HEAD^2").stdout  # the merge is still there
    assert two.git("rev-parse", "HEAD").stdout == merge
    assert two.git("status", "--porcelain").stdout == ""


# -- 3. an unmerged file is resolved when it is staged, markers or not ----------------------

def test_continue_refuses_a_conflicted_file_until_it_is_staged(tmp_path: Path) -> None:
    """The driver can leave one side and no markers: git's unmerged entry decides."""
    one, two, _ = conflicted(tmp_path)
    two.write("alpha.md", ALPHA)  # no marker left, and neither side's change: not resolved
    err = one_error(two.sagemem("sync", "--continue"))
    assert "alpha.md" in err and "git add" in err
    assert two.git("ls-files", "-u", "--", "mem/alpha.md").stdout  # still unmerged
    two.write("alpha.md", ALPHA.replace("line three", "line three, says both"))
    two.git("add", "mem/alpha.md")
    done = two.sagemem("sync", "--continue", "--json")
    assert done.returncode == 0, done.stderr
    synced(one)
    assert "says both" in one.read("alpha.md")


def test_continue_refuses_a_staged_file_that_still_holds_markers(tmp_path: Path) -> None:
    _, two, _ = conflicted(tmp_path)
    two.git("add", "mem/alpha.md")  # staged as git left it, markers and all
    err = one_error(two.sagemem("sync", "--continue"))
    assert "alpha.md" in err and "<<<<<<<" in err


# -- 4. the journal position moves only with a commit ----------------------------------------

def test_a_commit_a_hook_refused_keeps_its_journal_lines_for_the_next(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    new_memory(one, "Cats")
    hook = one.top / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    err = one_error(one.sagemem("sync"))
    assert "commit" in err and "no commits today" in err
    hook.unlink()
    synced(one)
    text = one.git("log", "-1", "--format=%B").stdout
    assert text.startswith("sagemem sync: 1 change (1 created)") and "new user_cats.md" in text


# -- what sync refuses to start on -------------------------------------------------------------

def test_a_detached_head_is_one_error(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    one.git("checkout", "-q", "--detach")
    new_memory(one, "Cats")
    head = one.git("rev-parse", "HEAD").stdout
    err = one_error(one.sagemem("sync"))
    assert "detached" in err and "git switch" in err
    assert one.git("rev-parse", "HEAD").stdout == head


def test_a_rebase_sagemem_did_not_start_is_left_to_git(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    one.write("alpha.md", ALPHA.replace("line three", "line three, says one"))
    one.commit("one's edit")
    one.git("push", "-q", "origin", "main")
    two.write("alpha.md", ALPHA.replace("line three", "line three, says two"))
    two.commit("two's edit")
    two.git("fetch", "-q", "origin")
    assert two.git("rebase", "origin/main", check=False).returncode != 0  # the user's own
    for args in (("sync",), ("sync", "--continue"), ("sync", "--abort")):
        err = one_error(two.sagemem(*args))
        assert "git rebase --continue" in err and "git rebase --abort" in err, args
    assert two.git("rebase", "--abort").returncode == 0


def test_a_file_with_markers_is_never_committed(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    one.write("beta.md", one.read("beta.md") + "<<<<<<< HEAD\nmine\n=======\ntheirs\n"
                                                ">>>>>>> other\n")
    head = one.git("rev-parse", "HEAD").stdout
    err = one_error(one.sagemem("sync"))
    assert "beta.md" in err and "<<<<<<<" in err
    assert one.git("rev-parse", "HEAD").stdout == head
    assert one.git("diff", "--cached", "--name-only").stdout == ""  # nothing staged
    done = synced(one, "--dry-run")
    assert "beta.md" in done.stderr and "would commit" not in done.stdout
