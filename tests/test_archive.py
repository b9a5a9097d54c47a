"""The archive: moves that never overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.archive import move_file
from sagemem.errors import UnsafeFile
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
