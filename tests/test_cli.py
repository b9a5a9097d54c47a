"""The ``sagemem`` command: every command, its JSON shapes, and every error path.

Most tests call ``sagemem.cli.main(argv)`` — the function the console script runs, and
the one place errors become exit codes — and read stdout/stderr with capsys. A few run
``python -m sagemem`` in a real subprocess to prove the installed entry point behaves
the same. Every run passes ``--state-dir`` under tmp_path, so nothing is written outside.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sagemem.cli import app, main
from sagemem.cli.main import COMMANDS as LAZY_COMMANDS
from sagemem.store import MemoryStore

COMMANDS = ["init", "list", "show", "new", "remember", "write", "edit", "set", "search",
            "read", "eval", "index", "inject", "ledger", "use", "config", "rollback", "recover",
            "log", "revert",
            "archive", "restore", "purge", "lock", "unlock", "locks", "audit", "watch",
            "doctor", "mcp", "serve", "ui", "export", "merge-driver",
            "sync"]
SUBCOMMANDS = ["conflicts list", "conflicts show", "conflicts resolve", "conflicts delete",
               "conflicts contradict", "snapshot create", "snapshot list", "snapshot show",
               "snapshot diff", "install claude-code", "install git", "install cursor",
               "install vscode", "install codex", "install gemini", "hook claude-code",
               "hook gemini", "hook codex", "import claude-code",
               "import basic-memory", "import openclaw", "import mem0", "scope off",
               "scope on", "scope use"]
SUMMARY_KEYS = {
    "file", "name", "type", "description", "tags", "aliases", "baseline", "baselinePriority",
    "updated", "valid_at", "invalid_at", "superseded_by", "archived", "invalid", "size",
    "revision", "problems", "when",
}
SHOW_KEYS = SUMMARY_KEYS | {"version", "has_frontmatter", "body", "body_line"}
ERROR_KEYS = {"file", "archived", "error", "message"}
SETTING_KEYS = ["memory_dir", "state_dir", "max_session_bytes", "max_results", "max_chars",
                "max_baseline", "stale_days", "snapshot_keep", "idle_days_project",
                "idle_days_reference", "idle_days_feedback", "idle_days_user", "hook_budget_ms",
                "serve_idle_minutes",
                "soft_cap_memories", "hard_cap_memories", "soft_cap_body_bytes",
                "hard_cap_body_bytes", "dream_expired_days", "dream_max_loss_percent",
                "dream_keep_runs", "dream_auto_hours", "dream_auto_changes",
                "dream_auto_scan_minutes", "validity", "debug", "semantic", "transcripts",
                "task_id", "embedder", "session", "dream_llm_url", "dream_llm_model",
                "dream_auto_kinds", "global_dir", "claude_home"]
INDEX_TEXT = "# Memory index\n\n"

USER_PREFS = """\
---
name: Editor preferences
description: The user edits in Neovim and wants ruff formatting.
metadata:
  type: user
tags: [Editor, vim]
aliases: [which editor]
updated: 2026-01-02
---
Neovim with tmux.

Format with ruff.
"""
PROJECT_DEPLOY = """\
---
name: Deploy process
description: Main deploys to staging; production needs a tag.
metadata:
  type: project
tags: [deploy]
updated: 2026-02-03
---
Tag a release to deploy to production.
"""
PROJECT_RETIRED = """\
---
name: Old deploy
description: Manual SSH deploys, retired.
metadata:
  type: project
invalid_at: 2000-01-01
superseded_by: project_deploy.md
---
ssh and pray.
"""
REFERENCE_BROKEN = """\
---
name: Broken fields
description: A memory whose fields do not parse.
type: wat
baseline: maybe
---
Still a memory.
"""
REFERENCE_ARCHIVED = """\
---
name: Old dashboards
description: The dashboards before the move.
metadata:
  type: reference
---
grafana-old.internal
"""


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def isolated_cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No SAGE_MEM_* from the real environment, a fake HOME, an 80-column terminal."""
    for key in list(os.environ):
        if key.startswith("SAGE_MEM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SAGE_MEM_SEMANTIC", "off")  # expectations are lexical (conftest)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], state_dir: Path) -> Run:
    """Run ``sagemem --state-dir <tmp> [--dir DIR] ARGS…`` and capture its output."""

    def run(*args: str, directory: Path | None = None) -> Result:
        argv = ["--state-dir", str(state_dir)]
        if directory is not None:
            argv += ["--dir", str(directory)]
        code = main([*argv, *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """An initialised memory directory with no memories yet."""
    path = tmp_path / "memory"
    path.mkdir()
    (path / "MEMORY.md").write_text(INDEX_TEXT, encoding="utf-8")
    return path


@pytest.fixture
def memory_dir(empty_dir: Path) -> Path:
    """A few memories: two good ones, one invalid, one with broken fields, one archived."""
    files = {
        "user_prefs.md": USER_PREFS,
        "project_deploy.md": PROJECT_DEPLOY,
        "project_retired.md": PROJECT_RETIRED,
        "reference_broken.md": REFERENCE_BROKEN,
    }
    for name, text in files.items():
        (empty_dir / name).write_text(text, encoding="utf-8")
    (empty_dir / "archive").mkdir()
    (empty_dir / "archive" / "reference_dashboards.md").write_text(
        REFERENCE_ARCHIVED, encoding="utf-8")
    return empty_dir


def assert_one_line_error(result: Result, code: int) -> str:
    """The error contract: exit code, nothing on stdout, one ``error: …`` line on stderr."""
    assert result.code == code, result
    assert result.out == ""
    assert result.err.startswith("error: ")
    assert result.err.endswith("\n") and result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err
    return result.err


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def listed(result: Result) -> dict[str, dict[str, object]]:
    return {m["file"]: m for m in json.loads(result.out)["memories"]}


# -- help and usage ---------------------------------------------------------------------


def test_help_test_covers_every_registered_command() -> None:
    for module in set(LAZY_COMMANDS.values()):  # commands register when their module loads
        importlib.import_module(f"sagemem.cli.{module}")
    names = [c.name or getattr(c.callback, "__name__", "") for c in app.registered_commands]
    assert sorted(names) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(run: Run, command: str) -> None:
    result = run(command, "--help")
    assert result.code == 0
    assert result.out.startswith(f"Usage: sagemem {command}")
    assert result.err == ""


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(run: Run, command: str) -> None:
    result = run(*command.split(), "--help")
    assert result.code == 0
    assert result.out.startswith(f"Usage: sagemem {command}")


@pytest.mark.parametrize("command", ["", *COMMANDS, *SUBCOMMANDS])
def test_dash_h_is_help_on_every_command(run: Run, command: str) -> None:
    result = run(*command.split(), "-h")
    assert result.code == 0 and result.err == ""
    assert result.out.startswith(f"Usage: sagemem {command}".rstrip())
    assert "-h, --help" in result.out


@pytest.mark.parametrize("group", ["snapshot", "conflicts", "session", "task", "hook",
                                   "install"])
def test_a_group_without_a_subcommand_prints_its_help_and_exits_2(run: Run, group: str) -> None:
    result = run(group)
    assert result.code == 2 and result.err == ""
    assert result.out.startswith(f"Usage: sagemem {group}") and "\nCommands:\n" in result.out


def test_top_level_help_lists_every_command(run: Run) -> None:
    result = run("--help")
    assert result.code == 0
    for command in COMMANDS:
        assert f"  {command} " in result.out


def test_no_arguments_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("Usage: sagemem")
    assert "Commands:" in captured.out
    assert captured.err == ""


@pytest.mark.parametrize("args", [
    pytest.param(["frobnicate"], id="unknown-command"),
    pytest.param(["list", "--frob"], id="unknown-option"),
    pytest.param(["--frob", "list"], id="unknown-global-option"),
    pytest.param(["show"], id="missing-argument"),
    pytest.param(["new", "--type", "user", "--name", "x"], id="missing-option"),
    pytest.param(["list", "--type", "bogus"], id="bad-list-type"),
    pytest.param(["new", "--type", "bogus", "--name", "x", "--description", "d"],
                 id="bad-new-type"),
    pytest.param(["new", "--type", "user", "--name", "x", "--description", ""],
                 id="empty-description"),
    pytest.param(["new", "--type", "user", "--name", "x", "--description", "  \n "],
                 id="blank-description"),
])
def test_usage_error_exits_2_with_one_line(run: Run, memory_dir: Path, args: list[str]) -> None:
    before = snapshot(memory_dir)
    assert_one_line_error(run(*args, directory=memory_dir), 2)
    assert snapshot(memory_dir) == before


def test_bad_type_error_names_the_allowed_types(run: Run, memory_dir: Path) -> None:
    err = assert_one_line_error(run("list", "--type", "bogus", directory=memory_dir), 2)
    assert "--type" in err and "user, feedback, project, reference" in err


# -- errors that are not usage mistakes -------------------------------------------------


@pytest.mark.parametrize("args", [
    pytest.param(["list"], id="list"),
    pytest.param(["show", "user_prefs"], id="show"),
    pytest.param(["new", "--type", "user", "--name", "x", "--description", "d"], id="new"),
    pytest.param(["snapshot", "list"], id="snapshot-list"),
    pytest.param(["snapshot", "show", "x"], id="snapshot-show"),
    pytest.param(["snapshot", "diff", "x"], id="snapshot-diff"),
    pytest.param(["locks"], id="locks"),
])
def test_missing_memory_directory_exits_1_naming_it(
    run: Run, tmp_path: Path, args: list[str]
) -> None:
    missing = tmp_path / "no-such-dir"
    err = assert_one_line_error(run(*args, directory=missing), 1)
    assert str(missing) in err
    assert "sagemem init" in err
    assert not missing.exists()


@pytest.mark.parametrize("command", ["list", "config", "init"])
def test_malformed_settings_file_exits_1_naming_it(
    run: Run, memory_dir: Path, state_dir: Path, command: str
) -> None:
    state_dir.mkdir()
    (state_dir / "settings.json").write_text("{not json\n}", encoding="utf-8")
    err = assert_one_line_error(run(command, directory=memory_dir), 1)
    assert str(state_dir / "settings.json") in err


def test_unexpected_error_is_one_line_without_traceback(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_list(self: MemoryStore, **kwargs: object) -> None:
        raise RuntimeError("boom\non two lines")

    monkeypatch.setattr(MemoryStore, "list", broken_list)
    err = assert_one_line_error(run("list", directory=memory_dir), 1)
    assert "internal error" in err and "RuntimeError" in err and "boom on two lines" in err
    assert "SAGE_MEM_DEBUG=1" in err


def test_debug_shows_the_traceback_of_an_unexpected_error(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_list(self: MemoryStore, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(MemoryStore, "list", broken_list)
    monkeypatch.setenv("SAGE_MEM_DEBUG", "1")
    result = run("list", directory=memory_dir)
    assert result.code == 1
    assert "Traceback" in result.err
    assert result.err.splitlines()[-1].startswith("error: internal error")


def test_interrupt_exits_130_with_one_line_error(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(self: MemoryStore, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(MemoryStore, "list", interrupted)
    assert "interrupted" in assert_one_line_error(run("list", directory=memory_dir), 130)


def test_unreadable_memory_directory_is_reported_as_a_read_failure(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(path: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    # chmod cannot deny root (tests may run as root), so the scandir call is refused.
    monkeypatch.setattr("sagemem.files.folder.os.scandir", denied)
    err = assert_one_line_error(run("list", directory=memory_dir), 1)
    assert "could not write" not in err
    assert f"cannot read {memory_dir}" in err


# -- init -------------------------------------------------------------------------------


def test_init_creates_directory_index_and_state_dir(
    run: Run, tmp_path: Path, state_dir: Path
) -> None:
    target = tmp_path / "fresh"
    result = run("init", str(target))
    assert result.code == 0, result
    assert target.is_dir() and state_dir.is_dir()
    assert (target / "MEMORY.md").read_text(encoding="utf-8").startswith("# Memory index")
    assert result.out.splitlines() == [f"created  {target}", f"created  {state_dir}",
                                       f"created  {target / 'MEMORY.md'}"]
    assert result.err.splitlines()[:2] == [f"next: export SAGE_MEM_DIR={target}",
                                           f"      export SAGE_MEM_STATE_DIR={state_dir}"]
    assert " ".join(result.err.split()[5:]) == ("(or pass --dir/--state-dir before the "
                                                "command); sagemem's own state lives in "
                                                f"{state_dir}")


def test_init_with_the_default_state_dir_names_only_the_memory_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "fresh"
    assert main(["init", str(target)]) == 0
    assert capsys.readouterr().err.startswith(f"next: export SAGE_MEM_DIR={target}\n  (or pass")


def test_init_twice_reports_what_existed_and_changes_nothing(
    run: Run, tmp_path: Path, state_dir: Path
) -> None:
    target = tmp_path / "fresh"
    run("init", str(target))
    (target / "MEMORY.md").write_text("# My own index\n- [x](x.md)\n", encoding="utf-8")
    before = snapshot(tmp_path)
    result = run("init", str(target))
    assert result.code == 0
    assert snapshot(tmp_path) == before
    assert "created" not in result.out
    assert result.out.splitlines() == [
        f"exists   {path} (left as it was)" for path in (target, state_dir, target / "MEMORY.md")]


def test_init_uses_the_dir_option_when_no_directory_is_given(
    run: Run, tmp_path: Path
) -> None:
    target = tmp_path / "via-option"
    assert run("init", directory=target).code == 0
    assert (target / "MEMORY.md").is_file()


def test_init_json_lists_created_and_existed(run: Run, empty_dir: Path, state_dir: Path) -> None:
    result = run("init", str(empty_dir), "--json")
    assert result.code == 0
    assert json.loads(result.out) == {
        "version": 1,
        "created": [str(state_dir)],
        "existed": [str(empty_dir), str(empty_dir / "MEMORY.md")],
        "updated": [],
        "warnings": [],
    }


def test_init_reports_an_appended_gitignore_as_updated(
    empty_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ignore, argv = empty_dir / ".gitignore", ["--state-dir", str(empty_dir / ".sage-mem"),
                                              "init", str(empty_dir)]
    ignore.write_text("*.swp\n")
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["updated"] == [{"path": str(ignore),
                                                               "added": "/.sage-mem/"}]
    ignore.write_text("*.swp\n")
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"updated  {ignore} (added /.sage-mem/)" in lines
    assert f"created  {ignore}" not in lines


def test_init_on_a_file_exits_1(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_bytes(b"not a directory")
    assert_one_line_error(run("init", str(target)), 1)
    assert target.read_bytes() == b"not a directory"


# -- list -------------------------------------------------------------------------------


def test_list_text_shows_every_memory_with_its_marks(run: Run, memory_dir: Path) -> None:
    result = run("list", directory=memory_dir)
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0].split() == ["FILE", "TYPE", "UPDATED", "SIZE"]
    text = result.out
    for name in ("user_prefs.md", "project_deploy.md", "project_retired.md",
                 "reference_broken.md", "reference_dashboards.md"):
        assert name in text
    assert "    The user edits in Neovim and wants ruff formatting." in lines
    assert "    (invalid) Manual SSH deploys, retired." in lines
    assert "    (problems) A memory whose fields do not parse." in lines
    assert "    (archived) The dashboards before the move." in lines
    assert all(len(line) <= 80 for line in lines)


def test_list_in_a_wide_terminal_puts_each_memory_on_one_line(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    lines = run("list", directory=memory_dir).out.splitlines()
    assert lines[0].split()[-1] == "DESCRIPTION"
    assert len(lines) == 1 + 5
    deploy = next(line for line in lines if line.startswith("project_deploy.md"))
    assert deploy.split()[1:3] == ["project", "2026-02-03"]
    assert deploy.endswith("Main deploys to staging; production needs a tag.")


def test_list_of_an_empty_directory_prints_only_the_header(run: Run, empty_dir: Path) -> None:
    result = run("list", directory=empty_dir)
    assert result.code == 0
    assert len(result.out.splitlines()) == 1


def test_list_json_has_the_documented_shape(run: Run, memory_dir: Path) -> None:
    data = json.loads(run("list", "--json", directory=memory_dir).out)
    assert set(data) == {"version", "memories", "errors"}
    assert data["version"] == 1
    assert data["errors"] == []
    assert all(set(m) == SUMMARY_KEYS | {"layer"} for m in data["memories"])
    prefs = next(m for m in data["memories"] if m["file"] == "user_prefs.md")
    assert prefs == {
        "file": "user_prefs.md",
        "name": "Editor preferences",
        "type": "user",
        "description": "The user edits in Neovim and wants ruff formatting.",
        "tags": ["Editor", "vim"],
        "aliases": ["which editor"],
        "baseline": False,
        "baselinePriority": 0,
        "updated": "2026-01-02",
        "valid_at": None,
        "invalid_at": None,
        "superseded_by": None,
        "when": None,
        "archived": False,
        "invalid": False,
        "size": len(USER_PREFS.encode("utf-8")),
        "revision": prefs["revision"],
        "layer": "project",
        "problems": 0,
    }
    assert len(prefs["revision"]) == 64


def test_list_json_marks_invalid_archived_and_problem_memories(
    run: Run, memory_dir: Path
) -> None:
    memories = listed(run("list", "--json", directory=memory_dir))
    retired = memories["project_retired.md"]
    assert (retired["invalid"], retired["invalid_at"]) == (True, "2000-01-01")
    assert retired["superseded_by"] == "project_deploy.md"
    assert memories["reference_dashboards.md"]["archived"] is True
    assert memories["reference_broken.md"]["problems"] == 2
    assert memories["project_deploy.md"]["invalid"] is False


def test_memory_invalid_in_the_future_is_not_invalid_yet(run: Run, empty_dir: Path) -> None:
    (empty_dir / "project_soon.md").write_text(
        "---\ndescription: soon\ninvalid_at: 2999-01-01\n---\n", encoding="utf-8")
    assert listed(run("list", "--json", directory=empty_dir))["project_soon.md"]["invalid"] is False


@pytest.mark.parametrize(("args", "expected"), [
    pytest.param(["--type", "project"], {"project_deploy.md", "project_retired.md"}, id="type"),
    pytest.param(["--type", "feedback"], set(), id="type-none"),
    pytest.param(["--tag", "deploy"], {"project_deploy.md"}, id="tag"),
    pytest.param(["--tag", "EDITOR"], {"user_prefs.md"}, id="tag-any-case"),
    pytest.param(["--tag", "vi"], set(), id="tag-whole-word"),
    pytest.param(["--type", "user", "--tag", "deploy"], set(), id="type-and-tag"),
    pytest.param(["--active"], {"user_prefs.md", "project_deploy.md", "reference_broken.md"},
                 id="active"),
])
def test_list_filters(run: Run, memory_dir: Path, args: list[str], expected: set[str]) -> None:
    result = run("list", *args, "--json", directory=memory_dir)
    assert result.code == 0
    assert set(listed(result)) == expected


def test_list_filters_apply_to_text_output(run: Run, memory_dir: Path) -> None:
    out = run("list", "--type", "user", directory=memory_dir).out
    assert "user_prefs.md" in out
    assert "project_deploy.md" not in out


def test_list_warns_about_a_non_utf8_file_and_lists_the_others(
    run: Run, memory_dir: Path
) -> None:
    (memory_dir / "user_latin1.md").write_bytes(b"---\ndescription: caf\xe9\n---\n")
    result = run("list", directory=memory_dir)
    assert result.code == 0
    assert result.err.count("\n") == 1
    assert result.err.startswith("warning: ") and "user_latin1.md" in result.err
    assert "UTF-8" in result.err
    assert "user_prefs.md" in result.out and "user_latin1.md" not in result.out


def test_list_json_reports_an_unreadable_file_in_errors(run: Run, memory_dir: Path) -> None:
    (memory_dir / "archive" / "user_latin1.md").write_bytes(b"caf\xe9")
    result = run("list", "--json", directory=memory_dir)
    data = json.loads(result.out)
    assert result.code == 0
    assert len(data["memories"]) == 5
    assert data["errors"] == [{
        "file": "user_latin1.md",
        "archived": True,
        "error": "UnreadableFile",
        "message": data["errors"][0]["message"],
    }]
    assert set(data["errors"][0]) == ERROR_KEYS
    assert "user_latin1.md" in data["errors"][0]["message"]
    assert result.err.startswith("warning: ")


def test_list_warns_about_a_symlink_and_lists_the_others(run: Run, memory_dir: Path) -> None:
    (memory_dir / "user_link.md").symlink_to(memory_dir / "user_prefs.md")
    result = run("list", "--json", directory=memory_dir)
    assert result.code == 0
    assert "user_link.md" not in listed(result)
    assert "user_prefs.md" in listed(result)
    assert "symlink" in result.err


def test_list_skips_the_index_and_hidden_files(run: Run, memory_dir: Path) -> None:
    (memory_dir / ".user_hidden.md").write_text("---\ndescription: x\n---\n", encoding="utf-8")
    (memory_dir / "notes.txt").write_text("not markdown", encoding="utf-8")
    assert set(listed(run("list", "--json", directory=memory_dir))).isdisjoint(
        {"MEMORY.md", ".user_hidden.md", "notes.txt"})


# -- show -------------------------------------------------------------------------------


def test_show_text_has_fields_then_body(run: Run, memory_dir: Path) -> None:
    result = run("show", "user_prefs", directory=memory_dir)
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == "user_prefs.md"
    assert "name:             Editor preferences" in lines
    assert "type:             user" in lines
    assert "tags:             Editor, vim" in lines
    assert "--- body (from line 10) ---" in lines
    assert lines[-3:] == ["Neovim with tmux.", "", "Format with ruff."]


def test_two_memories_of_one_title_differ_by_their_when_in_show_and_list(
    run: Run, memory_dir: Path,
) -> None:
    for day in ("2026-12-08", "2026-12-15"):
        (memory_dir / f"project_standup_{day}.md").write_text(
            f"---\nname: Standup\ndescription: Standup\nwhen: {day}\n---\nnotes\n",
            encoding="utf-8")
    shown = run("show", "project_standup_2026-12-15", directory=memory_dir).out.splitlines()
    assert "when:             2026-12-15" in shown
    listed = run("list", directory=memory_dir).out
    assert "[when 2026-12-08] Standup" in listed and "[when 2026-12-15] Standup" in listed


BREAKS = "a\rb\x0bc\x0cd\x1ce\x85f\u2028g\u2029h"


def test_show_breaks_body_lines_only_where_the_file_does(run: Run, memory_dir: Path) -> None:
    (memory_dir / "user_breaks.md").write_text(
        f"---\ndescription: d\n---\n{BREAKS}\r\nnext\n", encoding="utf-8", newline="")
    shown = run("show", "user_breaks", directory=memory_dir).out.splitlines()
    visible = "a\\x0db\\x0bc\\x0cd\\x1ce\\x85f\\u2028g\\u2029h"
    assert shown[-2:] == [visible, "next"]
    assert run("read", "user_breaks", directory=memory_dir).out.splitlines()[-2:] == shown[-2:]


def test_show_accepts_the_name_with_md(run: Run, memory_dir: Path) -> None:
    assert run("show", "user_prefs.md", directory=memory_dir).out == run(
        "show", "user_prefs", directory=memory_dir).out


def test_show_json_has_problems_body_and_body_line(run: Run, memory_dir: Path) -> None:
    data = json.loads(run("show", "user_prefs", "--json", directory=memory_dir).out)
    assert set(data) == SHOW_KEYS
    assert data["problems"] == []
    assert data["has_frontmatter"] is True
    assert data["body_line"] == 10
    assert data["body"] == "Neovim with tmux.\n\nFormat with ruff.\n"


def test_show_lists_parse_problems_with_their_lines(run: Run, memory_dir: Path) -> None:
    text = run("show", "reference_broken", directory=memory_dir).out
    assert "problem: line 4: type: unknown type 'wat'; read as 'reference'" in text
    data = json.loads(run("show", "reference_broken", "--json", directory=memory_dir).out)
    assert [(p["field"], p["line"]) for p in data["problems"]] == [("type", 4), ("baseline", 5)]
    assert all(set(p) == {"field", "message", "line"} for p in data["problems"])
    assert data["type"] == "reference"


def test_show_of_a_file_without_frontmatter_says_defaults_apply(
    run: Run, empty_dir: Path
) -> None:
    (empty_dir / "plain.md").write_text("Just text.\n", encoding="utf-8")
    result = run("show", "plain", directory=empty_dir)
    assert "(no frontmatter: defaults apply)" in result.out
    assert json.loads(run("show", "plain", "--json", directory=empty_dir).out)[
        "has_frontmatter"] is False


def test_show_archived_memory_needs_archived(run: Run, memory_dir: Path) -> None:
    assert_one_line_error(run("show", "reference_dashboards", directory=memory_dir), 1)
    result = run("show", "reference_dashboards", "--archived", directory=memory_dir)
    assert result.code == 0
    assert result.out.splitlines()[0] == "reference_dashboards.md  (archived)"


def test_show_missing_memory_exits_1(run: Run, memory_dir: Path) -> None:
    err = assert_one_line_error(run("show", "nope", directory=memory_dir), 1)
    assert "nope.md" in err and str(memory_dir) in err


@pytest.mark.parametrize("name", ["MEMORY.md", "MEMORY", "memory.md", "session-log.md"])
def test_show_reserved_name_exits_1(run: Run, memory_dir: Path, name: str) -> None:
    assert "reserved" in assert_one_line_error(run("show", name, directory=memory_dir), 1)


def test_show_name_reserved_in_reserved_json_exits_1(
    run: Run, memory_dir: Path, state_dir: Path
) -> None:
    state_dir.mkdir()
    (state_dir / "reserved.json").write_text('["user_prefs.md"]', encoding="utf-8")
    assert "reserved" in assert_one_line_error(run("show", "user_prefs", directory=memory_dir), 1)


def test_show_symlink_exits_1(run: Run, memory_dir: Path) -> None:
    (memory_dir / "user_link.md").symlink_to(memory_dir / "user_prefs.md")
    assert "symlink" in assert_one_line_error(run("show", "user_link", directory=memory_dir), 1)


def test_show_symlink_to_a_file_outside_exits_1(
    run: Run, memory_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("TOP-SECRET-CONTENT", encoding="utf-8")
    (memory_dir / "user_outside.md").symlink_to(outside)
    err = assert_one_line_error(run("show", "user_outside", directory=memory_dir), 1)
    assert "TOP-SECRET-CONTENT" not in err


@pytest.mark.parametrize("name", ["../secret", "sub/user_prefs", ".hidden", ""])
def test_show_path_like_name_exits_1(run: Run, memory_dir: Path, name: str) -> None:
    assert "invalid memory name" in assert_one_line_error(
        run("show", name, directory=memory_dir), 1)


def test_show_non_utf8_memory_exits_1(run: Run, memory_dir: Path) -> None:
    (memory_dir / "user_latin1.md").write_bytes(b"caf\xe9")
    assert "UTF-8" in assert_one_line_error(run("show", "user_latin1", directory=memory_dir), 1)


# -- new --------------------------------------------------------------------------------


def test_new_writes_type_slug_file_and_indexes_it(run: Run, empty_dir: Path) -> None:
    result = run("new", "--type", "feedback", "--name", "Small Commits!",
                 "--description", "One logical change per commit.", directory=empty_dir)
    assert result.code == 0, result
    assert result.out.startswith("created  feedback_small_commits.md  (revision ")
    assert result.err == ""
    written = json.loads(run("show", "feedback_small_commits", "--json", directory=empty_dir).out)
    assert (written["name"], written["type"], written["description"]) == (
        "Small Commits!", "feedback", "One logical change per commit.")
    assert written["problems"] == []
    assert (empty_dir / "MEMORY.md").read_text(encoding="utf-8") == (
        INDEX_TEXT
        + "- [Small Commits!](feedback_small_commits.md) — One logical change per commit.\n")


def test_new_does_not_repeat_the_type_prefix(run: Run, empty_dir: Path) -> None:
    run("new", "--type", "user", "--name", "User timezone", "--description", "UTC+8",
        directory=empty_dir)
    assert (empty_dir / "user_timezone.md").is_file()


def test_new_with_tags_aliases_and_body(run: Run, empty_dir: Path) -> None:
    result = run("new", "--type", "project", "--name", "Release", "--description", "v2.3 plan",
                 "--tag", "release", "--tag", "v2", "--alias", "ship date",
                 "--body", "Freeze on the 8th.", "--json", directory=empty_dir)
    data = json.loads(result.out)
    assert set(data) == SHOW_KEYS | {"warnings", "cap_archived"}  # redactions, the caps
    assert data["file"] == "project_release.md"
    assert (data["tags"], data["aliases"]) == (["release", "v2"], ["ship date"])
    assert data["body"].strip() == "Freeze on the 8th."
    assert data["problems"] == []


def test_new_body_dash_reads_stdin(
    run: Run, empty_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin",
                        io.TextIOWrapper(io.BytesIO(b"From stdin.\n\nSecond paragraph.\n")))
    result = run("new", "--type", "user", "--name", "piped", "--description", "d",
                 "--body", "-", directory=empty_dir)
    assert result.code == 0
    text = (empty_dir / "user_piped.md").read_text(encoding="utf-8")
    assert text.endswith("---\n\nFrom stdin.\n\nSecond paragraph.\n")


def test_new_with_explicit_file_name(run: Run, empty_dir: Path) -> None:
    result = run("new", "--type", "reference", "--name", "Ports", "--description", "local ports",
                 "--file", "ports", directory=empty_dir)
    assert result.code == 0
    assert (empty_dir / "ports.md").is_file()
    assert "- [Ports](ports.md) — local ports" in (empty_dir / "MEMORY.md").read_text(
        encoding="utf-8")


@pytest.mark.parametrize("value", ["yes", "off", "12:30", "null", "2026-01-01"])
def test_new_keeps_yaml_lookalike_values_as_text(run: Run, empty_dir: Path, value: str) -> None:
    result = run("new", "--type", "user", "--name", value, "--description", value,
                 "--tag", value, "--file", "lookalike", "--json", directory=empty_dir)
    data = json.loads(result.out)
    assert (data["name"], data["description"], data["tags"]) == (value, value, [value])
    assert data["problems"] == []


def test_new_creates_the_index_when_it_is_missing(run: Run, empty_dir: Path) -> None:
    (empty_dir / "MEMORY.md").unlink()
    run("new", "--type", "user", "--name", "x", "--description", "d", directory=empty_dir)
    index = (empty_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert index.startswith("# Memory index")
    assert index.endswith("- [x](user_x.md) — d\n")


def test_new_keeps_the_rest_of_the_index_byte_for_byte(run: Run, empty_dir: Path) -> None:
    own = "# Mine\r\n\r\n- [Old](old.md) — kept\r\nno final newline"
    (empty_dir / "MEMORY.md").write_bytes(own.encode("utf-8"))
    run("new", "--type", "user", "--name", "x", "--description", "d", directory=empty_dir)
    assert (empty_dir / "MEMORY.md").read_bytes() == (
        own + "\r\n- [x](user_x.md) — d\r\n").encode("utf-8")


def test_new_refuses_to_overwrite(run: Run, memory_dir: Path) -> None:
    before = snapshot(memory_dir)
    err = assert_one_line_error(
        run("new", "--type", "user", "--name", "prefs", "--description", "other",
            directory=memory_dir), 1)
    assert "user_prefs.md" in err and "already exists" in err
    assert snapshot(memory_dir) == before


def test_new_refuses_to_overwrite_with_explicit_file(run: Run, memory_dir: Path) -> None:
    before = snapshot(memory_dir)
    assert_one_line_error(run("new", "--type", "user", "--name", "x", "--description", "d",
                              "--file", "project_deploy.md", directory=memory_dir), 1)
    assert snapshot(memory_dir) == before


@pytest.mark.parametrize(("extra", "fragment"), [
    pytest.param(["--file", "MEMORY.md"], "reserved", id="reserved-file"),
    pytest.param(["--file", "../escape.md"], "path separators", id="path-file"),
    pytest.param(["--name", "!!!"], "no usable file name", id="unsluggable-name"),
])
def test_new_with_an_unusable_file_name_exits_1(
    run: Run, memory_dir: Path, extra: list[str], fragment: str
) -> None:
    before = snapshot(memory_dir)
    args = ["new", "--type", "user", "--name", "x", "--description", "d", *extra]
    assert fragment in assert_one_line_error(run(*args, directory=memory_dir), 1)
    assert snapshot(memory_dir) == before
    assert not (memory_dir.parent / "escape.md").exists()


def test_new_refuses_a_symlinked_index_and_writes_nothing(
    run: Run, empty_dir: Path, tmp_path: Path
) -> None:
    real_index = tmp_path / "elsewhere.md"
    real_index.write_text(INDEX_TEXT, encoding="utf-8")
    (empty_dir / "MEMORY.md").unlink()
    (empty_dir / "MEMORY.md").symlink_to(real_index)
    assert_one_line_error(
        run("new", "--type", "user", "--name", "x", "--description", "d", directory=empty_dir), 1)
    assert not (empty_dir / "user_x.md").exists()
    assert real_index.read_text(encoding="utf-8") == INDEX_TEXT


# -- config -----------------------------------------------------------------------------


def test_config_text_shows_every_setting_and_its_source(
    run: Run, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAGE_MEM_MAX_RESULTS", "99")
    result = run("config", directory=memory_dir)
    assert result.code == 0 and result.err == ""
    rows = {line.split()[0]: line.split() for line in result.out.splitlines()[1:]}
    assert list(rows) == SETTING_KEYS
    assert rows["memory_dir"][1:] == ["option", str(memory_dir)]
    assert rows["max_results"][1:] == ["env", "30"]
    assert rows["max_chars"][1:] == ["default", "1500"]
    assert rows["validity"][1:] == ["default", "true"]
    assert rows["task_id"][1:] == ["default", "-"]


def test_config_json_has_value_source_and_env_per_setting(
    run: Run, memory_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_dir.mkdir()
    (state_dir / "settings.json").write_text('{"stale_days": 3}', encoding="utf-8")
    monkeypatch.setenv("SAGE_MEM_VALIDITY", "off")
    data = json.loads(run("config", "--json", directory=memory_dir).out)
    assert data["version"] == 1
    settings = data["settings"]
    assert list(settings) == SETTING_KEYS
    assert all(set(entry) == {"value", "source", "env"} for entry in settings.values())
    assert settings["stale_days"] == {"value": 3, "source": "settings",
                                      "env": "SAGE_MEM_STALE_DAYS"}
    assert settings["validity"] == {"value": False, "source": "env", "env": "SAGE_MEM_VALIDITY"}
    assert settings["state_dir"] == {"value": str(state_dir), "source": "option",
                                     "env": "SAGE_MEM_STATE_DIR"}
    assert settings["task_id"]["value"] is None


def test_config_works_before_the_memory_directory_exists(run: Run, tmp_path: Path) -> None:
    result = run("config", directory=tmp_path / "not-yet")
    assert result.code == 0
    assert not (tmp_path / "not-yet").exists()


def test_config_reads_sage_mem_dir_when_no_option_is_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAGE_MEM_DIR", str(tmp_path / "from-env"))
    assert main(["--state-dir", str(tmp_path / "state"), "config", "--json"]) == 0
    memory = json.loads(capsys.readouterr().out)["settings"]["memory_dir"]
    assert memory == {"value": str(tmp_path / "from-env"), "source": "env", "env": "SAGE_MEM_DIR"}


# -- real subprocesses ------------------------------------------------------------------


def sagemem(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sagemem`` with the (already SAGE_MEM_*-free) environment."""
    return subprocess.run([sys.executable, "-m", "sagemem", *args], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, encoding="utf-8", timeout=60,
                          check=False)


def test_subprocess_list_json(memory_dir: Path, state_dir: Path, tmp_path: Path) -> None:
    proc = sagemem("--dir", str(memory_dir), "--state-dir", str(state_dir), "list", "--json",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(json.loads(proc.stdout)["memories"]) == 5


def test_subprocess_error_exits_1_with_one_line(tmp_path: Path, state_dir: Path) -> None:
    proc = sagemem("--dir", str(tmp_path / "missing"), "--state-dir", str(state_dir), "list",
                   cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: memory directory ")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_subprocess_help_and_usage_error(tmp_path: Path) -> None:
    help_ = sagemem("--help", cwd=tmp_path)
    assert help_.returncode == 0
    assert help_.stdout.startswith("Usage: sagemem")
    usage = sagemem("frobnicate", cwd=tmp_path)
    assert usage.returncode == 2
    assert usage.stderr == "error: No such command 'frobnicate'; see `sagemem --help`\n"


# -- conveniences a first-time user expects ----------------------------------------------


def test_version_option_prints_the_version(run: Run) -> None:
    result = run("--version")
    assert result.code == 0 and result.out.startswith("sagemem ")


def test_type_option_ignores_case_like_frontmatter_does(run: Run, memory_dir: Path) -> None:
    result = run("list", "--type", "User", "--json", directory=memory_dir)
    assert result.code == 0
    assert {m["type"] for m in json.loads(result.out)["memories"]} == {"user"}


def test_show_of_an_archived_memory_says_to_use_archived(run: Run, memory_dir: Path) -> None:
    err = assert_one_line_error(run("show", "reference_dashboards", directory=memory_dir), 1)
    assert "--archived" in err


def test_filtered_list_still_warns_about_unreadable_files(run: Run, memory_dir: Path) -> None:
    (memory_dir / "user_binary.md").write_bytes(b"\xff\xfe")
    result = run("list", "--type", "user", directory=memory_dir)
    assert result.code == 0 and "user_binary.md" in result.err


def test_dir_pointing_at_a_file_says_it_is_not_a_directory(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "a_file"
    target.write_text("x")
    assert "is not a directory" in assert_one_line_error(run("list", directory=target), 1)


def test_config_warns_about_unknown_settings(run: Run, memory_dir: Path, state_dir: Path) -> None:
    state_dir.mkdir(exist_ok=True)
    (state_dir / "settings.json").write_text('{"max_resutls": 3}', encoding="utf-8")
    result = run("config", directory=memory_dir)
    assert result.code == 0 and "unknown setting 'max_resutls'" in result.err


def test_new_with_non_utf8_stdin_is_a_usage_error(
    run: Run, empty_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe bad")))
    result = run("new", "--type", "user", "--name", "x", "--description", "d", "--body", "-",
                 directory=empty_dir)
    assert "not UTF-8" in assert_one_line_error(result, 2)
    assert not (empty_dir / "user_x.md").exists()


def test_show_json_carries_the_version(run: Run, memory_dir: Path) -> None:
    result = run("show", "user_prefs", "--json", directory=memory_dir)
    assert json.loads(result.out)["version"] == 1


def test_human_output_fits_80_columns(run: Run, memory_dir: Path) -> None:
    for args in (["config"], ["show", "user_prefs"], ["list"]):
        out = run(*args, directory=memory_dir).out
        assert all(len(line) <= 80 for line in out.splitlines() if "/" not in line), args


@pytest.mark.parametrize("command", ["write", "set", "remember"])
def test_reason_help_says_the_change_log_keeps_it(run: Run, command: str) -> None:
    text = " ".join(run(command, "--help").out.split())
    assert "kept in the change log (sagemem log)" in text
