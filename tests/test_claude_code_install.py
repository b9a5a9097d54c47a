"""``sagemem install claude-code``: the JSON editor keeps every other byte, install is
idempotent, undo is byte for byte, and every refusal changes nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
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
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json", "skills"]


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
        apply_install(plan.changes)
    assert sorted(p.name for p in home.rglob("*")) == [".claude.json"]


def test_a_file_changed_while_confirming_stops_undo_before_any_write(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    run(capsys, "--yes")
    installed = (home / ".claude" / "settings.json").read_bytes()
    plan = plan_undo(targets("user", home=home, project=home))
    (home / ".claude.json").write_text('{"numStartups": 2}\n')  # Claude Code, meanwhile
    with pytest.raises(HostConfigError, match="changed while sagemem was editing it"):
        apply_undo(plan.changes, plan.forget)
    assert (home / ".claude" / "settings.json").read_bytes() == installed

def test_off_a_terminal_a_change_needs_yes(home: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    code, _, err = run(capsys)
    assert code == 2 and "--yes is required" in err and list(home.iterdir()) == []


def test_the_mcp_server_is_written_only_with_the_extra(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    run(capsys, "--yes")
    assert not (home / ".claude.json").exists()
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


def test_an_old_hand_written_hook_is_brought_up_to_date_in_place(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "sagemem hook claude-code", "timeout": 10}]}]}}
    path.write_text(json.dumps(old, indent=2))
    run(capsys, "--yes")
    [group] = settings(home)["hooks"]["UserPromptSubmit"]
    assert os.path.isabs(group["hooks"][0]["command"].split()[0])


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
