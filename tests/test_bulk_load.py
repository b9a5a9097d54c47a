"""The lexical index built in bulk (issue 13, part 1).

A sync without a deadline that adds many new files drops the term indexes, loads rows
built in Python a batch at a time, its paragraph postings into ``pterms_load``, and at
the end sorts them into ``pterms`` and creates the indexes again — whether it ends or
fails; a build killed in between leaves them missing (and the postings waiting) and the
next sync puts both in place first. A sync with a deadline (the hook's) keeps them: it
cannot afford to create them again. A file's removal finds its rows by the rowid ranges
and body terms its ``files`` row keeps. Whichever path built it, the index holds exactly
what a row-by-row build holds.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from conftest import MEMORY_TEXT, write_memory
from test_sync_batches import indexed_count, kill_index_build_mid_way, make_corpus

from sagemem.search import rows, schema, sync
from sagemem.store import MemoryStore


def lookups(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")}


def contents(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """What the index holds, by file name rather than by id (ids depend on history)."""
    return {
        "files": sorted(conn.execute("SELECT name, revision, info, slen, blen FROM files")),
        "sterms": sorted(conn.execute(
            "SELECT f.name, s.term, s.tf FROM sterms s JOIN files f ON f.id = s.file_id")),
        "paras": sorted(conn.execute(
            "SELECT f.name, p.start_line, p.end_line, p.plen, p.asks FROM paras p "
            "JOIN files f ON f.id = p.file_id")),
        "pterms": sorted(conn.execute(
            "SELECT f.name, p.start_line, t.term, t.tf FROM pterms t JOIN files f ON "
            "f.id = t.file_id JOIN paras p ON p.id = t.para_id AND p.file_id = f.id")),
        "vocab": sorted(conn.execute("SELECT * FROM vocab WHERE fdf > 0")),
        "orphans": list(conn.execute(
            "SELECT 'pterm', para_id FROM pterms WHERE file_id NOT IN (SELECT id FROM files) "
            "UNION ALL SELECT 'para', id FROM paras WHERE file_id NOT IN (SELECT id FROM files)")),
    }


@pytest.fixture
def drops(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the bulk loads (each drops the lookups once)."""
    seen: list[int] = []
    real = sync.drop_lookups

    def counting(conn: sqlite3.Connection) -> None:
        seen.append(1)
        real(conn)

    monkeypatch.setattr(sync, "drop_lookups", counting)
    return seen


def test_a_cold_build_of_many_files_loads_in_bulk_and_ends_with_its_lookups(
        tmp_path: Path, drops: list[int]) -> None:
    corpus = make_corpus(tmp_path / "memory", sync.BULK_FILES)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        assert len(index.sync().updated) == sync.BULK_FILES + 1
        assert drops == [1]
        assert lookups(index.conn) == set(schema.LOOKUPS)
        assert [r.file for r in store.search("zebra crossing").results][:1] == [
            "project_zebra_crossing.md"]


def test_a_few_changed_files_are_indexed_with_the_lookups_kept(
        tmp_path: Path, drops: list[int]) -> None:
    corpus = make_corpus(tmp_path / "memory", 20)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        index.sync()
        assert drops == []
        assert lookups(index.conn) == set(schema.LOOKUPS)


def test_a_sync_with_a_deadline_keeps_the_lookups_it_could_not_afford_to_rebuild(
        tmp_path: Path, drops: list[int]) -> None:
    corpus = make_corpus(tmp_path / "memory", 1500)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        report = index.sync(deadline=time.monotonic() + 0.1)
        assert report.pending > 0 and drops == []
        assert lookups(index.conn) == set(schema.LOOKUPS)


def test_a_bulk_load_that_fails_keeps_its_batches_and_ends_with_its_lookups(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drops: list[int]) -> None:
    corpus = make_corpus(tmp_path / "memory", 1500)
    real_add = rows.Batch.add
    added: list[str] = []

    def failing(self: rows.Batch, name: str, *args: object) -> None:
        if len(added) == 1000:  # the second batch, at the latest
            raise sqlite3.OperationalError("disk I/O error")
        added.append(name)
        real_add(self, name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(rows.Batch, "add", failing)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        with pytest.raises(sqlite3.OperationalError):
            index.sync()
        assert drops == [1] and 0 < indexed_count(tmp_path / "state") <= 1000
        assert lookups(index.conn) == set(schema.LOOKUPS)
        plan = " ".join(str(row) for row in index.conn.execute(
            "EXPLAIN QUERY PLAN SELECT file_id FROM pterms WHERE term = 'zebra'"))
        assert "PRIMARY KEY" in plan  # a partial index is searched by its key
        assert not schema.loaded_waiting(index.conn)  # its batches' postings sorted in
        monkeypatch.undo()
        assert index.sync().pending == 0 and indexed_count(tmp_path / "state") == 1501


def test_a_build_killed_in_its_bulk_load_resumes_and_ends_with_its_lookups(
        tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "memory", 2000)
    state = tmp_path / "state"
    kill_index_build_mid_way(corpus, state)
    (db,) = (state / "index").glob("search-*.sqlite3")
    killed = sqlite3.connect(db)
    try:
        assert not lookups(killed) >= set(schema.LOOKUPS)  # killed mid-load: dropped
        assert schema.loaded_waiting(killed)  # ... and its postings not yet sorted in
    finally:
        killed.close()
    with MemoryStore(corpus, state) as store:
        index = store.search_index()
        report = index.sync()
        assert report.pending == 0 and indexed_count(state) == 2001
        assert lookups(index.conn) == set(schema.LOOKUPS)
        assert not schema.loaded_waiting(index.conn)
        assert [r.file for r in store.search("zebra crossing").results][:1] == [
            "project_zebra_crossing.md"]


def test_a_bulk_build_holds_what_a_row_by_row_build_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = make_corpus(tmp_path / "memory", 60)
    built = []
    for bulk_from in (1, 10_000):
        monkeypatch.setattr(sync, "BULK_FILES", bulk_from)
        with MemoryStore(corpus, tmp_path / f"state{bulk_from}") as store:
            index = store.search_index()
            index.sync()
            built.append(contents(index.conn))
    assert built[0] == built[1]


def test_edits_and_removals_leave_what_a_fresh_build_holds(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "memory", 30)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        index.sync()
        (corpus / "project_topic_00003.md").unlink()
        write_memory(corpus, "project_topic_00007.md", MEMORY_TEXT.format(
            name="Topic 7", description="Rewritten: now about giraffes.", type="project",
            body="Giraffes eat leaves.\n\nWhy are they tall?\n\nTo reach the leaves.\n"))
        write_memory(corpus, "project_new.md", MEMORY_TEXT.format(
            name="New", description="A new note about subject5.", type="project",
            body="Subject5 again.\n"))
        index.sync()
        incremental = contents(index.conn)
    with MemoryStore(corpus, tmp_path / "fresh") as store:
        index = store.search_index()
        index.sync()
        assert contents(index.conn) == incremental
    assert incremental["orphans"] == []


def test_editing_the_newest_file_twice_keeps_every_other_files_postings(
        tmp_path: Path) -> None:
    """The reviewer's case: an edit of the file whose rows are the highest deletes them
    first; rowids SQLite would hand out again must not shift its recorded ranges onto
    the next file's rows (whose postings the following edit then deleted)."""
    corpus = tmp_path / "memory"
    corpus.mkdir()
    for n in range(5):
        write_memory(corpus, f"project_t{n}.md", MEMORY_TEXT.format(
            name=f"t{n}", description=f"topic {n} words", type="project", body=f"Body {n}.\n"))
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        index.sync()

        def edit(name: str, description: str, body: str) -> None:
            write_memory(corpus, name, MEMORY_TEXT.format(
                name=name[:-3], description=description, type="project", body=body))
            index.sync()

        edit("project_zz_new.md", "A fresh note on lanterns.", "Lanterns glow.\n")
        edit("project_zz_new.md", "A fresh note on lanterns.", "Lanterns glow.\n\nMore.\n")
        edit("project_zz_other.md", "Yellow perception kayak.", "The kayak is yellow.\n")
        edit("project_zz_new.md", "A fresh note on lanterns.", "Lanterns glow brightly.\n")
        assert [r.file for r in store.search("yellow kayak").results][:1] == [
            "project_zz_other.md"]
        incremental = contents(index.conn)
    with MemoryStore(corpus, tmp_path / "fresh") as store:
        index = store.search_index()
        index.sync()
        assert contents(index.conn) == incremental
    assert incremental["orphans"] == []
