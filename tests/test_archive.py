"""The archive: moves that never overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.archive import locked_names, move_file
from sagemem.errors import SettingsError, UnsafeFile
from sagemem.store import MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_a.md").write_text("---\nname: A\n---\nbody a\n")
    return MemoryStore(memory, tmp_path / "state")


def test_move_file_into_archive_and_back(store: MemoryStore) -> None:
    with store.locked():
        assert move_file(store, "project_a.md", into_archive=True)
    assert (store.archive_dir / "project_a.md").read_text() == "---\nname: A\n---\nbody a\n"
    assert not (store.directory / "project_a.md").exists()
    with store.locked():
        assert move_file(store, "project_a.md", into_archive=False)
    assert (store.directory / "project_a.md").exists()


def test_move_file_skips_a_taken_name_and_keeps_both(store: MemoryStore) -> None:
    store.archive_dir.mkdir()
    (store.archive_dir / "Project_A.md").write_text("older\n")
    with store.locked():
        assert not move_file(store, "project_a.md", into_archive=True)
    assert (store.archive_dir / "Project_A.md").read_text() == "older\n"
    assert (store.directory / "project_a.md").exists()


def test_move_file_refuses_a_symlinked_archive(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store.archive_dir.symlink_to(outside)
    with store.locked(), pytest.raises(UnsafeFile):
        move_file(store, "project_a.md", into_archive=True)
    assert list(outside.iterdir()) == []


def test_locked_names_are_read_from_the_state_directory(store: MemoryStore) -> None:
    assert locked_names(store) == frozenset()
    store.state_dir.mkdir()
    (store.state_dir / "locked.json").write_text('{"version": 1, "locked": {"User_X.md": {}}}')
    assert locked_names(store) == frozenset({"user_x.md"})


def test_a_malformed_locks_file_is_an_error_not_no_locks(store: MemoryStore) -> None:
    store.state_dir.mkdir()
    (store.state_dir / "locked.json").write_text("{not json")
    with pytest.raises(SettingsError):
        locked_names(store)
