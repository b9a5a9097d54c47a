"""``snapshot create|list|show|diff`` and ``rollback`` from the shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.cli import base as cli
from sagemem.errors import WriteFailed
from sagemem.history import rollback_log
from sagemem.store import MemoryStore
from tests.cli_run import Run, one_line_error, store_runner


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory index\n\n")
    (memory / "project_a.md").write_text("---\nname: A\n---\nbody a\n")
    return MemoryStore(memory, tmp_path / "state")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)



def created_id(run: Run, *args: str) -> str:
    result = run("snapshot", "create", "--json", *args)
    assert result.code == 0, result
    return str(json.loads(result.out)["id"])


def test_create_json_prints_the_id_and_list_json_the_documented_fields(run: Run) -> None:
    snapshot_id = created_id(run, "--label", "before")
    listed = json.loads(run("snapshot", "list", "--json").out)
    assert [(s["id"], s["label"], s["kind"]) for s in listed] == [(snapshot_id, "before",
                                                                   "manual")]
    assert {"id", "created", "label", "kind", "file_count"} <= set(listed[0])


def test_create_dry_run_writes_nothing(run: Run, store: MemoryStore) -> None:
    result = run("snapshot", "create", "--dry-run", "--json")
    assert json.loads(result.out) == {"version": 1, "dry_run": True, "file_count": 2,
                                      "rotated": []}
    assert not (store.state_dir / "snapshots").exists()


def test_create_rotates_by_the_snapshot_keep_setting(run: Run, store: MemoryStore) -> None:
    store.state_dir.mkdir()
    (store.state_dir / "settings.json").write_text('{"snapshot_keep": 2}')
    ids = [created_id(run) for _ in range(3)]
    assert [s["id"] for s in json.loads(run("snapshot", "list", "--json").out)] == ids[1:]
    dry = json.loads(run("snapshot", "create", "--dry-run", "--json").out)
    assert dry["rotated"] == [ids[1]]
    created = json.loads(run("snapshot", "create", "--json").out)
    assert created["rotated"] == [ids[1]]
    text = run("snapshot", "create")
    assert f"rotated away 1 older snapshot(s) (snapshot_keep = 2): {ids[2]}" in text.out


@pytest.mark.parametrize("value", ["-5", "1001", "six"])
def test_create_refuses_an_illegal_snapshot_keep_and_rotates_nothing(
        run: Run, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    ids = [created_id(run) for _ in range(6)]
    monkeypatch.setenv("SAGE_MEM_SNAPSHOT_KEEP", value)
    for args in (("snapshot", "create"), ("snapshot", "create", "--dry-run")):
        result = run(*args)
        assert result.code == 1 and result.out == ""
        error = result.err.splitlines()[-1]  # after the warning every command prints
        assert error.startswith("error: SAGE_MEM_SNAPSHOT_KEEP") and repr(value) in error
        assert "from 0 to 1000" in error
    monkeypatch.delenv("SAGE_MEM_SNAPSHOT_KEEP")
    assert [s["id"] for s in json.loads(run("snapshot", "list", "--json").out)] == ids


def test_create_with_snapshot_keep_zero_keeps_every_snapshot(
        run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_SNAPSHOT_KEEP", "0")
    ids = [created_id(run) for _ in range(7)]
    created = json.loads(run("snapshot", "create", "--json").out)
    assert created["rotated"] == []
    listed = [s["id"] for s in json.loads(run("snapshot", "list", "--json").out)]
    assert listed == [*ids, created["id"]]


@pytest.mark.parametrize(("keep", "rotated"), [("1", 2), ("2", 1), ("0", 0)])
def test_create_dry_run_names_what_the_real_create_would_rotate(
        run: Run, monkeypatch: pytest.MonkeyPatch, keep: str, rotated: int) -> None:
    ids = [created_id(run) for _ in range(2)]
    monkeypatch.setenv("SAGE_MEM_SNAPSHOT_KEEP", keep)
    dry = json.loads(run("snapshot", "create", "--dry-run", "--json").out)
    assert dry["rotated"] == ids[:rotated]
    assert json.loads(run("snapshot", "create", "--json").out)["rotated"] == ids[:rotated]


def test_show_lists_files_and_what_differs_now(run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")
    (store.directory / "project_new.md").write_text("new\n")
    shown = json.loads(run("snapshot", "show", snapshot_id[:12], "--json").out)
    assert (shown["changed"], shown["added"], shown["removed"], shown["damaged"]) == (
        ["project_a.md"], ["project_new.md"], [], [])
    assert {f["name"] for f in shown["files"]} == {"MEMORY.md", "project_a.md"}
    text = run("snapshot", "show", snapshot_id).out
    assert "changed   project_a.md" in text and "added since   project_new.md" in text


def test_diff_prints_a_unified_diff(run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("---\nname: A\n---\nbody b\n")
    result = run("snapshot", "diff", snapshot_id, "project_a")
    assert result.code == 0 and "-body a\n+body b\n" in result.out
    assert json.loads(run("snapshot", "diff", snapshot_id, "--json").out)["diff"] == result.out


def test_diff_of_an_unchanged_file_says_no_differences(run: Run) -> None:
    snapshot_id = created_id(run)
    result = run("snapshot", "diff", snapshot_id, "project_a")
    assert (result.code, result.out) == (0, "no differences\n")
    assert run("snapshot", "diff", snapshot_id).out == "no differences\n"
    data = json.loads(run("snapshot", "diff", snapshot_id, "project_a", "--json").out)
    assert data["diff"] == ""


def test_diff_of_a_name_outside_the_memory_directory_is_a_one_line_error(
        run: Run, store: MemoryStore) -> None:
    (store.directory.parent / "outside.md").write_text("secret\n")
    snapshot_id = created_id(run)
    assert "secret" not in one_line_error(run("snapshot", "diff", snapshot_id, "../outside"))


def test_rollback_json_reports_and_undo_is_possible(run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")
    (store.directory / "project_new.md").write_text("new\n")
    dry = json.loads(run("rollback", snapshot_id, "--scope", "all", "--dry-run", "--json").out)
    assert dry["dry_run"] and dry["protection"] is None
    assert (store.directory / "project_a.md").read_text() == "changed\n"
    report = json.loads(run("rollback", snapshot_id, "--scope", "all", "--yes", "--json").out)
    assert (report["restored"], report["moved"]) == (["project_a.md"], ["project_new.md"])
    assert (dry["restored"], dry["moved"]) == (report["restored"], report["moved"])
    assert (store.archive_dir / "project_new.md").read_text() == "new\n"
    undo = run("rollback", report["protection"], "--scope", "all", "--yes")
    assert undo.code == 0 and "restored project_a.md" in undo.out
    assert (store.directory / "project_a.md").read_text() == "changed\n"


def test_list_shows_a_protection_snapshots_reason_where_it_has_no_label(
        run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run, "--label", "mine")
    (store.directory / "project_a.md").write_text("changed\n")
    protection = json.loads(run("rollback", snapshot_id, "--yes", "--json").out)["protection"]
    lines = run("snapshot", "list").out.splitlines()
    assert lines[0].startswith(snapshot_id) and lines[0].endswith("files  mine")
    assert lines[1].startswith(protection) and lines[1].endswith("files  before rollback to")
    assert lines[2] == f"    {snapshot_id}"  # wrapped: the row would be 93 columns


def test_a_failed_history_line_prints_the_report_then_one_error_line(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")

    def refuse(path: Path, line: bytes) -> None:
        raise WriteFailed(path, "disk full")

    monkeypatch.setattr(rollback_log, "append_line", refuse)
    result = run("rollback", snapshot_id, "--yes", "--json")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["restored"] == ["project_a.md"] and report["protection"]
    assert result.err.startswith("error: ") and result.err.count("\n") == 1
    assert "disk full" in result.err and "nothing was changed" not in result.err


def test_rollback_text_says_how_to_undo(run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_new.md").write_text("new\n")
    (store.directory / "project_a.md").write_text("changed\n")
    result = run("rollback", snapshot_id, "--yes")
    assert "left     project_new.md (added since" in result.out
    # with the options the run was given, so the line can be pasted as it is
    assert (f"undo: sagemem --dir {store.directory} --state-dir {store.state_dir} rollback "
            in result.out)


def test_a_rollback_that_met_a_newer_edit_exits_1_after_its_report(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.history import rollback

    snapshot_id = created_id(run)
    target = store.directory / "project_a.md"
    target.write_text("---\nname: A\n---\nedited once\n")
    real_apply = rollback.apply_rollback

    def edit_between_plan_and_apply(store_: MemoryStore, plan: rollback.RollbackPlan,
                                    writer: str = "library") -> rollback.RollbackReport:
        target.write_text("---\nname: A\n---\nedited again while asked\n")
        return real_apply(store_, plan, writer=writer)

    monkeypatch.setattr(rollback, "apply_rollback", edit_between_plan_and_apply)
    result = run("rollback", snapshot_id, "--yes")
    assert result.code == 1
    assert "skipped  project_a.md (conflict" in result.out
    assert result.err.startswith("error: rollback incomplete: 1 file could not be restored")
    assert target.read_text().endswith("edited again while asked\n")


def test_rollback_dry_run_summary_says_would(run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")
    result = run("rollback", snapshot_id, "--dry-run")
    assert result.code == 0 and "1 would be restored, 0 would be moved" in result.out


def test_rollback_asks_on_a_terminal_and_yes_skips_it(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")
    monkeypatch.setattr(cli, "interactive", lambda: True)
    monkeypatch.setattr("sys.stdin", _Answer("n\n"))
    refused = run("rollback", snapshot_id)
    assert refused.code == 1 and refused.err.endswith("cancelled\n")
    assert "error:" not in refused.err
    assert (store.directory / "project_a.md").read_text() == "changed\n"
    assert run("rollback", snapshot_id, "--yes").code == 0
    assert (store.directory / "project_a.md").read_text() == "---\nname: A\n---\nbody a\n"


def test_rollback_json_on_a_terminal_keeps_the_preview_and_question_off_stdout(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot_id = created_id(run)
    (store.directory / "project_a.md").write_text("changed\n")
    monkeypatch.setattr(cli, "interactive", lambda: True)
    monkeypatch.setattr("sys.stdin", _Answer("y\n"))
    result = run("rollback", snapshot_id, "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["restored"] == ["project_a.md"]
    assert "would roll back" in result.err and "roll back?" in result.err


class _Answer:
    def __init__(self, text: str) -> None:
        self.lines = iter(text.splitlines(keepends=True))

    def readline(self) -> str:
        return next(self.lines, "")

    def isatty(self) -> bool:
        return True


def test_unknown_id_and_bad_scope_are_one_line_errors(run: Run) -> None:
    assert "no snapshot nope" in one_line_error(run("snapshot", "show", "nope"))
    assert "no snapshot nope" in one_line_error(run("rollback", "nope"))
    created_id(run)
    one_line_error(run("rollback", "2", "--scope", "some"), code=2)


def test_a_damaged_snapshot_is_a_one_line_error_and_shown_as_damaged(
        run: Run, store: MemoryStore) -> None:
    snapshot_id = created_id(run)
    (store.state_dir / "snapshots" / snapshot_id / "project_a.md").write_text("rot\n")
    assert "is damaged" in one_line_error(run("rollback", snapshot_id, "--yes"))
    assert json.loads(run("snapshot", "show", snapshot_id, "--json").out)["damaged"] == [
        "project_a.md"]


def test_every_command_has_help(run: Run) -> None:
    for command in (["snapshot", "create"], ["snapshot", "list"], ["snapshot", "show"],
                    ["snapshot", "diff"], ["rollback"]):
        result = run(*command, "--help")
        assert result.code == 0 and "--json" in result.out


def test_snapshot_and_rollback_in_a_real_process(store: MemoryStore) -> None:
    env = {**os.environ, "SAGE_MEM_DIR": str(store.directory),
           "SAGE_MEM_STATE_DIR": str(store.state_dir)}

    def sagemem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sagemem", *args], env=env, text=True,
                              capture_output=True, stdin=subprocess.DEVNULL, check=False)

    created = sagemem("snapshot", "create", "--json")
    assert created.returncode == 0, created.stderr
    (store.directory / "project_a.md").write_text("changed\n")
    rolled = sagemem("rollback", json.loads(created.stdout)["id"], "--yes", "--json")
    assert rolled.returncode == 0, rolled.stderr
    assert json.loads(rolled.stdout)["restored"] == ["project_a.md"]


def test_a_large_directory_gets_a_progress_bar_on_stderr(
        run: Run, store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(cli.PROGRESS_MIN_FILES):
        (store.directory / f"project_{n}.md").write_text(f"memory {n}\n")
    result = run("snapshot", "create", "--json")
    assert result.code == 0 and "snapshot" in result.err
    assert json.loads(result.out)["file_count"] == cli.PROGRESS_MIN_FILES + 2
