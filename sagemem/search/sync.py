"""Keeping the search index in step with the files: the stat pass, the digest that says
whether anything moved at all, and re-reading only what changed into rows (summary terms,
paragraphs, document frequencies)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import asdict

from ..errors import IndexUnavailable, SagememError
from ..files.folder import MemoryFolder
from ..files.paths import name_key
from .progress import Progress
from .rows import Batch, forget
from .schema import (
    create_lookups,
    drop_lookups,
    loaded_waiting,
    merge_loaded,
    missing_lookups,
    release_free_pages,
    transaction,
)
from .scoring import sum_stats


def stat_pass(store: MemoryFolder, archived: bool) -> dict[str, tuple[int, int, int]]:
    """Every candidate memory file's (mtime_ns, size, inode), reading none of them."""
    store.require_directory()
    found: dict[str, tuple[int, int, int]] = {}
    reserved = store.reserved
    folder = store.folder(archived)  # a symlinked archive/ is refused
    try:
        entries = os.scandir(folder)
    except FileNotFoundError:
        if archived:  # no archive/ yet: nothing archived
            return found
        raise IndexUnavailable(folder, "does not exist") from None
    except OSError as exc:
        raise IndexUnavailable(folder, exc.strerror or str(exc)) from exc
    with entries:  # the hot loop of every query: kept flat on purpose
        for entry in entries:
            name = entry.name
            if not _candidate(name, reserved):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return found


def restat(store: MemoryFolder, archived: bool, listing: dict[str, tuple[int, int, int]],
           names: frozenset[str]) -> dict[str, tuple[int, int, int]]:
    """``listing`` (a stat pass's result) with only ``names`` looked at again — what a
    watcher reported changed: at 10,000 memories the whole pass is ~30 ms of a one-file
    update, these few lstat calls well under one."""
    store.require_directory()
    folder = store.folder(archived)
    found = dict(listing)
    for name in names:
        if not _candidate(name, store.reserved):
            continue
        try:
            st = os.lstat(folder / name)
        except OSError:
            found.pop(name, None)
            continue
        found[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return found


def _candidate(name: str, reserved: frozenset[str]) -> bool:
    """A name a memory can have: ``*.md``, not hidden, UTF-8, not reserved."""
    if name[-3:].lower() != ".md" or name[0] == ".":
        return False
    if name.isascii():
        return name.lower() not in reserved
    return _utf8(name) and name_key(name) not in reserved


def listing_digest(stats: dict[str, tuple[int, int, int]]) -> str:
    """A value that changes whenever any file is added, removed or touched. It follows the
    directory's own listing order: a reordered listing only costs one full comparison."""
    text = repr(list(stats.items()))  # repr runs in C: a third of the cost of formatting
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


BATCH_SECONDS = 0.5
"""Commit at least this often: a build that is stopped or killed (the Claude Code hook
under its host's timeout) loses at most the last half second of work."""
BATCH_FILES = 1000
BULK_FILES = 500
"""From this many new files on, a sync without a deadline drops the term indexes and
creates them again after the load (``schema.LOOKUPS``). Measured at 10,000 memories:
the cold build went from 22 s to 10 s (with the rows built in Python); below a few
hundred files, re-creating the indexes of the files already indexed would cost more
than maintaining them saves."""


def apply_changes(conn: sqlite3.Connection, store: MemoryFolder, archived: bool,
                  on_disk: dict[str, tuple[int, int, int]], progress: Progress | None,
                  digest: str, deadline: float | None = None) -> tuple[list[str], list[str], int]:
    """Re-read what changed, in batches, each its own transaction, newest files first;
    stop at ``deadline`` (``time.monotonic()``) once at least one file is done. Returns
    (re-read, removed, still pending). Each batch compares inside its write transaction,
    so a second process that waited for the first one's batch skips what it did. The
    digest is stored only once nothing is pending: a partial index must never look
    complete to the next sync."""
    with transaction(conn):
        known = {name: (m, s, i) for name, m, s, i in
                 conn.execute("SELECT name, mtime_ns, size, inode FROM files")}
        removed = [n for n in known if n not in on_disk]
        conn.execute("DELETE FROM meta WHERE key IN ('digest', 'stats')")
        create_lookups(conn)  # a bulk load killed before its end left them out
        merge_loaded(conn)  # ... and its postings waiting to be sorted in
        for name in removed:
            forget(conn, name)
    todo = sorted((n for n, st in on_disk.items() if known.get(n) != st),
                  key=lambda n: (-on_disk[n][0], n))  # a stopped build kept the recent ones
    changed = [n for n in todo if n in known]  # re-read while the lookups find their rows
    todo = changed + [n for n in todo if n not in known]
    done, bulk = 0, False
    try:
        while done < len(todo) and (not done or deadline is None or time.monotonic() < deadline):
            if (deadline is None and not bulk and done == len(changed)
                    and len(todo) - done >= BULK_FILES):
                bulk = _start_bulk(conn)
            done = _batch(conn, store, archived, on_disk, todo, done, progress, deadline, bulk)
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # the next sync creates them first
            _end_bulk(conn)
        raise
    _end_bulk(conn)
    if done == len(todo):
        with transaction(conn):
            stats = json.dumps(asdict(sum_stats(conn)))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('stats', ?)", (stats,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('digest', ?)", (digest,))
    return todo[:done], removed, len(todo) - done


def _start_bulk(conn: sqlite3.Connection) -> bool:
    """Drop the term indexes for a load of many new files — only in a sync without a
    deadline (``sagemem index``, a first query): creating them again at 10,000 files
    takes about a second, which the hook's budget does not have. ``synchronous = OFF``
    while it lasts: the index is a cache, so a power cut mid-build costs a rebuild,
    never a memory."""
    with transaction(conn):
        drop_lookups(conn)
    conn.execute("PRAGMA synchronous = OFF")
    return True


def _end_bulk(conn: sqlite3.Connection) -> None:
    """Sort the loaded postings in and create the term indexes again, whether the load
    ended or failed."""
    if loaded_waiting(conn) or missing_lookups(conn):
        with transaction(conn):
            merge_loaded(conn)
            create_lookups(conn)
        release_free_pages(conn)
    conn.execute("PRAGMA synchronous = NORMAL")


def _batch(conn: sqlite3.Connection, store: MemoryFolder, archived: bool,
           on_disk: dict[str, tuple[int, int, int]], todo: list[str], done: int,
           progress: Progress | None, deadline: float | None, bulk: bool) -> int:
    """Index ``todo[done:]`` in one transaction until the batch or the deadline is over;
    returns the new ``done``. Outside a bulk load its postings are sorted into place in
    the same transaction."""
    stop = time.monotonic() + BATCH_SECONDS
    if deadline is not None:
        stop = min(stop, deadline)
    with transaction(conn):
        batch = Batch(conn)
        names = todo[done:done + BATCH_FILES]
        indexed = _indexed_stats(conn, names)
        for name in names:
            if indexed.get(name) != on_disk[name]:  # not done meanwhile by another
                if name in indexed:
                    forget(conn, name)
                _add(batch, store, archived, name)
            done += 1
            if progress and (done % 200 == 0 or done == len(todo)):
                progress(done, len(todo), "indexing")
            if time.monotonic() >= stop:
                break
        batch.flush()
        if not bulk:
            merge_loaded(conn)
    return done


def _indexed_stats(conn: sqlite3.Connection, names: list[str]
                   ) -> dict[str, tuple[int, int, int]]:
    """The (mtime_ns, size, inode) indexed for those of ``names`` the index holds: one
    query a batch (inside its transaction, so no other process changes them meanwhile),
    not two a file."""
    found: dict[str, tuple[int, int, int]] = {}
    for i in range(0, len(names), 500):
        chunk = names[i:i + 500]
        found.update((n, (m, s, ino)) for n, m, s, ino in conn.execute(
            "SELECT name, mtime_ns, size, inode FROM files WHERE name IN "
            f"({', '.join('?' * len(chunk))})", chunk))
    return found


def _add(batch: Batch, store: MemoryFolder, archived: bool, name: str) -> None:
    """Index one file; one that cannot be read is remembered with its error, no tokens."""
    path = store.folder(archived) / name
    try:
        st = os.lstat(path)
        memory = store.get(name, archived=archived)
    except FileNotFoundError:
        return
    except SagememError as exc:
        batch.add_unreadable(name, st, str(exc))
        return
    batch.add(name, st, memory)


def _utf8(name: str) -> bool:
    """A file name the file system gave us with bytes that are not UTF-8 is no memory."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
