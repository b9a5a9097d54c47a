"""The derived search index (``sagemem.search.index``): a rebuildable SQLite cache.

It must see every edit, new file, rename and deletion by the next search, rebuild a
corrupt or foreign cache with one notice, lose nothing when deleted, and never index
reserved or temporary files. Every test uses a memory directory and a state directory
under tmp_path.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagemem.files.atomic import TMP_SUFFIX
from sagemem.search.index import INDEX_VERSION, SearchIndex
from sagemem.store import MemoryStore

DEPLOY = """\
---
name: Deploy process
description: How the web app is deployed to the kubernetes cluster with kubectl.
metadata:
  type: project
tags: [deploy]
---
# Deploy

Main is deployed to staging on every merge. Production needs a signed tag.

```bash
kubectl apply -f k8s/staging.yaml

kubectl rollout status deploy/web
```

Rollbacks use `kubectl rollout undo`; never edit pods by hand.
"""
EDITOR = """\
---
name: 编辑器偏好
description: 用户使用 Neovim 编辑代码，格式化用 ruff。
metadata:
  type: user
---
用户每天用 Neovim 写代码，终端是 tmux。

格式化统一使用 ruff，提交前必须运行 ruff check。
"""
PETS = """\
---
name: Pets
description: The user's cat is called Zhima and eats salmon.
metadata:
  type: user
---
The cat is called Zhima (芝麻), a grey tabby.

She eats salmon twice a day and hates the vacuum cleaner.
"""
COFFEE = """\
---
name: Coffee order
description: The user drinks a flat white with oat milk, no sugar.
metadata:
  type: user
---
A flat white with oat milk. No sugar, ever.

On Fridays a cortado instead.
"""
LIBRARY = """\
---
name: Library card
description: 图书馆借书证在抽屉里，到期日是三月。
metadata:
  type: reference
---
借书证放在书桌左边的抽屉里。

续借要在三月之前去前台办理。
"""
MEMORIES = {
    "project_deploy.md": DEPLOY,
    "user_editor.md": EDITOR,
    "user_pets.md": PETS,
    "user_coffee.md": COFFEE,
    "reference_library.md": LIBRARY,
}
SQLITE_HEADER = b"SQLite format 3\x00"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    """A memory directory of five memories (English, Chinese, one code fence) and MEMORY.md."""
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory index\n\n- [Pets](user_pets.md)\n",
                                         encoding="utf-8")
    for name, text in MEMORIES.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def store(memory_dir: Path, state_dir: Path) -> Iterator[MemoryStore]:
    """A store over ``memory_dir`` whose index has not been built yet."""
    with MemoryStore(memory_dir, state_dir) as opened:
        yield opened


@pytest.fixture
def indexed_store(store: MemoryStore) -> MemoryStore:
    """A store whose index is built and up to date."""
    store.search_index().sync()
    return store


def found(store: MemoryStore, query: str) -> list[str]:
    return [r.file for r in store.search(query).results]


def index_path(state_dir: Path) -> Path:
    """The one index file of the test's memory directory."""
    (path,) = (state_dir / "index").glob("search-*.sqlite3")
    return path


def reopen(memory_dir: Path, state_dir: Path) -> MemoryStore:
    """A fresh store, as a new process would open it."""
    return MemoryStore(memory_dir, state_dir)


def index_files(store: MemoryStore) -> set[str]:
    return {f.name for f in store.search_index().files().values()}


# -- building and keeping up to date ------------------------------------------------------


def test_first_sync_indexes_every_memory(store: MemoryStore) -> None:
    report = store.search_index().sync()
    assert report.scanned == len(MEMORIES)
    assert sorted(report.updated) == sorted(MEMORIES)
    assert report.removed == ()
    assert index_files(store) == set(MEMORIES)


def test_index_lives_in_the_state_directory_not_the_memory_directory(
    indexed_store: MemoryStore, memory_dir: Path, state_dir: Path
) -> None:
    assert index_path(state_dir).is_file()
    assert sorted(p.name for p in memory_dir.iterdir()) == sorted([*MEMORIES, "MEMORY.md"])


def test_sync_with_nothing_changed_reads_no_file(indexed_store: MemoryStore) -> None:
    report = indexed_store.search_index().sync()
    assert report.scanned == len(MEMORIES)
    assert report.updated == ()
    assert report.removed == ()


def test_sync_rereads_only_the_file_that_changed(
    indexed_store: MemoryStore, memory_dir: Path
) -> None:
    (memory_dir / "user_coffee.md").write_text(COFFEE.replace("cortado", "macchiato"),
                                                encoding="utf-8")
    report = indexed_store.search_index().sync()
    assert report.updated == ("user_coffee.md",)


def test_search_sees_an_edit_made_after_indexing(
    indexed_store: MemoryStore, memory_dir: Path
) -> None:
    assert found(indexed_store, "salmon") == ["user_pets.md"]
    (memory_dir / "user_pets.md").write_text(PETS.replace("salmon", "sardines"),
                                             encoding="utf-8")
    assert found(indexed_store, "salmon") == []
    assert found(indexed_store, "sardines") == ["user_pets.md"]


def test_search_sees_an_edit_made_by_an_editor_that_replaces_the_file(
    indexed_store: MemoryStore, memory_dir: Path
) -> None:
    # Many editors write a new file and rename it over the old one: a new inode.
    new = memory_dir / "user_pets.md.swp"
    new.write_text(PETS.replace("salmon", "sardines"), encoding="utf-8")
    os.replace(new, memory_dir / "user_pets.md")
    assert found(indexed_store, "sardines") == ["user_pets.md"]


def test_edit_seen_by_a_search_in_a_new_process(memory_dir: Path, state_dir: Path) -> None:
    with reopen(memory_dir, state_dir) as first:
        assert found(first, "sardines") == []
    (memory_dir / "user_pets.md").write_text(PETS.replace("salmon", "sardines"),
                                             encoding="utf-8")
    with reopen(memory_dir, state_dir) as second:
        assert found(second, "sardines") == ["user_pets.md"]


def test_search_sees_a_new_file(indexed_store: MemoryStore, memory_dir: Path) -> None:
    assert found(indexed_store, "kayak") == []
    (memory_dir / "user_hobbies.md").write_text(
        "---\nname: Hobbies\ndescription: The user paddles a sea kayak on weekends.\n"
        "metadata:\n  type: user\n---\nA red sea kayak, kept at the harbour.\n",
        encoding="utf-8")
    assert found(indexed_store, "kayak") == ["user_hobbies.md"]


def test_search_sees_a_rename(indexed_store: MemoryStore, memory_dir: Path) -> None:
    assert found(indexed_store, "Zhima") == ["user_pets.md"]
    os.rename(memory_dir / "user_pets.md", memory_dir / "user_cat.md")
    assert found(indexed_store, "Zhima") == ["user_cat.md"]
    assert index_files(indexed_store) == set(MEMORIES) - {"user_pets.md"} | {"user_cat.md"}


def test_search_forgets_a_deleted_memory(indexed_store: MemoryStore, memory_dir: Path) -> None:
    assert found(indexed_store, "Zhima") == ["user_pets.md"]
    (memory_dir / "user_pets.md").unlink()
    assert found(indexed_store, "Zhima") == []
    assert "user_pets.md" not in index_files(indexed_store)
    assert indexed_store.search("salmon").coverage.files_scanned == len(MEMORIES) - 1


def test_incremental_updates_give_the_same_results_as_a_rebuild(
    indexed_store: MemoryStore, memory_dir: Path, state_dir: Path
) -> None:
    # Document frequencies are kept in step file by file; a rebuild must agree with them.
    (memory_dir / "user_pets.md").write_text(PETS.replace("salmon", "sardines"),
                                             encoding="utf-8")
    (memory_dir / "user_coffee.md").unlink()
    os.rename(memory_dir / "reference_library.md", memory_dir / "reference_books.md")
    queries = ["sardines", "kubectl rollout", "借书证", "Neovim ruff", "flat white"]
    incremental = [indexed_store.search(q).results for q in queries]
    indexed_store.search_index().rebuild()
    assert [indexed_store.search(q).results for q in queries] == incremental


# -- a cache, never the source of truth -----------------------------------------------


def test_deleting_the_index_loses_nothing(
    memory_dir: Path, state_dir: Path
) -> None:
    queries = ["Zhima", "kubectl rollout", "格式化", "oat milk"]
    with reopen(memory_dir, state_dir) as before:
        expected = [before.search(q).results for q in queries]
    assert all(expected)
    for leftover in index_path(state_dir).parent.iterdir():
        leftover.unlink()
    with reopen(memory_dir, state_dir) as after:
        assert [after.search(q).results for q in queries] == expected
        assert index_path(state_dir).is_file()


def test_rebuild_reports_every_file(indexed_store: MemoryStore) -> None:
    report = indexed_store.search_index().rebuild()
    assert report.scanned == len(MEMORIES)
    assert sorted(report.updated) == sorted(MEMORIES)
    assert found(indexed_store, "Zhima") == ["user_pets.md"]


def test_rebuild_reports_progress_up_to_the_total(indexed_store: MemoryStore) -> None:
    calls: list[tuple[int, int, str]] = []
    indexed_store.search_index().rebuild(
        progress=lambda done, total, what: calls.append((done, total, what)))
    assert calls and calls[-1] == (len(MEMORIES), len(MEMORIES), "indexing")


def test_a_build_of_many_files_reports_monotonic_counts_up_to_the_total(
        tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    for n in range(1234):
        (memory / f"project_n{n:04}.md").write_text(
            f"---\nname: Note {n}\ndescription: note number {n}\n---\nbody {n}\n",
            encoding="utf-8")
    calls: list[tuple[int, int, str]] = []
    with MemoryStore(memory, tmp_path / "state") as store:
        store.search_index().sync(
            progress=lambda done, total, what: calls.append((done, total, what)))
    done = [d for d, _, _ in calls]
    assert len(calls) > 2 and done == sorted(done) and len(set(done)) == len(done)
    assert {(t, w) for _, t, w in calls} == {(1234, "indexing")}
    assert done[-1] == 1234


def test_corrupt_cache_is_rebuilt_with_exactly_one_notice(
    memory_dir: Path, state_dir: Path
) -> None:
    with reopen(memory_dir, state_dir) as first:
        first.search("Zhima")
    index_path(state_dir).write_bytes(b"\x00not a database\xff" * 256)
    with reopen(memory_dir, state_dir) as second:
        response = second.search("Zhima")
        assert [r.file for r in response.results] == ["user_pets.md"]
        assert len(response.notices) == 1
        assert str(index_path(state_dir)) in response.notices[0]
        assert "\n" not in response.notices[0]
        assert second.search("Zhima").notices == ()
    assert index_path(state_dir).read_bytes().startswith(SQLITE_HEADER)


def _corrupt_table(path: Path, table: str) -> None:
    """Overwrite the root page of one table, leaving the header and schema intact."""
    with sqlite3.connect(path) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                            (table,)).fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page_size:root * page_size] = b"\xde\xad\xbe\xef" * (page_size // 4)
    path.write_bytes(bytes(data))


def test_cache_with_a_corrupt_data_page_is_rebuilt_with_one_notice(
    memory_dir: Path, state_dir: Path
) -> None:
    with reopen(memory_dir, state_dir) as first:
        first.search("Zhima")
    _corrupt_table(index_path(state_dir), "files")
    with reopen(memory_dir, state_dir) as second:
        response = second.search("Zhima")
    assert [r.file for r in response.results] == ["user_pets.md"]
    assert len(response.notices) == 1


def test_index_of_another_version_is_rebuilt_with_a_notice(
    memory_dir: Path, state_dir: Path
) -> None:
    with reopen(memory_dir, state_dir) as first:
        first.search("Zhima")
    with sqlite3.connect(index_path(state_dir)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'",
                     (INDEX_VERSION + "-old",))
    conn.close()
    with reopen(memory_dir, state_dir) as second:
        response = second.search("Zhima")
        assert [r.file for r in response.results] == ["user_pets.md"]
        assert len(response.notices) == 1
        assert "version" in response.notices[0]
    with sqlite3.connect(index_path(state_dir)) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
    conn.close()
    assert version == INDEX_VERSION


VERSION_8_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, mtime_ns INTEGER, size INTEGER,
    inode INTEGER, revision TEXT, info TEXT NOT NULL, slen REAL NOT NULL DEFAULT 0,
    blen INTEGER NOT NULL DEFAULT 0,
    para_first INTEGER NOT NULL DEFAULT 0, para_end INTEGER NOT NULL DEFAULT 0,
    sterm_first INTEGER NOT NULL DEFAULT 0, sterm_end INTEGER NOT NULL DEFAULT 0,
    pterm_first INTEGER NOT NULL DEFAULT 0, pterm_end INTEGER NOT NULL DEFAULT 0);
CREATE TABLE paras (
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, plen INTEGER NOT NULL, asks INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sterms (term TEXT NOT NULL, file_id INTEGER NOT NULL, tf REAL NOT NULL);
CREATE TABLE pterms (term TEXT NOT NULL, file_id INTEGER NOT NULL, para_id INTEGER NOT NULL,
                     tf INTEGER NOT NULL);
CREATE TABLE vocab (term TEXT PRIMARY KEY, sdf INTEGER NOT NULL DEFAULT 0,
                    pdf INTEGER NOT NULL DEFAULT 0, fdf INTEGER NOT NULL DEFAULT 0)
    WITHOUT ROWID;
CREATE INDEX sterms_term ON sterms (term, file_id);
CREATE INDEX pterms_term ON pterms (term, file_id);
CREATE INDEX paras_file ON paras (file_id);
"""
"""The index layout of version 8 (before ``pterms`` was keyed by term), as it was."""


def test_an_index_of_the_version_8_layout_is_rebuilt_and_searched(
    memory_dir: Path, state_dir: Path
) -> None:
    with reopen(memory_dir, state_dir) as first:
        first.search("Zhima")
    path = index_path(state_dir)
    with sqlite3.connect(path) as conn:
        directory = conn.execute("SELECT value FROM meta WHERE key = 'directory'").fetchone()[0]
    conn.close()
    for leftover in path.parent.iterdir():
        leftover.unlink()
    old = sqlite3.connect(path)
    old.executescript(VERSION_8_TABLES)
    old.executemany("INSERT INTO meta VALUES (?, ?)", [("version", "8"), ("directory", directory)])
    old.execute("INSERT INTO files (name, info) VALUES ('user_pets.md', '{}')")  # stale
    old.commit()
    old.close()
    with reopen(memory_dir, state_dir) as second:
        response = second.search("Zhima salmon")
        assert [r.file for r in response.results] == ["user_pets.md"]
        assert len(response.notices) == 1 and "another sagemem version" in response.notices[0]
        conn = second.search_index().conn
        assert conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == (
            INDEX_VERSION,)
        assert "WITHOUT ROWID" in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'pterms'").fetchone()[0]
        assert second.search("kubectl rollout").results[0].file == "project_deploy.md"


def test_two_directories_sharing_a_state_directory_keep_their_own_index(
    memory_dir: Path, state_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other-memory"
    other.mkdir()
    for name, text in MEMORIES.items():
        (other / name).write_text(text, encoding="utf-8")
    (other / "user_coffee.md").unlink()
    with reopen(other, state_dir) as first:
        assert found(first, "Zhima") == ["user_pets.md"]
    with reopen(memory_dir, state_dir) as second:
        response = second.search("kubectl rollout")
        assert [r.file for r in response.results] == ["project_deploy.md"]
        assert response.notices == ()
        assert index_files(second) == set(MEMORIES)
    assert len(list((state_dir / "index").glob("search-*.sqlite3"))) == 2


def test_unreadable_memory_does_not_stop_the_others_being_indexed(
    store: MemoryStore, memory_dir: Path
) -> None:
    (memory_dir / "user_broken.md").write_bytes(
        b"---\nname: Broken\ndescription: Zhima salmon\n---\n\xff\xfe not UTF-8\n")
    report = store.search_index().sync()
    assert "user_broken.md" in report.updated
    assert index_files(store) == set(MEMORIES)
    assert found(store, "Zhima") == ["user_pets.md"]
    assert found(store, "kubectl rollout") == ["project_deploy.md"]


def test_unreadable_memory_is_indexed_once_it_is_fixed(
    store: MemoryStore, memory_dir: Path
) -> None:
    broken = memory_dir / "user_hobbies.md"
    broken.write_bytes(b"---\ndescription: sea kayak\n---\n\xff kayak\n")
    assert found(store, "kayak") == []
    broken.write_text("---\ndescription: The user paddles a sea kayak.\n---\nA red kayak.\n",
                      encoding="utf-8")
    assert found(store, "kayak") == ["user_hobbies.md"]


def test_index_file_is_a_sqlite_database_with_no_pickled_values(
    indexed_store: MemoryStore, state_dir: Path
) -> None:
    path = index_path(state_dir)
    assert path.read_bytes()[:16] == SQLITE_HEADER
    with sqlite3.connect(path) as conn:
        tables = [t for (t,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        blobs = {}
        for table in tables:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            for column in columns:
                count = conn.execute(f"SELECT COUNT(*) FROM {table} "
                                     f"WHERE typeof({column}) = 'blob'").fetchone()[0]
                if count:
                    blobs[f"{table}.{column}"] = count
    conn.close()
    assert blobs == {}


def test_reserved_and_temporary_files_are_not_indexed(
    store: MemoryStore, memory_dir: Path
) -> None:
    (memory_dir / "MEMORY.md").write_text(
        "# Memory index\n\n- [Pelican](user_pelican.md): the pelican named Gustav\n",
        encoding="utf-8")
    (memory_dir / "session-log.md").write_text("Gustav the pelican came up today.\n",
                                               encoding="utf-8")
    (memory_dir / f".user_birds.md.abcd{TMP_SUFFIX}").write_text(
        "---\ndescription: The pelican is named Gustav.\n---\nGustav the pelican.\n",
        encoding="utf-8")
    report = store.search_index().sync()
    assert report.scanned == len(MEMORIES)
    assert index_files(store) == set(MEMORIES)
    assert found(store, "Gustav pelican") == []


def test_names_in_reserved_json_are_not_indexed(
    memory_dir: Path, state_dir: Path
) -> None:
    state_dir.mkdir()
    (state_dir / "reserved.json").write_text('["user_pets.md"]', encoding="utf-8")
    with reopen(memory_dir, state_dir) as store:
        assert found(store, "Zhima") == []
        assert "user_pets.md" not in index_files(store)


# -- watching -------------------------------------------------------------------------


def test_watched_index_sees_an_edit_on_a_later_search(
    store: MemoryStore, memory_dir: Path
) -> None:
    store.search_index().watch()
    assert found(store, "sardines") == []
    (memory_dir / "user_pets.md").write_text(PETS.replace("salmon", "sardines"),
                                             encoding="utf-8")
    deadline = time.monotonic() + 2.0
    while found(store, "sardines") != ["user_pets.md"]:
        if time.monotonic() > deadline:
            pytest.fail("the watched index did not see the edit within 2 s")
        time.sleep(0.05)


def test_a_watched_index_restats_only_the_files_the_watcher_named(
    store: MemoryStore, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sagemem.search import index as index_mod

    index = store.search_index()
    index.watch()
    assert found(store, "Zhima") == ["user_pets.md"]  # the first look is a full stat pass
    deadline = time.monotonic() + 2.0
    while index._watcher is None or not index._watcher.ready:
        assert time.monotonic() < deadline, "the watcher did not start"
        time.sleep(0.05)
    found(store, "Zhima")  # whatever the watcher saw while starting

    def no_full_pass(*_: object) -> None:
        raise AssertionError("a full stat pass for a change the watcher named")

    def save(name: str, text: str) -> None:  # as editors save: whole, never seen half-written
        (memory_dir / f".{name}.tmp").write_text(text, encoding="utf-8")
        os.replace(memory_dir / f".{name}.tmp", memory_dir / name)

    monkeypatch.setattr(index_mod, "stat_pass", no_full_pass)
    save("user_pets.md", PETS.replace("salmon", "sardines"))
    save("user_new.md", PETS.replace("Zhima", "Mochi"))
    reported(index, {"user_pets.md", "user_new.md"})
    assert found(store, "sardines") == ["user_pets.md"] and found(store, "Mochi") != []
    (memory_dir / "user_new.md").unlink()
    reported(index, {"user_new.md"})
    assert found(store, "Mochi") == []


def reported(index: SearchIndex, names: set[str]) -> None:
    """Wait until the watcher has reported changes to ``names`` (a search before that
    would rank a file the disk no longer holds, and fall back to a full look, rightly)."""
    watcher = index._watcher
    assert watcher is not None
    deadline = time.monotonic() + 3.0
    while not (watcher._names is not None and names <= watcher._names):
        assert time.monotonic() < deadline, f"the watcher did not report {names} within 3 s"
        time.sleep(0.02)


def test_closing_the_store_stops_the_watcher(store: MemoryStore) -> None:
    index = store.search_index()
    index.watch()
    watcher = index._watcher
    assert watcher is not None
    store.close()
    watcher.join(timeout=2.0)
    assert not watcher.is_alive()


def test_search_index_of_a_store_is_opened_once(store: MemoryStore, state_dir: Path) -> None:
    index = store.search_index()
    assert isinstance(index, SearchIndex)
    assert store.search_index() is index
    assert index.path.parent == state_dir / "index" and index.path.name.startswith("search-")
