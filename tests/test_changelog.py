"""The change log (``writes/changelog.py``), kept versions (``writes/versions.py``) and
one memory's history and revert (``history/revisions.py``)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagemem.audit.fix import fix
from sagemem.errors import StaleRevision, VersionNotHeld
from sagemem.history.archive import archive_memory, purge_memory, restore_memory
from sagemem.history.rename import rename_memory
from sagemem.history.revisions import revert, versions_of
from sagemem.history.rollback import rollback
from sagemem.history.snapshots import create_snapshot
from sagemem.store import MemoryStore
from sagemem.writes import changelog, versions
from sagemem.writes.changelog import Entry, read

TEXT = "---\nname: A\ndescription: first\nmetadata:\n  type: project\n---\nbody a\n"
SECRET = "hunter2-password-in-the-body"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory index\n\n- [A](project_a.md) — first\n")
    (memory / "project_a.md").write_text(TEXT)
    return MemoryStore(memory, tmp_path / "state")


def entries(store: MemoryStore, name: str | None = None) -> list[Entry]:
    return list(read(store.state_dir, name).entries)


def rewrite(store: MemoryStore, text: str, **kwargs: object) -> str:
    memory = store.get("project_a")
    return store.write("project_a", text, memory.revision, **kwargs).revision  # type: ignore[arg-type]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- one line per operation ------------------------------------------------------------------

def test_a_write_logs_file_op_writer_reason_revisions_and_counts(store: MemoryStore) -> None:
    after = rewrite(store, TEXT + "two\nthree\n", reason="add two lines", writer="mcp")
    [line] = entries(store)
    assert (line.file, line.op, line.writer, line.reason) == ("project_a.md", "write", "mcp",
                                                              "add two lines")
    assert (line.before, line.after, line.bytes, line.lines) == (sha(TEXT), after, 10, 2)


def test_a_write_without_a_reason_logs_not_given(store: MemoryStore) -> None:
    rewrite(store, TEXT + "x\n")
    assert entries(store)[0].reason == "not given"


def test_setting_fields_alone_logs_set(store: MemoryStore) -> None:
    store.write("project_a", fields={"tags": ["x"]}, writer="cli")
    assert [(e.op, e.writer) for e in entries(store)] == [("set", "cli")]


def test_a_create_through_write_logs_create_with_no_before(store: MemoryStore) -> None:
    store.write("project_b", TEXT, None)
    [line] = entries(store)
    assert (line.op, line.before, line.after, line.bytes) == ("create", None, sha(TEXT),
                                                              len(TEXT))


def test_new_logs_new_with_its_writer(store: MemoryStore) -> None:
    memory = store.new(type="user", name="Tea", description="Likes tea", writer="mcp")
    [line] = entries(store)
    assert (line.file, line.op, line.writer, line.after) == (memory.file, "new", "mcp",
                                                             memory.revision)


def test_archive_restore_and_purge_each_log_a_line(store: MemoryStore) -> None:
    archive_memory(store, "project_a", "shipped", by="cli")
    restore_memory(store, "project_a")
    archive_memory(store, "project_a", "again")
    purge_memory(store, "project_a", reason="gone")
    lines = entries(store)
    assert [(e.op, e.reason) for e in lines] == [
        ("purge", "gone"), ("archive", "again"), ("restore", "not given"),
        ("archive", "shipped")]
    assert lines[-1].writer == "cli" and lines[-1].before == lines[-1].after == sha(TEXT)
    assert (lines[0].before, lines[0].after, lines[0].bytes) == (sha(TEXT), None, -len(TEXT))


def test_rename_logs_the_old_name_and_the_new(store: MemoryStore) -> None:
    rename_memory(store, "project_a", "project_b", writer="memory-tool")
    [line] = entries(store)
    assert (line.op, line.file, line.to, line.writer) == ("rename", "project_a.md",
                                                          "project_b.md", "memory-tool")
    assert entries(store, "project_b") == [line]


def test_rollback_logs_one_line_per_file_it_changes(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    rewrite(store, TEXT + "later\n")
    (store.directory / "project_new.md").write_text(TEXT)
    rollback(store, snapshot.id, scope="all", writer="cli")
    lines = [e for e in entries(store) if e.op == "rollback"]
    assert {(e.file, e.after) for e in lines} == {("project_a.md", sha(TEXT)),
                                                  ("project_new.md", None)}
    assert all(e.reason == f"rollback to {snapshot.id}" and e.writer == "cli" for e in lines)


def test_audit_fix_logs_op_fix_for_each_file_it_repairs(store: MemoryStore) -> None:
    (store.directory / "project_a.md").write_bytes(TEXT.replace("\n", "\r\n").encode())
    (store.directory / "project_c.md").write_text(TEXT.replace("A", "C"))
    fix(store, snapshot=False, writer="cli")
    lines = entries(store)
    assert {(e.file, e.op, e.writer, e.reason) for e in lines} == {
        ("project_a.md", "fix", "cli", "audit --fix"), ("MEMORY.md", "fix", "cli",
                                                        "audit --fix")}
    crlf = next(e for e in lines if e.file == "project_a.md")
    assert crlf.bytes == -TEXT.count("\n") and crlf.lines == 0


def test_revert_logs_op_revert(store: MemoryStore) -> None:
    rewrite(store, "bad rewrite\n")
    revert(store, "project_a", reason="undo the agent", writer="cli")
    assert (entries(store)[0].op, entries(store)[0].reason) == ("revert", "undo the agent")


def test_a_refused_write_logs_nothing(store: MemoryStore) -> None:
    with pytest.raises(StaleRevision):
        store.write("project_a", "x\n", "0" * 64)
    assert entries(store) == []


def test_a_line_never_holds_the_memorys_text(store: MemoryStore) -> None:
    rewrite(store, TEXT + SECRET + "\n", reason="note")
    store.new(type="user", name="Key", description="where", body=SECRET)
    assert SECRET not in (store.state_dir / changelog.LOG_FILE).read_text()


# -- reading ---------------------------------------------------------------------------------

def test_read_is_newest_first_and_filters_by_name(store: MemoryStore) -> None:
    rewrite(store, TEXT + "1\n")
    store.new(type="user", name="Tea", description="Likes tea")
    rewrite(store, TEXT + "2\n")
    assert [e.file for e in entries(store)] == ["project_a.md", "user_tea.md", "project_a.md"]
    assert [e.bytes for e in entries(store, "project_a")] == [0, 2]


def test_read_since_keeps_only_later_changes(store: MemoryStore) -> None:
    old = changelog.entry("project_a.md", "write", writer="cli", reason=None, before=None,
                          after=None, now=datetime.now(timezone.utc) - timedelta(days=10))
    changelog.append(store.state_dir, old)
    rewrite(store, TEXT + "new\n")
    recent = read(store.state_dir, since=changelog.parse_since("7d")).entries
    assert [e.op for e in recent] == ["write"] and recent[0].time > old.time
    assert len(entries(store)) == 2


def test_a_torn_last_line_is_skipped_and_counted(store: MemoryStore) -> None:
    rewrite(store, TEXT + "1\n")
    with open(store.state_dir / changelog.LOG_FILE, "ab") as log:
        log.write(b'{"time": "2026-11-30T0')
    found = read(store.state_dir)
    assert (len(found.entries), found.skipped) == (1, 1)


def test_a_torn_last_line_costs_only_itself_not_the_next_line(store: MemoryStore) -> None:
    rewrite(store, TEXT + "1\n")
    with open(store.state_dir / changelog.LOG_FILE, "ab") as log:
        log.write(b'{"time": "2026-11-30T0')  # a full disk or a crash mid-line
    after = rewrite(store, TEXT + "2\n")
    found = read(store.state_dir)
    assert [e.after for e in found.entries][:1] == [after]
    assert (len(found.entries), found.skipped) == (2, 1)


def test_a_deeply_nested_line_is_skipped_not_a_crash(store: MemoryStore) -> None:
    rewrite(store, TEXT + "1\n")
    with open(store.state_dir / changelog.LOG_FILE, "ab") as log:
        log.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    found = read(store.state_dir)
    assert (len(found.entries), found.skipped) == (1, 1)
    assert len(versions_of(store, "project_a").versions) == 2


def test_a_fifo_in_the_logs_place_never_hangs_the_write(store: MemoryStore) -> None:
    store.state_dir.mkdir()
    os.mkfifo(store.state_dir / changelog.LOG_FILE)
    item = changelog.entry("project_a.md", "write", writer="cli", reason=None, before=None,
                           after=None)
    assert "could not be added" in (changelog.append(store.state_dir, item) or "")


def test_parse_since_refuses_an_age_past_any_date() -> None:
    with pytest.raises(ValueError):
        changelog.parse_since("99999999999d")
    with pytest.raises(ValueError):
        changelog.parse_since("9999999d")


def test_parse_since_reads_ages_and_dates() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
    assert changelog.parse_since("24h", now) == now - timedelta(hours=24)
    assert changelog.parse_since("2026-11-01", now) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        changelog.parse_since("last tuesday", now)


def test_the_log_rotates_past_its_bound(store: MemoryStore, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.setattr(changelog, "MAX_LOG_BYTES", 600)
    for n in range(6):
        rewrite(store, TEXT + f"{n}\n")
    assert (store.state_dir / changelog.ROTATED_FILE).exists()
    assert (store.state_dir / changelog.LOG_FILE).stat().st_size <= 600
    assert [e.bytes for e in entries(store)][:2] == [0, 0]


# -- a state directory that cannot take the line -------------------------------------------

def test_an_unwritable_log_lets_the_write_land_with_a_warning(
        store: MemoryStore, caplog: pytest.LogCaptureFixture) -> None:
    store.state_dir.mkdir()
    (store.state_dir / changelog.LOG_FILE).mkdir()  # open() fails, as on a read-only dir
    with caplog.at_level(logging.WARNING, logger="sagemem.changelog"):
        after = rewrite(store, TEXT + "landed\n")
    assert store.get("project_a").revision == after
    assert "could not be added" in caplog.text


def test_a_full_disk_returns_a_warning_not_an_error(store: MemoryStore,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_: object) -> int:
        raise OSError(28, "No space left on device")

    store.state_dir.mkdir()
    monkeypatch.setattr(os, "write", full)
    item = changelog.entry("project_a.md", "write", writer="cli", reason=None, before=None,
                           after=None)
    assert "No space left" in (changelog.append(store.state_dir, item) or "")


# -- kept versions, history and revert ------------------------------------------------------

def test_a_replaced_version_is_kept_by_its_revision(store: MemoryStore) -> None:
    rewrite(store, "bad rewrite\n")
    assert versions.load(store.state_dir, sha(TEXT)) == TEXT.encode()


def test_a_kept_copy_that_no_longer_matches_is_never_used(store: MemoryStore) -> None:
    rewrite(store, "bad rewrite\n")
    (versions.versions_dir(store.state_dir) / sha(TEXT)).write_text("tampered")
    assert versions.load(store.state_dir, sha(TEXT)) is None
    with pytest.raises(VersionNotHeld):
        revert(store, "project_a")


def test_kept_versions_are_bounded_oldest_first(store: MemoryStore) -> None:
    for n in range(5):
        rewrite(store, TEXT + f"{n}\n")
        path = versions.versions_dir(store.state_dir) / store.get("project_a").revision
        assert not path.exists()  # the current version is the file itself
    dropped = versions.prune(store.state_dir, max_count=2)
    assert len(dropped) == 3 and len(versions.kept(store.state_dir)) == 2


def test_keeping_versions_stays_within_the_count_bound(store: MemoryStore,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "MAX_VERSIONS", 5)
    for n in range(12):
        rewrite(store, TEXT + f"{n}\n")
    assert 1 <= len(versions.kept(store.state_dir)) <= 5


def test_a_forgotten_version_is_no_longer_held(store: MemoryStore) -> None:
    rewrite(store, "secret taken out\n")
    assert versions.forget(store.state_dir, sha(TEXT))
    assert [v.current for v in versions_of(store, "project_a").versions] == [True]


def test_show_history_lists_versions_snapshots_and_kept_copies_hold(store: MemoryStore
                                                                     ) -> None:
    snapshot = create_snapshot(store)
    second = rewrite(store, TEXT + "two\n")
    third = rewrite(store, TEXT + "three\n")
    held = versions_of(store, "project_a").versions
    assert [v.revision for v in held] == [third, second, sha(TEXT)]
    assert held[0].current and held[1].kept and not held[1].snapshots
    assert [h.snapshot for h in held[2].snapshots] == [snapshot.id]


def test_revert_is_byte_identical_to_the_version_before(store: MemoryStore) -> None:
    rewrite(store, "an agent's bad rewrite\n")
    done = revert(store, "project_a")
    assert (store.directory / "project_a.md").read_bytes() == TEXT.encode()
    assert done.changed and done.after == sha(TEXT)


def test_revert_to_a_snapshot_version(store: MemoryStore) -> None:
    crlf = TEXT.replace("\n", "\r\n")
    (store.directory / "project_a.md").write_bytes(crlf.encode())
    create_snapshot(store)
    (store.directory / "project_a.md").write_text("edited by hand\n")  # never kept
    revert(store, "project_a", to=sha(crlf)[:10])
    assert (store.directory / "project_a.md").read_bytes() == crlf.encode()


def test_revert_is_refused_when_the_file_changed_meanwhile(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    rewrite(store, "bad rewrite\n")
    real = versions.load

    def editor_saves_meanwhile(state_dir: Path, revision: str) -> bytes | None:
        (store.directory / "project_a.md").write_text("the editor's save\n")
        return real(state_dir, revision)

    monkeypatch.setattr(versions, "load", editor_saves_meanwhile)
    with pytest.raises(StaleRevision) as refused:
        revert(store, "project_a")
    assert (store.directory / "project_a.md").read_text() == "the editor's save\n"
    assert refused.value.conflict_id is not None


def test_revert_to_a_revision_nothing_holds_names_history(store: MemoryStore) -> None:
    with pytest.raises(VersionNotHeld, match="--history"):
        revert(store, "project_a", to="deadbeefdeadbeef")
    with pytest.raises(VersionNotHeld, match="no earlier version"):
        revert(store, "project_a")


def test_a_revert_can_itself_be_reverted(store: MemoryStore) -> None:
    bad = rewrite(store, "bad rewrite\n")
    revert(store, "project_a")
    revert(store, "project_a")
    assert store.get("project_a").revision == bad
    assert json.loads((store.state_dir / changelog.LOG_FILE).read_text().splitlines()[-1]
                      )["op"] == "revert"


def test_a_log_file_that_is_a_symlink_is_not_read_and_log_says_so(tmp_path: Path) -> None:
    from sagemem.writes.changelog import LOG_FILE, read

    state = tmp_path / "state"
    state.mkdir()
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("")
    (state / LOG_FILE).symlink_to(elsewhere)
    found = read(state)
    assert found.entries == ()
    assert len(found.unreadable) == 1 and "symlink" in found.unreadable[0]
