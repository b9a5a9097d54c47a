"""``sagemem install claude-code``: the JSON editor keeps every other byte, install is
idempotent, undo is byte for byte, and every refusal changes nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import one_line_error

from sagemem.claude_code import settings_file
from sagemem.claude_code.changes import apply_install, apply_undo
from sagemem.claude_code.install import (
    HOOK_EVENTS,
    Wiring,
    plan_install,
    plan_undo,
    targets,
)
from sagemem.claude_code.skill import shipped_skill
from sagemem.cli import base, main
from sagemem.errors import HostConfigError

UNRELATED = ('{\n'
             '    "model": "opus",\n'
             '    "permissions": {"allow": ["Bash(ls:*)"],   "deny": []},\n'
             '    "hooks": {\n'
             '        "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ]\n'
             '    },\n'
             '    "statusLine": {"type": "command", "command": "x"}\n'
             '}\n')


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME and a project (the cwd) of their own, and a memory folder."""
    home = tmp_path / "home"
    (tmp_path / "project").mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path / "project")
    monkeypatch.setattr(base, "interactive", lambda: False)
    monkeypatch.setenv("SAGE_MEM_DIR", str(tmp_path / "memory"))
    (tmp_path / "memory").mkdir()
    return home


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["install", "claude-code", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def settings(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / ".claude" / "settings.json").read_text())
    return data


def test_install_writes_every_hook_with_one_absolute_command(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--yes")
    assert code == 0 and "settings.json" in out
    hooks = settings(home)["hooks"]
    for event, matcher in HOOK_EVENTS:
        [group] = hooks[event]
        assert group.get("matcher") == matcher
        [hook] = group["hooks"]
        assert hook["command"].endswith(" hook claude-code") and hook["timeout"] == 10
        assert os.path.isabs(hook["command"].split()[0])
    assert settings(home)["env"] == {"SAGE_MEM_DIR": os.environ["SAGE_MEM_DIR"]}


def test_install_names_the_state_dir_only_when_given(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--state-dir", str(tmp_path / "state"), "install", "claude-code",
                 "--yes"]) == 0
    assert settings(home)["env"]["SAGE_MEM_STATE_DIR"] == str(tmp_path / "state")


def test_dry_run_prints_the_diff_and_writes_nothing(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--dry-run")
    assert code == 0 and "+++ " in out and '"UserPromptSubmit"' in out
    assert "nothing was written" in err
    assert list(home.iterdir()) == []


def test_install_twice_changes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--yes")
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    code, out, err = run(capsys, "--yes")
    assert code == 0 and out == "" and "nothing to change" in err
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


def test_install_keeps_every_unrelated_byte(home: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    run(capsys, "--yes")
    text = path.read_text()
    for line in UNRELATED.splitlines()[:3] + UNRELATED.splitlines()[-2:]:
        assert line in text  # untouched lines, spacing and all
    assert '        "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ],' \
        in text
    assert '\n        "UserPromptSubmit": [\n            {\n' in text  # the file's 4 spaces
    assert list(json.loads(text)) == ["model", "permissions", "hooks", "statusLine", "env"]


def test_undo_restores_the_file_byte_for_byte(home: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    run(capsys, "--yes")
    code, out, _ = run(capsys, "--undo", "--yes")
    assert code == 0 and "settings.json" in out
    assert path.read_text() == UNRELATED
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no skills/


def test_undo_removes_the_files_install_created(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--yes")
    run(capsys, "--undo", "--yes")
    assert [p for p in home.rglob("*") if p.is_file()] == []


def test_undo_after_the_host_changed_the_file_takes_out_only_our_entries(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    run(capsys, "--yes")
    changed = settings(home)
    changed["theme"] = "dark"  # Claude Code (or the user) wrote since
    path.write_text(json.dumps(changed, indent=4))
    run(capsys, "--undo", "--yes")
    after = settings(home)
    assert after["theme"] == "dark" and "env" not in after
    assert list(after["hooks"]) == ["Stop"]


def test_malformed_settings_are_refused_and_untouched(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {,}')
    code, out, err = run(capsys, "--yes")
    assert one_line_error(Result(code, out, err)) and "not valid JSON" in err
    assert path.read_text() == '{"hooks": {,}' and sorted(home.rglob("*")) == [
        path.parent, path]


def test_a_comment_is_refused_as_one(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  // mine\n  "model": "opus"\n}\n')
    code, out, err = run(capsys, "--yes")
    assert "comment at line 2" in one_line_error(Result(code, out, err))


def test_hooks_of_the_wrong_shape_are_refused(home: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": []}')
    code, out, err = run(capsys, "--yes")
    assert "hooks as a JSON array" in one_line_error(Result(code, out, err))


@pytest.mark.parametrize(("text", "named"), [
    ("[1, 2]", "holds a JSON array"), ("null", "holds a JSON null"),
    ('{"hooks": "x"}', "hooks as a JSON string"),
    ('{"hooks": {"PreToolUse": {}}}', "hooks.PreToolUse as a JSON object, not an array"),
    ('{"env": 3}', "env as a JSON number")])
def test_refusals_name_the_json_type_not_pythons(
        home: Path, capsys: pytest.CaptureFixture[str], text: str, named: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    code, out, err = run(capsys, "--yes")
    assert named in one_line_error(Result(code, out, err))
    assert path.read_text() == text


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_settings_are_a_clear_error(home: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    path.chmod(0o444)
    code, out, err = run(capsys, "--yes")
    assert "read-only" in one_line_error(Result(code, out, err))
    assert path.read_text() == UNRELATED
    assert not (path.parent / "settings.json.sagemem-backup").exists()


def test_read_only_refusal_leaves_no_backup(home: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    """The same as root, where chmod does not stop a write: the check reads the mode."""
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    path.chmod(0o444)
    code, _, err = run(capsys, "--yes")
    path.chmod(0o644)
    assert code == 1 and "read-only" in err and path.read_text() == UNRELATED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert not (path.parent / "settings.json.sagemem-backup").exists()



def test_a_symlinked_settings_file_is_edited_where_it_points(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Dotfiles managers (stow, chezmoi) link ~/.claude/settings.json into a repository:
    the link stays, the file it names is edited, and undo puts that file back."""
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(UNRELATED)
    link = home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert run(capsys, "--yes")[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "UserPromptSubmit" in settings(home)["hooks"]
    assert run(capsys, "--yes")[1] == ""  # a second install changes nothing
    assert run(capsys, "--undo", "--yes")[0] == 0
    assert link.is_symlink() and real.read_text() == UNRELATED


def test_a_file_changed_while_confirming_stops_install_before_any_write(
        home: Path) -> None:
    """Claude Code rewrites ~/.claude.json as it runs, and a terminal's confirm prompt can
    wait for minutes: every file is checked before the first is written."""
    claude_json = home / ".claude.json"
    claude_json.write_text('{"numStartups": 1}\n')
    where = targets("user", home=home, project=home)
    plan = plan_install(where, Wiring(("/bin/sagemem",), {"SAGE_MEM_DIR": "/m"}),
                        mcp=True, skill=True)
    claude_json.write_text('{"numStartups": 2}\n')  # Claude Code, meanwhile
    with pytest.raises(HostConfigError, match="changed while sagemem was editing it"):
        apply_install(plan.changes, where.records)
    assert sorted(p.name for p in home.rglob("*")) == [".claude.json"]


def test_a_file_changed_while_confirming_stops_undo_before_any_write(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    run(capsys, "--yes")
    installed = (home / ".claude" / "settings.json").read_bytes()
    where = targets("user", home=home, project=home)
    plan = plan_undo(where)
    (home / ".claude.json").write_text('{"numStartups": 2}\n')  # Claude Code, meanwhile
    with pytest.raises(HostConfigError, match="changed while sagemem was editing it"):
        apply_undo(plan.changes, plan.forget, where.records)
    assert (home / ".claude" / "settings.json").read_bytes() == installed

def test_off_a_terminal_a_change_needs_yes(home: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    code, _, err = run(capsys)
    assert code == 2 and "--yes is required" in err and list(home.iterdir()) == []


def test_the_mcp_server_is_written_only_with_the_extra_and_its_absence_said(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    code, _, err = run(capsys, "--yes")
    assert code == 0 and not (home / ".claude.json").exists()
    assert "note: MCP server not installed: the mcp extra is missing (pip install " \
        "'sagemem[mcp]', then install again)" in err  # said, not silently left out
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "mcp" else real(name, *a))
    run(capsys, "--yes")
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["sagemem"]
    assert server["args"][-1] == "mcp"
    assert server["env"] == {"SAGE_MEM_DIR": os.environ["SAGE_MEM_DIR"]}


def test_project_scope_writes_the_project_files(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    assert run(capsys, "--project", "--yes")[0] == 0
    project = Path.cwd()
    assert (project / ".claude" / "settings.json").is_file()
    assert "sagemem" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert (project / ".claude" / "skills" / "sagemem" / "SKILL.md").read_bytes() == \
        shipped_skill()
    assert list(home.iterdir()) == []



def test_installing_the_second_scope_warns_the_hook_would_run_twice(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--yes")[0] == 0
    code, _, err = run(capsys, "--project", "--yes")
    assert code == 0
    assert "holds sagemem's hooks too: every prompt would run the hook twice" in err
    assert "sagemem install claude-code --undo --user" in err

def test_a_hand_written_hook_in_the_other_scope_is_named_with_a_fix_that_removes_it(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Found by review 4: a user-scope hook written by hand (here a typo left after undo)
    # got "keep one scope (sagemem install claude-code --undo --user)", and that undo
    # takes out only what install wrote: the hook stayed, and so did the note.
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command",
                                         "command": "sagemem hook claude-cod"}]}]}}))
    code, _, err = run(capsys, "--project", "--yes")
    assert code == 0
    assert "--undo --user" not in err
    assert (f"note: {home / '.claude' / 'settings.json'} runs sagemem's hook too (written by "
            "hand): every prompt would run it twice; delete those entries (sagemem doctor "
            "names them)\n") in err


def test_project_and_user_exclude_each_other(home: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    code, out, err = run(capsys, "--project", "--user")
    assert (code, out) == (2, "")
    assert err == "error: --project and --user exclude each other; give one; see `sagemem --help`\n"
    assert not (home / ".claude" / "settings.json").exists()


def test_the_skill_is_installed_and_an_edited_copy_kept(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skill = home / ".claude" / "skills" / "sagemem" / "SKILL.md"
    run(capsys, "--yes")
    assert skill.read_bytes() == shipped_skill()
    skill.write_text("my own notes\n")
    code, _, err = run(capsys, "--yes")
    assert code == 0 and "left alone" in err and skill.read_text() == "my own notes\n"
    run(capsys, "--undo", "--yes")
    assert skill.read_text() == "my own notes\n"


def test_a_hand_written_sagemem_hook_is_left_as_it_is_and_named(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Install did not write it, so it is not install's to rewrite: ours goes beside it,
    and the note says where the old one is, for the person to remove."""
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "sagemem hook claude-code", "timeout": 10}]}]}}
    path.write_text(json.dumps(old, indent=2))
    _, _, err = run(capsys, "--yes")
    first, ours = settings(home)["hooks"]["UserPromptSubmit"]
    assert first == old["hooks"]["UserPromptSubmit"][0]
    assert os.path.isabs(ours["hooks"][0]["command"].split()[0])
    assert f"{path}: hooks.UserPromptSubmit[0].hooks[0] runs `sagemem hook claude-code`, " \
        "which install did not write: left as it is" in err
    run(capsys, "--undo", "--yes")
    assert json.loads(path.read_text()) == old


def test_the_shipped_skill_covers_the_mcp_tools() -> None:
    text = shipped_skill().decode()
    for tool in ("search_memory", "read_memory", "write_memory", "set_memory_fields",
                 "create_memory", "archive_memory", "list_memories", "list_conflicts",
                 "record_use", "audit"):
        assert f"`{tool}(" in text


# -- the editor itself -------------------------------------------------------------------

@pytest.mark.parametrize("text", ["{}", "{ }", '{"a": 1}', '{\n\t"a": [1, 2]\n}\n',
                                  UNRELATED, '\ufeff{"a": {}}'])
def test_an_added_member_is_the_only_change(text: str) -> None:
    new = settings_file.set_member(text, ("env",), "K", "v")
    assert json.loads(new.removeprefix("\ufeff")) == {
        **json.loads(text.removeprefix("\ufeff")), "env": {"K": "v"}}
    if len(json.loads(text.removeprefix("\ufeff"))):
        assert settings_file.remove_member(new, (), "env") == text


def test_a_one_line_file_stays_on_one_line() -> None:
    new = settings_file.set_member('{"model": "opus"}', ("hooks",), "Stop", [])
    assert new == '{"model": "opus", "hooks": {"Stop": []}}'


def test_plan_for_a_new_file_is_plain_two_space_json(tmp_path: Path) -> None:
    where = targets("user", home=tmp_path, project=tmp_path)
    plan = plan_install(where, Wiring(("/bin/sagemem",), {"SAGE_MEM_DIR": "/m"}),
                        mcp=False, skill=False)
    [change] = plan.changes
    assert change.before is None and change.after is not None
    assert change.after.startswith(b'{\n  "hooks": {\n')


class Result:
    """The shape ``one_line_error`` reads."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


# -- through the real CLI, in a subprocess with a throwaway HOME (issue 20, item 1) -------

SHARED_GROUP = ('{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "Write|Edit",\n'
                '        "hooks": [\n          {"type": "command", "command": '
                '"/usr/local/bin/prettier-check"},\n          {"type": "command", "command": '
                '"sagemem hook claude-code"}\n        ]\n      }\n    ],\n'
                '    "UserPromptSubmit": [\n      {"hooks": [{"type": "command", "command": '
                '"/opt/othertool/bin/othertool hook claude-code"}]}\n    ]\n  }\n}\n')


def cli(tmp: Path, *args: str, cwd: Path | None = None, path: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``sagemem install claude-code ARGS`` as a user runs it: HOME and the project of
    their own under ``tmp``, the memory folder ``tmp/project/memory``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    env.update(HOME=str(tmp / "home"), SAGE_MEM_DIR=str(tmp / "project" / "memory"))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "sagemem", "install", "claude-code", *args],
                          cwd=cwd or tmp / "project", env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """A throwaway HOME and a project holding its memory folder."""
    (tmp_path / "home").mkdir()
    (tmp_path / "project" / "memory").mkdir(parents=True)
    return tmp_path


def user_settings(machine: Path) -> Path:
    return machine / "home" / ".claude" / "settings.json"


def test_install_keeps_every_hook_it_did_not_write(machine: Path) -> None:
    """A group shared with prettier-check, and another tool whose command also ends in
    ``hook claude-code``: both survive install, and undo gives the file back."""
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_text(SHARED_GROUP)
    done = cli(machine, "--yes")
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    shared, ours = data["hooks"]["PreToolUse"]
    assert shared == json.loads(SHARED_GROUP)["hooks"]["PreToolUse"][0]  # prettier kept
    assert ours["matcher"] == "Write|Edit|MultiEdit|Bash" and len(ours["hooks"]) == 1
    other, _ = data["hooks"]["UserPromptSubmit"]
    assert other["hooks"][0]["command"] == "/opt/othertool/bin/othertool hook claude-code"
    assert "hooks.PreToolUse[0].hooks[1] runs `sagemem hook claude-code`" in done.stderr
    assert cli(machine, "--undo", "--yes").returncode == 0
    assert path.read_text() == SHARED_GROUP


def test_undo_of_an_edited_file_takes_out_only_the_hooks_install_wrote(machine: Path) -> None:
    """After Claude Code (or the user) changed the file, undo cannot put the backup back:
    it removes exactly install's hook objects and keeps every other hook and the edit."""
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_text(SHARED_GROUP)
    assert cli(machine, "--yes").returncode == 0
    edited = json.loads(path.read_text())
    edited["theme"] = "dark"
    path.write_text(json.dumps(edited, indent=2) + "\n")
    done = cli(machine, "--undo", "--yes")
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text()) == {**json.loads(SHARED_GROUP), "theme": "dark"}
    assert cli(machine, "--undo", "--yes").stdout == ""  # nothing of ours is left


def test_a_crlf_settings_file_keeps_crlf_line_endings(machine: Path) -> None:
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_bytes(UNRELATED.replace("\n", "\r\n").encode())
    assert cli(machine, "--yes").returncode == 0
    raw = path.read_bytes()
    assert b"UserPromptSubmit" in raw and raw.count(b"\n") == raw.count(b"\r\n")
    assert cli(machine, "--undo", "--yes").returncode == 0
    assert path.read_bytes() == UNRELATED.replace("\n", "\r\n").encode()


def test_undo_removes_the_folders_install_created(machine: Path) -> None:
    claude = machine / "home" / ".claude"
    claude.mkdir()
    (claude / "keep.txt").write_text("mine\n")
    assert cli(machine, "--yes").returncode == 0
    assert (claude / "skills" / "sagemem" / "SKILL.md").is_file()
    assert cli(machine, "--undo", "--yes").returncode == 0
    assert sorted(p.name for p in claude.iterdir()) == ["keep.txt"]  # no empty skills/
    assert cli(machine, "--project", "--yes").returncode == 0
    assert cli(machine, "--project", "--undo", "--yes").returncode == 0
    assert not (machine / "project" / ".claude").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_project_install_leaves_nothing_for_git_but_claude_codes_files(machine: Path) -> None:
    """The backups and records are this machine's: git never sees them."""
    project = machine / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert cli(machine, "--project", "--yes").returncode == 0
    listed = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    untracked = sorted(line[3:] for line in listed.splitlines())
    assert [p for p in untracked if not p.startswith("memory/")] == sorted(
        [".claude/settings.json", ".claude/skills/sagemem/SKILL.md"]
        + ([".mcp.json"] if importlib.util.find_spec("mcp") else []))


def sagemem_on_path(machine: Path) -> Path:
    """A folder whose ``sagemem`` is this test's: what `pipx install sagemem` gives."""
    folder = machine / "bin"
    folder.mkdir()
    script = folder / "sagemem"
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sagemem \"$@\"\n")
    script.chmod(0o755)
    return folder


def test_a_project_install_names_no_path_of_this_machine(machine: Path) -> None:
    """Teams commit .claude/settings.json and .mcp.json: the hook runs `sagemem` from PATH
    with the folder under $CLAUDE_PROJECT_DIR, and it works from any directory."""
    project = machine / "project"
    bin_dir = str(sagemem_on_path(machine))
    done = cli(machine, "--project", "--yes", path=f"{bin_dir}:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    for name in (".claude/settings.json", ".mcp.json"):
        if (project / name).exists():
            assert str(machine) not in (project / name).read_text(), name
    hook = json.loads((project / ".claude/settings.json").read_text())
    [group] = hook["hooks"]["UserPromptSubmit"]
    command = group["hooks"][0]["command"]
    assert command == 'sagemem --dir "$CLAUDE_PROJECT_DIR"/memory hook claude-code'
    (project / "memory" / "user_cat.md").write_text(
        "---\nname: Cat\ndescription: the cat is called Miso\ntype: user\n---\n\n"
        "The cat is called Miso.\n")
    payload = json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit",
                          "prompt": "what is my cat called?", "cwd": "/"})
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(machine / "home"),
           "CLAUDE_PROJECT_DIR": str(project), **hook["env"]}
    ran = subprocess.run(["sh", "-c", command], input=payload, capture_output=True,
                         text=True, env=env, cwd="/", timeout=60)
    assert "Miso" in ran.stdout, ran


def test_a_project_install_off_path_says_the_command_is_this_machines(machine: Path) -> None:
    done = cli(machine, "--project", "--yes", path="/usr/bin:/bin")
    assert done.returncode == 0 and "sagemem is not on PATH" in done.stderr


def test_installing_again_brings_an_older_installs_matcher_up_to_date(machine: Path) -> None:
    """An install from before the Bash guard wrote PreToolUse's group for the file tools
    alone: installing again widens that group's matcher in place, and undo still gives
    the untouched file back byte for byte."""
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_text(SHARED_GROUP)
    assert cli(machine, "--yes").returncode == 0
    installed = path.read_text()
    older = installed.replace('"Write|Edit|MultiEdit|Bash"', '"Write|Edit|MultiEdit"')
    assert older != installed
    path.write_text(older)
    done = cli(machine, "--yes")
    assert done.returncode == 0, done.stderr
    assert path.read_text() == installed
    assert cli(machine, "--undo", "--yes").returncode == 0
    assert path.read_text() == SHARED_GROUP


def test_a_matcher_the_user_edited_is_not_widened_by_installing_again(machine: Path
                                                                      ) -> None:
    path = user_settings(machine)
    path.parent.mkdir()
    assert cli(machine, "--yes").returncode == 0
    edited = path.read_text().replace('"Write|Edit|MultiEdit|Bash"', '"Write|Edit"')
    path.write_text(edited)
    assert cli(machine, "--yes").returncode == 0
    assert path.read_text() == edited


def test_undo_of_an_older_install_takes_out_only_the_groups_it_wrote(machine: Path) -> None:
    """An install from before hook records kept its record beside the file and wrote one
    group of its own per event: undo recognises exactly that shape, nothing looser."""
    path = user_settings(machine)
    path.parent.mkdir()
    ours = {"type": "command", "command": "/old/venv/bin/sagemem hook claude-code",
            "timeout": 10}
    data = json.loads(SHARED_GROUP)
    data["hooks"]["UserPromptSubmit"].append({"hooks": [ours]})
    data["hooks"]["PreToolUse"].append({"matcher": "Write|Edit|MultiEdit", "hooks": [ours]})
    data["theme"] = "dark"  # changed since: the backup cannot simply come back
    path.write_text(json.dumps(data, indent=2))
    (path.parent / "settings.json.sagemem-installed").write_text(
        '{"version": 1, "created": false, "sha256": "0"}\n')
    (path.parent / "settings.json.sagemem-backup").write_text(SHARED_GROUP)
    done = cli(machine, "--undo", "--yes")
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text()) == {**json.loads(SHARED_GROUP), "theme": "dark"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_later_install_replaces_only_its_own_hook_objects(tmp_path: Path) -> None:
    """sagemem moved (a new venv): the recorded objects get the new command in place; the
    hand-written one beside them, and prettier-check, stay exactly as they were."""
    where = targets("user", home=tmp_path, project=tmp_path)
    where.settings.parent.mkdir(parents=True)
    where.settings.write_text(SHARED_GROUP)
    for command in ("/old/bin/sagemem", "/new/bin/sagemem"):
        plan = plan_install(where, Wiring((command,), {"SAGE_MEM_DIR": "/m"}),
                            mcp=False, skill=False)
        apply_install(plan.changes, where.records)
    data = json.loads(where.settings.read_text())
    shared, ours = data["hooks"]["PreToolUse"]
    assert shared == json.loads(SHARED_GROUP)["hooks"]["PreToolUse"][0]
    assert ours["hooks"] == [{"type": "command", "command": "/new/bin/sagemem hook claude-code",
                              "timeout": 10}]
    assert "/old/bin" not in where.settings.read_text()


def test_a_symlink_in_place_of_the_records_folder_is_refused(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(UNRELATED)
    (tmp_path / "elsewhere").mkdir()
    (home / ".claude" / "sagemem-install").symlink_to(tmp_path / "elsewhere")
    code, out, err = run(capsys, "--yes")
    assert "sagemem-install is a symlink" in one_line_error(Result(code, out, err))
    assert path.read_text() == UNRELATED and list((tmp_path / "elsewhere").iterdir()) == []


def test_a_project_install_in_the_home_is_refused(machine: Path) -> None:
    """There the project's .claude/settings.json is the user's, read in every project:
    its $CLAUDE_PROJECT_DIR-relative folder would name a folder of whichever project
    Claude Code runs in."""
    done = cli(machine, "--project", "--yes", cwd=machine / "home")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"error: {user_settings(machine)} is your user settings, read in "
                           "every project (the current directory is your home): a "
                           "project's hooks there would look for the memory folder under "
                           "$CLAUDE_PROJECT_DIR in every other project; run install "
                           "--project in the project's folder, or install --user; nothing "
                           "was changed\n")
    assert list((machine / "home").iterdir()) == []


def test_a_null_hooks_or_env_is_replaced_not_given_a_second_member(machine: Path) -> None:
    """``"hooks": null`` got a second ``"hooks"`` member beside it: a file that only
    parsers taking the last duplicate read as meant."""
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_text('{"hooks": null, "env": null}\n')
    assert cli(machine, "--yes").returncode == 0
    text = path.read_text()
    keys = json.loads(text, object_pairs_hook=lambda pairs: [k for k, _ in pairs])
    assert keys == ["hooks", "env"]
    assert json.loads(text)["env"] == {"SAGE_MEM_DIR": str(machine / "project" / "memory")}
    assert cli(machine, "--undo", "--yes").returncode == 0
    assert path.read_text() == '{"hooks": null, "env": null}\n'


def test_an_undo_dry_run_with_nothing_to_undo_keeps_the_backup(machine: Path) -> None:
    """The hooks already taken out by hand: a dry run still writes (and drops) nothing —
    the backup of the original file among them."""
    path = user_settings(machine)
    path.parent.mkdir()
    path.write_text('{"model": "opus"}\n')
    assert cli(machine, "--yes", "--no-skill").returncode == 0
    path.write_text('{"model": "opus"}\n')  # sagemem's hooks and env removed by hand
    (machine / "home" / ".claude.json").unlink()
    records = machine / "home" / ".claude" / "sagemem-install"
    before = sorted(p.name for p in records.iterdir())
    done = cli(machine, "--undo", "--dry-run")
    assert done.returncode == 0 and "nothing to undo" in done.stderr
    assert sorted(p.name for p in records.iterdir()) == before
    assert (records / "settings.json.sagemem-backup").read_text() == '{"model": "opus"}\n'


def test_undo_runs_where_a_file_stands_in_a_folders_place(machine: Path) -> None:
    """``skills/sagemem`` a file: install leaves the skill out, and undo still takes the
    rest out (the look for an old backup inside that "folder" stopped every undo)."""
    path = user_settings(machine)
    (path.parent / "skills").mkdir(parents=True)
    (path.parent / "skills" / "sagemem").write_text("mine")
    path.write_text('{"model": "opus"}\n')
    assert cli(machine, "--yes").returncode == 0
    done = cli(machine, "--undo", "--yes")
    assert done.returncode == 0, done.stderr
    assert path.read_text() == '{"model": "opus"}\n'
    assert (path.parent / "skills" / "sagemem").read_text() == "mine"


def test_install_says_when_settings_local_json_runs_the_hook_too(machine: Path) -> None:
    local = machine / "project" / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
                     '"command": "sagemem hook claude-code"}]}]}}\n')
    done = cli(machine, "--yes")
    assert done.returncode == 0, done.stderr
    assert (f"note: {local} runs sagemem's hook too (written by hand): every prompt would "
            "run it twice; delete those entries (sagemem doctor names them)") in done.stderr
    assert local.read_text().count("sagemem hook claude-code") == 1  # left as it is
