"""Archiving many memories at once: each refused alone as one archive would be, MEMORY.md
edited once, and a batch killed mid-way finished by recover."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemem.errors import MemoryLocked, MemoryNotFound, NameCollision, StaleRevision
from sagemem.history import archive_log, journal
from sagemem.history.archive import move_file
from sagemem.history.archive_batch import ArchiveItem, archive_many
from sagemem.history.locks import lock_memory
from sagemem.history.recover import recover
from sagemem.store import MemoryStore
from sagemem.writes import changelog

NOW = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    store.directory.mkdir()
    for n in range(6):
        store.new(type="project", name=f"Note {n}", description=f"note {n}", body=f"fact {n}\n")
    return store


def files(store: MemoryStore) -> list[str]:
    return sorted(store.files())


def test_every_archivable_item_moves_and_its_index_line_goes_in_one_edit(store):
    names = files(store)[:4]
    answers = archive_many(store, [ArchiveItem(f, "old") for f in names], by="library",
                           run_id="r1", now=NOW)
    assert answers == [None] * 4
    assert sorted(store.files(archived=True)) == names
    index = store.read_index()[0]
    assert not any(f in index for f in names) and all(f in index for f in files(store))
    logged = [e for e in changelog.read(store.state_dir).entries if e.op == "archive"]
    assert {e.file for e in logged} == set(names) and {e.run for e in logged} == {"r1"}
    assert len(archive_log.read_log(store.state_dir)[0]) == 4


def test_each_refusal_is_the_one_archive_memory_gives_and_the_rest_still_move(store):
    a, b, c, d = files(store)[:4]
    lock_memory(store, b)
    (store.directory / "archive").mkdir()
    (store.directory / "archive" / c).write_text("an older archived copy\n")
    answers = archive_many(store, [ArchiveItem("nope.md", "x"), ArchiveItem(b, "x"),
                                   ArchiveItem(c, "x"), ArchiveItem(d, "x", "0" * 12),
                                   ArchiveItem(a, "x")], now=NOW)
    kinds = [type(x) if x is not None else None for x in answers]
    assert kinds == [MemoryNotFound, MemoryLocked, NameCollision, StaleRevision, None]
    assert a not in files(store) and {b, c, d} <= set(files(store))


def test_a_batch_killed_after_its_moves_is_finished_by_recover(store):
    moved, untouched = files(store)[:2], files(store)[2]
    events = [archive_log.event("archive", f, "old", "library", NOW)
              for f in [*moved, untouched]]
    with store.locked():
        journal.begin(store.state_dir, "archive_batch",
                      {"events": json.dumps([vars(e) for e in events]), "file": "3 memories"})
        for f in moved:
            move_file(store, f, into_archive=True)
    done, = recover(store)
    assert done.outcome == "finished" and "2 of 3" in done.detail
    index = store.read_index()[0]
    assert not any(f in index for f in moved) and untouched in index
    assert untouched in files(store)
    assert journal.pending(store.state_dir) == ([], [])
    assert recover(store) == []


def test_a_batch_record_that_is_not_json_is_reported_not_a_traceback(store):
    with store.locked():
        journal.begin(store.state_dir, "archive_batch", {"events": "[{]", "file": "?"})
    done, = recover(store)
    assert done.outcome == "failed"
