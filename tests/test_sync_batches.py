"""A build of the index makes progress that survives being stopped (issue 12, item 7).

The sync commits in batches, newest files first, and stops at a deadline once at least
one file is done: what it did is kept, the listing digest is stored only when nothing is
pending, and the next sync goes on where it stopped. A build killed with SIGKILL keeps
its committed batches.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import MEMORY_TEXT, write_memory

from sagemem.store import MemoryStore

LATEST = "project_zebra_crossing.md"


def make_corpus(directory: Path, count: int) -> Path:
    """``count`` memories on distinct topics, and the newest one about zebra crossings."""
    directory.mkdir()
    for n in range(count):
        path = write_memory(directory, f"project_topic_{n:05d}.md", MEMORY_TEXT.format(
            name=f"Topic {n}", description=f"Notes on subject{n} and area{n % 97}.",
            type="project", body=f"Subject{n} matters for area{n % 97}. " * 20 + "\n"))
        os.utime(path, ns=(1_600_000_000_000_000_000 + n, 1_600_000_000_000_000_000 + n))
    write_memory(directory, LATEST, MEMORY_TEXT.format(
        name="Zebra crossing", description="Where the zebra crossing near the office is.",
        type="project", body="The zebra crossing is at the north gate.\n"))
    return directory


def indexed_count(state_dir: Path) -> int:
    (db,) = (state_dir / "index").glob("search-*.sqlite3")
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    finally:
        conn.close()


def kill_index_build_mid_way(corpus: Path, state: Path) -> None:
    """Start ``sagemem index`` as a process and SIGKILL it once it has kept something."""
    argv = [sys.executable, "-m", "sagemem", "--dir", str(corpus), "--state-dir", str(state),
            "index"]
    build = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and build.poll() is None:
            time.sleep(0.05)
            try:
                if indexed_count(state) > 0:
                    break
            except (ValueError, sqlite3.Error):  # not created yet
                continue
        assert build.poll() is None, "the build was over (or kept nothing) before the kill"
        os.kill(build.pid, signal.SIGKILL)
    finally:
        build.wait()


def test_a_passed_deadline_keeps_a_partial_index_that_the_next_sync_completes(
        tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "memory", 300)
    with MemoryStore(corpus, tmp_path / "state") as store:
        index = store.search_index()
        report = index.sync(deadline=time.monotonic())  # over already: one file, then stop
        assert report.updated == (LATEST,) and report.pending == 300
        assert index.notices == ["index incomplete: 1 of 301 files indexed; run sagemem index"]
        assert indexed_count(tmp_path / "state") == 1
        index.notices.clear()
        response = store.search("where is the zebra crossing?", deadline=time.monotonic())
        assert [r.file for r in response.results] == [LATEST]  # answered from what is indexed
        assert response.notices == ("index incomplete: 2 of 301 files indexed; "
                                    "run sagemem index",)
    with MemoryStore(corpus, tmp_path / "state") as again:
        index = again.search_index()
        assert len(index.sync().updated) == 299 and index.notices == []
        assert index.sync().updated == ()  # the digest was stored once it was complete


def test_a_deadline_mid_build_stops_it_with_what_it_did_kept(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "memory", 1500)
    with MemoryStore(corpus, tmp_path / "state") as store:
        report = store.search_index().sync(deadline=time.monotonic() + 0.1)
    assert 0 < len(report.updated) < 1501 and report.pending == 1501 - len(report.updated)
    assert indexed_count(tmp_path / "state") == len(report.updated)


def test_a_build_killed_mid_way_keeps_its_committed_batches(tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "memory", 2000)
    state = tmp_path / "state"
    kill_index_build_mid_way(corpus, state)
    kept = indexed_count(state)
    assert 0 < kept < 2001
    with MemoryStore(corpus, state) as store:
        report = store.search_index().sync()
    assert len(report.updated) == 2001 - kept and report.pending == 0


def test_a_sync_with_a_deadline_does_not_wait_out_another_writer(tmp_path: Path) -> None:
    memory = make_corpus(tmp_path / "memory", 5)
    with MemoryStore(memory, tmp_path / "state") as store:
        store.search("zebra crossing")  # the index exists and is up to date
        write_memory(memory, "project_new.md", MEMORY_TEXT.format(
            name="New", description="A new note about zebra crossings.", type="project",
            body="New.\n"))
        other = sqlite3.connect(store.search_index().path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process in the middle of a build
        try:
            started = time.monotonic()
            response = store.search("zebra crossing", deadline=started + 0.3)
            waited = time.monotonic() - started
        finally:
            other.execute("ROLLBACK")
            other.close()
    assert waited < 2.0
    assert [r.file for r in response.results][:1] == [LATEST]
    assert any("another sagemem process" in n for n in response.notices)
