"""Reading keeps working when the state directory cannot be written (issue 12, item 6).

A read-only state directory is made real with ``chattr +i`` (root ignores file modes;
the test skips where the file system refuses the attribute); a full disk is simulated by
raising the errors SQLite and the kernel give (SQLITE_FULL, ENOSPC). Search answers from
the index as it is (or from the files), inject goes on without saving the session or the
ledger, ``read`` without the ledger: each degradation is one notice. Writes still refuse.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import Result, store_runner
from conftest import MEMORY_TEXT, write_memory

from sagemem.config import load_settings
from sagemem.inject.block import inject
from sagemem.search import sync
from sagemem.store import MemoryStore

QUESTION = "which database does the ledger use?"


def memory(name: str, description: str, body: str) -> str:
    return MEMORY_TEXT.format(name=name, description=description, type="project", body=body)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "project_database.md", memory(
        "Ledger database", "We chose Postgres 16 as the ledger database.",
        "We settled on Postgres 16 for the ledger database, not MySQL.\n"))
    write_memory(directory, "project_deploy.md", memory(
        "Deploy", "How the web app is deployed with kubectl.",
        "Main is deployed to staging on every merge.\n"))
    with MemoryStore(directory, tmp_path / "state") as opened:
        yield opened


def _chattr(flag: str, path: Path) -> bool:
    try:
        done = subprocess.run(["chattr", "-R", flag, str(path)], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


@pytest.fixture
def read_only_state(store: MemoryStore) -> Iterator[Path]:
    """The store's state directory, indexed and up to date, then made immutable."""
    store.search_index().refresh()
    store.close()
    if not _chattr("+i", store.state_dir):
        pytest.skip("chattr +i is not available here (needed for a read-only dir as root)")
    try:
        yield store.state_dir
    finally:
        _chattr("-i", store.state_dir)


def full_disk(monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> None:
    """Every new file and every index write under ``state_dir`` fails as on a full disk."""
    real_open = os.open

    def refusing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if str(path).startswith(str(state_dir)) and flags & os.O_CREAT:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing_open)
    real_begin = sync.transaction.__enter__

    def full(self: sync.transaction) -> None:
        error = sqlite3.OperationalError("database or disk is full")
        error.sqlite_errorcode = 13  # type: ignore[attr-defined]  # SQLITE_FULL
        if self.conn.execute("PRAGMA database_list").fetchone()[2]:  # on disk, not in memory
            raise error
        real_begin(self)

    monkeypatch.setattr(sync.transaction, "__enter__", full)


def files_of(response: object) -> list[str]:
    return [r.file for r in response.results]  # type: ignore[attr-defined]


# -- search -----------------------------------------------------------------------------


def test_search_answers_from_an_up_to_date_index_in_a_read_only_state_dir(
        store: MemoryStore, read_only_state: Path) -> None:
    response = store.search(QUESTION)
    assert files_of(response) == ["project_database.md"]
    assert len(response.notices) == 1 and "cannot be written" in response.notices[0]


def test_search_sees_edits_made_since_the_read_only_index_was_built(
        store: MemoryStore, read_only_state: Path) -> None:
    write_memory(store.directory, "project_cache.md", memory(
        "Cache", "Redis caches the ledger balances.", "Balances are cached in Redis.\n"))
    response = store.search("where are the ledger balances cached?")
    assert files_of(response) == ["project_cache.md"]
    assert len(response.notices) == 1


def test_search_ranks_from_the_files_when_no_index_can_be_made(tmp_path: Path,
                                                               store: MemoryStore) -> None:
    expected = store.search(QUESTION)
    bare = tmp_path / "bare-state"
    bare.mkdir()  # no index/ in it, and none can be made
    if not _chattr("+i", bare):
        pytest.skip("chattr +i is not available here (needed for a read-only dir as root)")
    try:
        with MemoryStore(store.directory, bare) as cut_off:
            response = cut_off.search(QUESTION)
    finally:
        _chattr("-i", bare)
    assert response.results == expected.results  # the same ranking code, the same answer
    assert len(response.notices) == 1 and "searched the files directly" in response.notices[0]


def test_search_on_a_full_disk_answers_and_keeps_the_index_as_it_was(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.search_index().refresh()
    write_memory(store.directory, "project_cache.md", memory(
        "Cache", "Redis caches the ledger balances.", "Balances are cached in Redis.\n"))
    full_disk(monkeypatch, store.state_dir)
    response = store.search("where are the ledger balances cached?")
    assert files_of(response) == ["project_cache.md"]
    assert len(response.notices) == 1 and "database or disk is full" in response.notices[0]
    monkeypatch.undo()
    assert store.search_index().refresh().updated == ()  # the copy was in memory only
    with MemoryStore(store.directory, store.state_dir) as again:
        assert again.search_index().refresh().updated == ("project_cache.md",)


# -- inject and read --------------------------------------------------------------------


def test_inject_on_a_full_disk_injects_without_saving_session_or_ledger(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings({}, store.directory, store.state_dir)
    store.search_index().refresh()
    full_disk(monkeypatch, store.state_dir)
    injection = inject(store, QUESTION, "s1", settings)
    assert [item.file for item in injection.items] == ["project_database.md"]
    assert any("session s1 was not saved" in n for n in injection.notices)
    assert any("access ledger was not updated" in n for n in injection.notices)
    assert not (store.state_dir / "sessions" / "s1.json").exists()
    assert not (store.state_dir / "access.json").exists()


def run(capsys: pytest.CaptureFixture[str], store: MemoryStore, *args: str) -> Result:
    return store_runner(capsys, store)(*args)


def test_cli_reads_with_a_read_only_state_dir_and_one_notice_per_degradation(
        capsys: pytest.CaptureFixture[str], store: MemoryStore, read_only_state: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_SESSION", "s1")  # without a session nothing is recorded
    searched = run(capsys, store, "search", QUESTION)
    assert searched.code == 0 and "project_database.md" in searched.out
    assert searched.err.count("\n") == 2 and "cannot be written" in searched.err  # index,
    assert "what the model has seen was not recorded" in searched.err  # and the seen record
    injected = run(capsys, store, "inject", QUESTION, "--json")
    assert injected.code == 0
    notices = json.loads(injected.out)["notices"]
    assert len(notices) == 3 and injected.err.count("\n") == 3  # index, session, ledger
    read = run(capsys, store, "read", "project_database.md", "--json")
    assert read.code == 0 and "Postgres 16" in json.loads(read.out)["content"]
    read_notices = json.loads(read.out)["notices"]  # the ledger, the seen record
    assert len(read_notices) == 2 and read.err.count("\n") == 2
    assert "what the model has seen was not recorded" in read_notices[1]
    searched_json = run(capsys, store, "search", QUESTION, "--json")
    assert len(json.loads(searched_json.out)["notices"]) == 1


def test_cli_writes_still_refuse_with_a_read_only_state_dir(
        capsys: pytest.CaptureFixture[str], store: MemoryStore, read_only_state: Path) -> None:
    used = run(capsys, store, "use", "project_database.md")
    assert used.code == 1 and used.err.startswith("error: could not write")
    set_ = run(capsys, store, "set", "project_database.md", "description=Postgres 17")
    assert set_.code == 1 and set_.err.startswith("error: ")
    assert "Postgres 16" in (store.directory / "project_database.md").read_text()


def test_cli_index_refuses_a_read_only_state_dir(
        capsys: pytest.CaptureFixture[str], store: MemoryStore, read_only_state: Path) -> None:
    write_memory(store.directory, "project_cache.md", memory(
        "Cache", "Redis caches the ledger balances.", "Balances are cached in Redis.\n"))
    indexed = run(capsys, store, "index")
    assert indexed.code == 1 and "error: search index" in indexed.err


# -- vectors in a read-only state directory ---------------------------------------------


@pytest.fixture
def semantic_store(tmp_path: Path) -> Iterator[MemoryStore]:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_embedder import FakeEmbedder, factory_of

    from sagemem.embed.embedder import register_embedder

    register_embedder("fake", factory_of(FakeEmbedder()))
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "project_database.md", memory(
        "Ledger database", "We chose Postgres 16 as the ledger database.",
        "We settled on Postgres 16 for the ledger database, not MySQL.\n"))
    with MemoryStore(directory, tmp_path / "state", semantic=True, embedder="fake") as opened:
        yield opened


def _frozen(state: Path) -> Iterator[None]:
    if not _chattr("+i", state):
        pytest.skip("chattr +i is not available here (needed for a read-only dir as root)")
    try:
        yield
    finally:
        _chattr("-i", state)


def test_hybrid_search_reads_existing_vectors_in_a_read_only_state_dir(
        semantic_store: MemoryStore) -> None:
    semantic_store.search(QUESTION)  # builds the index and the vectors
    semantic_store.close()
    for _ in _frozen(semantic_store.state_dir):
        response = semantic_store.search(QUESTION)
        assert files_of(response) == ["project_database.md"]
        assert not [n for n in response.notices if "vectors unavailable" in n]


def test_hybrid_search_ranks_lexically_when_no_vectors_can_be_made(
        semantic_store: MemoryStore) -> None:
    semantic_store.search(QUESTION, mode="lexical")  # the lexical index only
    semantic_store.close()
    for _ in _frozen(semantic_store.state_dir / "index"):
        response = semantic_store.search(QUESTION)
        assert files_of(response) == ["project_database.md"]
        unavailable = [n for n in response.notices if "vectors unavailable" in n]
        assert len(unavailable) == 1 and "ranked by words" in unavailable[0]
