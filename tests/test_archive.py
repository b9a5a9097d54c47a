"""The archive: moves that never overwrite, index lines kept in step, a log of every change."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from sagemem.errors import (
    MemoryLocked,
    MemoryNotFound,
    MoveIncomplete,
    NameCollision,
    NotArchived,
    SettingsError,
    StaleRevision,
    UnsafeFile,
    WriteFailed,
)
from sagemem.files import atomic
from sagemem.history import archive, archive_log
from sagemem.history.archive import (
    archive_memory,
    locked_names,
    move_file,
    purge_memory,
    restore_memory,
)
from sagemem.history.archive_log import LOG_FILE, ArchiveEvent, read_log
from sagemem.history.locks import lock_memory, unlock_memory
from sagemem.store import MemoryStore

NOW = datetime(2026, 11, 30, 1, 2, 3, tzinfo=timezone.utc)
STAMP = "2026-11-30T01:02:03Z"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_a.md").write_text("---\nname: A\n---\nbody a\n")
    return MemoryStore(memory, tmp_path / "state")


@pytest.fixture
def indexed(store: MemoryStore) -> MemoryStore:
    """Two memories made with ``new``, so MEMORY.md has a line for each."""
    store.new(type="project", name="Deploy", description="How we deploy", body="kubectl\n")
    store.new(type="user", name="Prefs", description="Tea, not coffee")
    return store


def index_text(store: MemoryStore) -> str:
    return (store.directory / "MEMORY.md").read_text()


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# -- move_file ------------------------------------------------------------------------------


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


# -- archive --------------------------------------------------------------------------------


def test_archive_moves_the_file_drops_its_line_and_logs_why(indexed: MemoryStore) -> None:
    before = index_text(indexed)
    result = archive_memory(indexed, "project_deploy", "shipped", now=NOW)
    assert (result.file, result.index_changed, result.dry_run) == ("project_deploy.md", True,
                                                                   False)
    assert files(indexed.archive_dir) == ["project_deploy.md"]
    assert not (indexed.directory / "project_deploy.md").exists()
    assert index_text(indexed) == before.replace(
        "- [Deploy](project_deploy.md) — How we deploy\n", "")
    assert read_log(indexed.state_dir) == (
        [ArchiveEvent(STAMP, "archive", "project_deploy.md", "shipped", "library")], [])


def test_archive_needs_a_reason(indexed: MemoryStore) -> None:
    with pytest.raises(ValueError, match="reason"):
        archive_memory(indexed, "project_deploy", "  ")
    assert (indexed.directory / "project_deploy.md").exists()


def test_archive_of_an_unknown_memory_is_not_found(indexed: MemoryStore) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        archive_memory(indexed, "project_nope", "x")
    assert not caught.value.archived


def test_archive_of_an_archived_memory_says_it_is_archived(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    with pytest.raises(MemoryNotFound) as caught:
        archive_memory(indexed, "project_deploy", "again")
    assert caught.value.archived


def test_archive_refuses_a_locked_memory_whoever_asks(indexed: MemoryStore) -> None:
    lock_memory(indexed, "PROJECT_DEPLOY")
    before = index_text(indexed)
    for by in ("cli", "library", "candidates"):
        with pytest.raises(MemoryLocked) as caught:
            archive_memory(indexed, "project_deploy", "x", by=by)
        assert str(caught.value).startswith("locked:")
    assert (indexed.directory / "project_deploy.md").exists()
    assert index_text(indexed) == before


def test_archive_refuses_a_name_the_archive_already_has(indexed: MemoryStore) -> None:
    indexed.archive_dir.mkdir()
    (indexed.archive_dir / "Project_Deploy.md").write_text("older\n")
    before = index_text(indexed)
    with pytest.raises(NameCollision):
        archive_memory(indexed, "project_deploy", "x")
    assert (indexed.archive_dir / "Project_Deploy.md").read_text() == "older\n"
    assert (indexed.directory / "project_deploy.md").exists()
    assert index_text(indexed) == before
    assert read_log(indexed.state_dir) == ([], [])


def test_archive_refuses_a_symlinked_memory(indexed: MemoryStore, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("secret\n")
    (indexed.directory / "project_link.md").symlink_to(target)
    with pytest.raises(UnsafeFile):
        archive_memory(indexed, "project_link", "x")
    assert (indexed.directory / "project_link.md").is_symlink()
    assert files(indexed.archive_dir) == []


def test_archive_dry_run_changes_nothing(indexed: MemoryStore) -> None:
    before = index_text(indexed)
    result = archive_memory(indexed, "project_deploy", "x", dry_run=True)
    assert result.dry_run and result.index_changed
    assert (indexed.directory / "project_deploy.md").exists()
    assert index_text(indexed) == before
    assert not (indexed.state_dir / LOG_FILE).exists()


def test_archive_without_an_index_line_leaves_memory_md_alone(store: MemoryStore) -> None:
    result = archive_memory(store, "project_a", "x")
    assert not result.index_changed
    assert not (store.directory / "MEMORY.md").exists()


def test_a_failed_index_write_undoes_the_move(indexed: MemoryStore,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    before = index_text(indexed)

    def refuse(text: str, revision: str | None) -> None:
        raise WriteFailed(indexed.directory / "MEMORY.md", "disk full")

    monkeypatch.setattr(indexed, "_write_index", refuse)
    with pytest.raises(WriteFailed, match="disk full"):
        archive_memory(indexed, "project_deploy", "x")
    assert (indexed.directory / "project_deploy.md").exists()
    assert files(indexed.archive_dir) == []
    assert index_text(indexed) == before
    assert read_log(indexed.state_dir) == ([], [])


def test_an_editor_saving_memory_md_meanwhile_keeps_its_edit(
        indexed: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    real = atomic.write_new
    saved = "# saved by an editor meanwhile\n"

    def editor_saves_meanwhile(tmp: Path, chunks: Iterable[bytes], **kwargs: Any) -> None:
        real(tmp, chunks, **kwargs)
        if "MEMORY.md" in tmp.name:
            (indexed.directory / "MEMORY.md").write_text(saved)

    monkeypatch.setattr(atomic, "write_new", editor_saves_meanwhile)
    with pytest.raises(StaleRevision):
        archive_memory(indexed, "project_deploy", "x")
    monkeypatch.undo()
    assert index_text(indexed) == saved
    assert (indexed.directory / "project_deploy.md").exists()
    assert files(indexed.archive_dir) == []


def test_a_failed_log_line_undoes_the_move_and_the_index(indexed: MemoryStore,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    before = index_text(indexed)

    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    monkeypatch.setattr(archive_log, "append", refuse)
    with pytest.raises(WriteFailed, match="read-only"):
        archive_memory(indexed, "project_deploy", "x")
    assert (indexed.directory / "project_deploy.md").exists()
    assert index_text(indexed) == before


def test_an_undo_that_fails_too_says_what_is_left_where(indexed: MemoryStore,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    real_move = archive.move_file
    monkeypatch.setattr(archive_log, "append", refuse)
    monkeypatch.setattr(archive, "move_file", lambda store, file, *, into_archive:
                        real_move(store, file, into_archive=True) if into_archive else False)
    with pytest.raises(MoveIncomplete) as caught:
        archive_memory(indexed, "project_deploy", "x")
    assert caught.value.where == indexed.archive_dir
    assert "read-only" in str(caught.value) and "could not be undone" in str(caught.value)


def test_an_unwritable_state_directory_archives_nothing(indexed: MemoryStore) -> None:
    shutil.rmtree(indexed.state_dir)
    indexed.state_dir.write_text("not a directory\n")  # chmod cannot stop root; this can
    with pytest.raises(WriteFailed):
        archive_memory(indexed, "project_deploy", "x")
    assert (indexed.directory / "project_deploy.md").exists()


# -- restore --------------------------------------------------------------------------------


def test_restore_brings_it_back_with_its_index_line(indexed: MemoryStore) -> None:
    before = index_text(indexed)
    archive_memory(indexed, "project_deploy", "x")
    result = restore_memory(indexed, "project_deploy", now=NOW)
    assert result.index_changed and result.event.action == "restore"
    assert (indexed.directory / "project_deploy.md").exists()
    assert files(indexed.archive_dir) == []
    lines = index_text(indexed).splitlines()
    assert lines[-1] == "- [Deploy](project_deploy.md) — How we deploy"
    assert sorted(lines) == sorted(before.splitlines())
    assert [e.action for e in read_log(indexed.state_dir)[0]] == ["archive", "restore"]


def test_restore_keeps_an_existing_line(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    (indexed.directory / "MEMORY.md").write_text("- [Mine](project_deploy.md) — by hand\n")
    assert not restore_memory(indexed, "project_deploy").index_changed
    assert index_text(indexed) == "- [Mine](project_deploy.md) — by hand\n"


def test_restore_keeps_a_line_spelt_another_way(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    (indexed.directory / "MEMORY.md").write_text("- [Mine](./Project_Deploy.md) — by hand\n")
    assert not restore_memory(indexed, "project_deploy").index_changed
    assert index_text(indexed) == "- [Mine](./Project_Deploy.md) — by hand\n"


def test_archive_drops_a_line_spelt_another_way(indexed: MemoryStore) -> None:
    (indexed.directory / "MEMORY.md").write_text("# I\n- [D](./project_deploy.md) — x\n")
    assert archive_memory(indexed, "project_deploy", "x").index_changed
    assert index_text(indexed) == "# I\n"


def test_restore_refuses_a_name_the_top_level_has(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    (indexed.directory / "PROJECT_DEPLOY.md").write_text("newer\n")
    with pytest.raises(NameCollision):
        restore_memory(indexed, "project_deploy")
    assert files(indexed.archive_dir) == ["project_deploy.md"]
    assert (indexed.directory / "PROJECT_DEPLOY.md").read_text() == "newer\n"


def test_restore_of_a_memory_not_archived_is_not_found(indexed: MemoryStore) -> None:
    with pytest.raises(MemoryNotFound):
        restore_memory(indexed, "project_deploy")


def test_restore_of_an_unreadable_memory_names_only_the_file(indexed: MemoryStore) -> None:
    indexed.archive_dir.mkdir()
    (indexed.archive_dir / "project_bytes.md").write_bytes(b"\xff\xfe not utf-8\n")
    restore_memory(indexed, "project_bytes")
    assert index_text(indexed).endswith("- [project_bytes](project_bytes.md)\n")


def test_a_restored_locked_memory_stays_locked(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    lock_memory(indexed, "project_deploy")
    restore_memory(indexed, "project_deploy")
    assert locked_names(indexed) == frozenset({"project_deploy.md"})


# -- purge ----------------------------------------------------------------------------------


def test_purge_deletes_an_archived_memory_and_logs_it(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    result = purge_memory(indexed, "project_deploy", reason="obsolete", now=NOW)
    assert result.event == ArchiveEvent(STAMP, "purge", "project_deploy.md", "obsolete",
                                        "library")
    assert files(indexed.archive_dir) == []  # no leftover temporary file either


def test_dry_runs_take_no_lock_and_create_no_state_directory(store: MemoryStore) -> None:
    (store.directory / "project_b.md").write_text("---\nname: B\n---\nbody b\n")
    store.archive_dir.mkdir()
    shutil.move(store.directory / "project_b.md", store.archive_dir)
    archive_memory(store, "project_a", "x", dry_run=True)
    restore_memory(store, "project_b", dry_run=True)
    purge_memory(store, "project_b", dry_run=True)
    lock_memory(store, "project_a", dry_run=True)
    unlock_memory(store, "project_a", dry_run=True)
    assert not store.state_dir.exists()


def test_purge_refuses_a_live_memory(indexed: MemoryStore) -> None:
    with pytest.raises(NotArchived) as caught:
        purge_memory(indexed, "project_deploy")
    assert caught.value.live and "archive it first" in str(caught.value)
    assert (indexed.directory / "project_deploy.md").exists()


def test_restore_of_a_live_memory_says_it_is_not_archived(indexed: MemoryStore) -> None:
    with pytest.raises(NotArchived) as caught:
        restore_memory(indexed, "project_deploy")
    message = str(caught.value)
    assert caught.value.live and message.startswith("project_deploy.md is not archived")
    assert "already (top level); nothing to restore" in message and "list" not in message


def test_purge_of_an_unknown_memory_is_not_archived(indexed: MemoryStore) -> None:
    with pytest.raises(NotArchived) as caught:
        purge_memory(indexed, "project_nope")
    assert not caught.value.live and isinstance(caught.value, MemoryNotFound)


def test_purge_refuses_a_locked_memory(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    lock_memory(indexed, "project_deploy")
    with pytest.raises(MemoryLocked, match=r"^locked: .*purged"):
        purge_memory(indexed, "project_deploy")
    assert files(indexed.archive_dir) == ["project_deploy.md"]


def test_purge_dry_run_deletes_nothing(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "x")
    assert purge_memory(indexed, "project_deploy", dry_run=True).dry_run
    assert files(indexed.archive_dir) == ["project_deploy.md"]


def test_purge_never_unlinks_a_symlink(indexed: MemoryStore, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("keep\n")
    indexed.archive_dir.mkdir()
    (indexed.archive_dir / "project_link.md").symlink_to(target)
    with pytest.raises(UnsafeFile):
        purge_memory(indexed, "project_link")
    assert target.read_text() == "keep\n"


def test_a_failed_purge_log_keeps_the_file(indexed: MemoryStore,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    archive_memory(indexed, "project_deploy", "x")

    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    monkeypatch.setattr(archive_log, "append", refuse)
    with pytest.raises(WriteFailed):
        purge_memory(indexed, "project_deploy")
    assert files(indexed.archive_dir) == ["project_deploy.md"]


def test_a_purge_that_can_neither_log_nor_put_back_says_where_the_file_is(
        indexed: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    archive_memory(indexed, "project_deploy", "x")

    def refuse(state_dir: Path, record: ArchiveEvent) -> None:
        raise WriteFailed(state_dir / LOG_FILE, "read-only")

    real_rename = os.rename
    calls: list[object] = []

    def rename_once(source: object, target: object) -> None:
        calls.append(source)
        if len(calls) > 1:
            raise OSError(30, "Read-only file system")
        real_rename(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(archive_log, "append", refuse)
    monkeypatch.setattr(os, "rename", rename_once)
    with pytest.raises(MoveIncomplete) as caught:
        purge_memory(indexed, "project_deploy")
    kept = [n for n in os.listdir(indexed.archive_dir) if n.startswith(".project_deploy.md.")]
    assert len(kept) == 1 and kept[0] in str(caught.value)


# -- the log --------------------------------------------------------------------------------


def test_a_damaged_log_line_is_skipped_with_a_warning(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "first", now=NOW)
    with (indexed.state_dir / LOG_FILE).open("a") as log:
        log.write('{"time": "half a line\n[1, 2]\n')
    restore_memory(indexed, "project_deploy", now=NOW)
    events, warnings = read_log(indexed.state_dir)
    assert [e.action for e in events] == ["archive", "restore"]
    assert warnings == [f"{LOG_FILE} line 2 is damaged; skipped",
                        f"{LOG_FILE} line 3 is damaged; skipped"]


def test_log_lines_are_plain_json_objects(indexed: MemoryStore) -> None:
    archive_memory(indexed, "project_deploy", "why not", by="cli", now=NOW)
    line = (indexed.state_dir / LOG_FILE).read_text().splitlines()[0]
    assert json.loads(line) == {"time": STAMP, "action": "archive", "file": "project_deploy.md",
                                "reason": "why not", "by": "cli"}


def test_a_symlinked_log_is_refused(indexed: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text("")
    indexed.state_dir.mkdir(exist_ok=True)
    (indexed.state_dir / LOG_FILE).symlink_to(outside)
    with pytest.raises(WriteFailed):
        archive_memory(indexed, "project_deploy", "x")
    assert outside.read_text() == ""
    assert (indexed.directory / "project_deploy.md").exists()


# -- search ---------------------------------------------------------------------------------


def test_archived_memories_are_searched_only_when_asked(indexed: MemoryStore) -> None:
    assert [r.file for r in indexed.search("kubectl deploy").results] == ["project_deploy.md"]
    archive_memory(indexed, "project_deploy", "x")
    assert indexed.search("kubectl deploy").results == ()
    found = indexed.search("kubectl deploy", include_archived=True).results
    assert [(r.file, r.archived, r.paragraph) for r in found] == [
        ("project_deploy.md", True, "kubectl")]


def test_search_with_the_archive_merges_and_pages(indexed: MemoryStore) -> None:
    indexed.new(type="project", name="Deploy two", description="How we deploy again",
                body="kubectl again\n")
    archive_memory(indexed, "project_deploy", "x")
    first = indexed.search("deploy", limit=1, include_archived=True)
    assert len(first.results) == 1 and first.coverage.next_cursor
    second = indexed.search("deploy", limit=1, include_archived=True,
                            cursor=first.coverage.next_cursor)
    both = {(r.file, r.archived) for r in (*first.results, *second.results)}
    assert both == {("project_deploy.md", True), ("project_deploy_two.md", False)}


def test_search_with_the_archive_and_no_archive_folder(indexed: MemoryStore) -> None:
    found = indexed.search("kubectl deploy", include_archived=True).results
    assert [(r.file, r.archived) for r in found] == [("project_deploy.md", False)]
