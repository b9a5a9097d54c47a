"""``log``, ``show NAME --history`` and ``revert`` from the shell (``cli/history.py``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sagemem.cli import base as cli
from sagemem.store import MemoryStore
from sagemem.writes import changelog
from tests.cli_run import Run, one_line_error, store_runner

TEXT = "---\nname: A\ndescription: first\nmetadata:\n  type: project\n---\nbody a\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory index\n\n- [A](project_a.md) — first\n")
    (memory / "project_a.md").write_text(TEXT)
    return MemoryStore(memory, tmp_path / "state")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)


def write(run: Run, text: str, *args: str) -> str:
    revision = json.loads(run("show", "project_a", "--json").out)["revision"]
    result = run("write", "project_a", "--from", "-", "--expect", revision, *args, stdin=text)
    assert result.code == 0, result
    return str(json.loads(run("show", "project_a", "--json").out)["revision"])


def test_log_lists_changes_newest_first_one_line_each(run: Run) -> None:
    write(run, TEXT + "two\n", "--reason", "add two")
    assert run("new", "--type", "user", "--name", "Tea", "--description", "tea").code == 0
    lines = run("log").out.splitlines()
    assert [line.split()[2:4] for line in lines] == [["new", "user_tea.md"],
                                                     ["write", "project_a.md"]]
    assert lines[1].endswith("+4 B +1 lines  cli  add two")


def test_log_name_filters_and_json_has_every_field(run: Run) -> None:
    write(run, TEXT + "two\n")
    run("new", "--type", "user", "--name", "Tea", "--description", "tea")
    data = json.loads(run("log", "project_a", "--json").out)
    assert [e["file"] for e in data["entries"]] == ["project_a.md"]
    assert set(data["entries"][0]) == {"time", "file", "op", "writer", "reason", "before",
                                       "after", "bytes", "lines", "to"}
    assert data["skipped"] == 0


def test_log_since_and_limit(run: Run, store: MemoryStore) -> None:
    write(run, TEXT + "1\n")
    write(run, TEXT + "2\n")
    assert len(json.loads(run("log", "--limit", "1", "--json").out)["entries"]) == 1
    assert json.loads(run("log", "--since", "2999-01-01", "--json").out)["entries"] == []
    assert len(json.loads(run("log", "--since", "1h", "--json").out)["entries"]) == 2
    assert "--since" in one_line_error(run("log", "--since", "soon"), 2)


def test_log_fits_80_columns_and_shows_control_characters(run: Run) -> None:
    write(run, TEXT + "x\n", "--reason", "a reason \x1b[31m long enough to need cutting " * 3)
    head, reason = run("log").out.splitlines()  # a long reason takes a line of its own
    assert len(head) <= 80 and len(reason) <= 80 and reason.startswith("    a reason")
    assert reason.endswith("…") and "\x1b" not in head + reason


def test_a_short_reason_stays_on_the_line_of_its_change(run: Run) -> None:
    write(run, TEXT + "x\n", "--reason", "typo")
    [line] = run("log").out.splitlines()
    assert line.endswith("  typo") and len(line) <= 80


def test_log_warns_about_a_torn_line(run: Run, store: MemoryStore) -> None:
    write(run, TEXT + "x\n")
    with open(store.state_dir / changelog.LOG_FILE, "ab") as log:
        log.write(b"{torn")
    result = run("log")
    assert result.code == 0 and len(result.out.splitlines()) == 1
    assert "1 damaged line" in result.err


def test_show_history_lists_versions_and_marks_the_current(run: Run) -> None:
    assert run("snapshot", "create").code == 0
    current = write(run, TEXT + "two\n")
    lines = run("show", "project_a", "--history").out.splitlines()
    assert lines[0].startswith(f"* {current[:12]}") and "current" in lines[0]
    assert "kept" in lines[1] and "snapshot" in run("show", "project_a", "--history").out
    data = json.loads(run("show", "project_a", "--history", "--json").out)
    assert [v["current"] for v in data["versions"]] == [True, False]
    assert data["file"] == "project_a.md"


def test_revert_restores_the_exact_bytes_and_logs_it(run: Run, store: MemoryStore) -> None:
    write(run, "---\n---\nan agent's bad rewrite\n")
    result = run("revert", "project_a", "--yes", "--reason", "undo the agent")
    assert result.code == 0 and result.out.startswith("reverted  project_a.md")
    assert (store.directory / "project_a.md").read_bytes() == TEXT.encode()
    assert json.loads(run("log", "--json").out)["entries"][0]["op"] == "revert"


def test_revert_to_a_chosen_revision(run: Run, store: MemoryStore) -> None:
    write(run, TEXT + "two\n")
    write(run, TEXT + "three\n")
    original = hashlib.sha256(TEXT.encode()).hexdigest()
    assert run("revert", "project_a", "--to", original[:8], "--yes").code == 0
    assert (store.directory / "project_a.md").read_text() == TEXT


def test_revert_needs_yes_off_a_terminal(run: Run, store: MemoryStore) -> None:
    write(run, "---\n---\nbad\n")
    assert "--yes" in one_line_error(run("revert", "project_a"), 2)
    assert (store.directory / "project_a.md").read_text() == "---\n---\nbad\n"


def test_revert_at_a_terminal_asks_first(run: Run, store: MemoryStore,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "interactive", lambda: True)
    write(run, "---\n---\nbad\n")
    result = run("revert", "project_a", stdin="n\n")
    assert result.code == 1 and "cancelled" in result.err
    assert (store.directory / "project_a.md").read_text() == "---\n---\nbad\n"


def test_revert_to_a_revision_nothing_holds_is_one_line_naming_history(run: Run) -> None:
    error = one_line_error(run("revert", "project_a", "--to", "deadbeef00", "--yes"))
    assert "sagemem show project_a --history" in error


def test_revert_of_a_file_changed_meanwhile_is_refused_with_a_conflict(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.writes import versions

    write(run, "---\n---\nbad\n")
    real = versions.load

    def editor_saves_meanwhile(state_dir: Path, revision: str) -> bytes | None:
        (store.directory / "project_a.md").write_text("the editor's save\n")
        return real(state_dir, revision)

    monkeypatch.setattr(versions, "load", editor_saves_meanwhile)
    error = one_line_error(run("revert", "project_a", "--yes"))
    assert "conflict" in error
    assert (store.directory / "project_a.md").read_text() == "the editor's save\n"
