"""Locks: kept in the state directory, idempotent, never lost to a rewrite of the memory."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemem.errors import MemoryNotFound, SettingsError, WriteFailed
from sagemem.history import archive_log
from sagemem.history.archive import archive_memory
from sagemem.history.archive_log import LOG_FILE, ArchiveEvent, read_log
from sagemem.history.locks import (
    LOCKS_FILE,
    Lock,
    LockChange,
    list_locks,
    lock_memory,
    locked_names,
    unlock_memory,
)
from sagemem.store import MemoryStore

NOW = datetime(2026, 11, 30, 1, 2, 3, tzinfo=timezone.utc)
STAMP = "2026-11-30T01:02:03Z"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_prefs.md").write_text("---\nname: Prefs\n---\ntea\n")
    (memory / "project_old.md").write_text("---\nname: Old\n---\nold\n")
    return MemoryStore(memory, tmp_path / "state")


def locks_file(store: MemoryStore) -> dict[str, object]:
    data: dict[str, object] = json.loads((store.state_dir / LOCKS_FILE).read_text())
    return data


def test_lock_writes_the_documented_format(store: MemoryStore) -> None:
    assert lock_memory(store, "user_prefs", now=NOW) == LockChange("user_prefs.md", True, True)
    assert locks_file(store) == {"version": 1, "locked": {"user_prefs.md": {"since": STAMP}}}
    assert (store.directory / "user_prefs.md").read_text() == "---\nname: Prefs\n---\ntea\n"


def test_lock_is_idempotent_and_keeps_the_first_time(store: MemoryStore) -> None:
    lock_memory(store, "user_prefs", now=NOW)
    again = lock_memory(store, "USER_PREFS.md", now=datetime.now(timezone.utc))
    assert again == LockChange("user_prefs.md", locked=True, changed=False)
    assert locks_file(store)["locked"] == {"user_prefs.md": {"since": STAMP}}
    assert [e.action for e in read_log(store.state_dir)[0]] == ["lock"]


def test_lock_of_an_unknown_memory_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(MemoryNotFound):
        lock_memory(store, "user_nobody")
    assert not (store.state_dir / LOCKS_FILE).exists()


def test_an_archived_memory_can_be_locked(store: MemoryStore) -> None:
    archive_memory(store, "project_old", "x")
    lock_memory(store, "project_old")
    assert list_locks(store)[0].where == "archive"


def test_unlock_of_an_unlocked_memory_is_a_no_op(store: MemoryStore) -> None:
    assert unlock_memory(store, "user_prefs") == LockChange("user_prefs.md", False, False)
    assert not (store.state_dir / LOCKS_FILE).exists()


def test_unlock_removes_the_lock_and_logs_it(store: MemoryStore) -> None:
    lock_memory(store, "user_prefs", now=NOW)
    assert unlock_memory(store, "User_Prefs", now=NOW).changed
    assert locked_names(store) == frozenset()
    assert [e.action for e in read_log(store.state_dir)[0]] == ["lock", "unlock"]


def test_a_lock_whose_file_was_deleted_by_hand_can_be_removed(store: MemoryStore) -> None:
    lock_memory(store, "user_prefs", now=NOW)
    (store.directory / "user_prefs.md").unlink()
    assert list_locks(store) == (Lock("user_prefs.md", STAMP, "missing"),)
    assert unlock_memory(store, "user_prefs").changed


def test_unlock_of_an_unknown_unlocked_memory_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(MemoryNotFound):
        unlock_memory(store, "user_nobody")


def test_dry_run_changes_no_lock(store: MemoryStore) -> None:
    assert lock_memory(store, "user_prefs", dry_run=True).dry_run
    assert locked_names(store) == frozenset()


def test_unknown_keys_of_the_locks_file_survive(store: MemoryStore) -> None:
    store.state_dir.mkdir()
    (store.state_dir / LOCKS_FILE).write_text(json.dumps(
        {"version": 1, "locked": {"project_old.md": {"since": "x", "by": "me"}}, "note": "hi"}))
    lock_memory(store, "user_prefs", now=NOW)
    assert locks_file(store) == {"version": 1, "note": "hi", "locked": {
        "project_old.md": {"since": "x", "by": "me"}, "user_prefs.md": {"since": STAMP}}}


@pytest.mark.parametrize("text", ["{not json", "[]", '{"locked": []}'])
def test_a_malformed_locks_file_is_refused_not_overwritten(store: MemoryStore,
                                                           text: str) -> None:
    store.state_dir.mkdir()
    (store.state_dir / LOCKS_FILE).write_text(text)
    with pytest.raises(SettingsError):
        lock_memory(store, "user_prefs")
    assert (store.state_dir / LOCKS_FILE).read_text() == text


def test_a_symlinked_locks_file_is_refused(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"locked": {}}')
    store.state_dir.mkdir()
    (store.state_dir / LOCKS_FILE).symlink_to(outside)
    with pytest.raises(SettingsError):
        lock_memory(store, "user_prefs")
    assert outside.read_text() == '{"locked": {}}'


def test_a_failed_log_line_leaves_no_lock_so_nothing_was_changed_is_true(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    lock_memory(store, "project_old", now=NOW)
    before = (store.state_dir / LOCKS_FILE).read_bytes()

    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    monkeypatch.setattr(archive_log, "append", refuse)
    with pytest.raises(WriteFailed, match="nothing was changed"):
        lock_memory(store, "user_prefs", now=NOW)
    with pytest.raises(WriteFailed, match="nothing was changed"):
        unlock_memory(store, "project_old", now=NOW)
    assert (store.state_dir / LOCKS_FILE).read_bytes() == before


def test_a_first_lock_whose_log_line_fails_leaves_no_locks_file(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    monkeypatch.setattr(archive_log, "append", refuse)
    with pytest.raises(WriteFailed):
        lock_memory(store, "user_prefs", now=NOW)
    assert locked_names(store) == frozenset()
