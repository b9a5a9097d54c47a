"""Keeping the search index in step with the files: the stat pass, the digest that says
whether anything moved at all, and re-reading only what changed into rows (summary terms,
paragraphs, document frequencies)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from ..errors import IndexUnavailable, SagememError
from ..files.folder import MemoryFolder
from ..files.memory import Memory
from ..files.paths import name_key
from .scoring import sum_stats
from .text import paragraphs, tokens

Progress = Callable[[int, int], None]
"""Called with (done, total) while many files are (re)indexed."""
SUMMARY_WEIGHTS = {"description": 1.0, "name": 1.0, "aliases": 2.0, "file": 0.5, "tags": 0.5}


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
            if name[-3:].lower() != ".md" or name[0] == ".":
                continue
            if name.isascii():
                if name.lower() in reserved:
                    continue
            elif not _utf8(name) or name_key(name) in reserved:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return found


def listing_digest(stats: dict[str, tuple[int, int, int]]) -> str:
    """A value that changes whenever any file is added, removed or touched. It follows the
    directory's own listing order: a reordered listing only costs one full comparison."""
    text = repr(list(stats.items()))  # repr runs in C: a third of the cost of formatting
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


BATCH_SECONDS = 0.5
"""Commit at least this often: a build that is stopped or killed (the Claude Code hook
under its host's timeout, a cold index of 10,000 memories takes ~19 s) loses at most the
last half second of work."""
BATCH_FILES = 1000


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
        for name in removed:
            _forget(conn, name)
    todo = sorted((n for n, st in on_disk.items() if known.get(n) != st),
                  key=lambda n: (-on_disk[n][0], n))  # a stopped build kept the recent ones
    done = 0
    while done < len(todo) and (not done or deadline is None or time.monotonic() < deadline):
        done = _batch(conn, store, archived, on_disk, todo, done, progress, deadline)
    if done == len(todo):
        with transaction(conn):
            stats = json.dumps(asdict(sum_stats(conn)))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('stats', ?)", (stats,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('digest', ?)", (digest,))
    return todo[:done], removed, len(todo) - done


def _batch(conn: sqlite3.Connection, store: MemoryFolder, archived: bool,
           on_disk: dict[str, tuple[int, int, int]], todo: list[str], done: int,
           progress: Progress | None, deadline: float | None) -> int:
    """Index ``todo[done:]`` in one transaction until the batch or the deadline is over;
    returns the new ``done``."""
    stop = time.monotonic() + BATCH_SECONDS
    if deadline is not None:
        stop = min(stop, deadline)
    with transaction(conn):
        for name in todo[done:done + BATCH_FILES]:
            row = conn.execute("SELECT mtime_ns, size, inode FROM files WHERE name = ?",
                               (name,)).fetchone()
            if row is None or tuple(row) != on_disk[name]:  # not done meanwhile by another
                _forget(conn, name)
                _add(conn, store, archived, name)
            done += 1
            if progress and (done % 200 == 0 or done == len(todo)):
                progress(done, len(todo))
            if time.monotonic() >= stop:
                break
    return done


def _forget(conn: sqlite3.Connection, name: str) -> None:
    row = conn.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
    if row is None:
        return
    file_id = row[0]
    s_terms = [t for (t,) in conn.execute("SELECT term FROM sterms WHERE file_id = ?",
                                          (file_id,))]
    p_counts = Counter(t for (t,) in conn.execute(
        "SELECT term FROM pterms WHERE file_id = ?", (file_id,)))
    _count(conn, s_terms, p_counts, -1)
    for table in ("sterms", "pterms", "paras"):
        conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _add(conn: sqlite3.Connection, store: MemoryFolder, archived: bool, name: str) -> None:
    """Index one file; one that cannot be read is remembered with its error, no tokens."""
    path = store.folder(archived) / name
    try:
        st = os.lstat(path)
        memory = store.get(name, archived=archived)
    except FileNotFoundError:
        return
    except SagememError as exc:
        _insert_file(conn, name, st, None, {"error": str(exc)}, 0.0)
        return
    body_length = 0
    summary = summary_terms(memory)
    file_id = _insert_file(conn, name, st, memory.revision, file_info(memory),
                           sum(summary.values()))
    conn.executemany("INSERT INTO sterms VALUES (?, ?, ?)",
                     [(t, file_id, tf) for t, tf in summary.items()])
    p_counts: Counter[str] = Counter()
    for para in paragraphs(memory.body, memory.body_line):
        counts = Counter(tokens(para.text))
        cur = conn.execute("INSERT INTO paras VALUES (NULL, ?, ?, ?, ?, ?)",
                           (file_id, para.start_line, para.end_line,
                            sum(counts.values()), _asks(para.text)))
        conn.executemany("INSERT INTO pterms VALUES (?, ?, ?, ?)",
                         [(t, file_id, cur.lastrowid, n) for t, n in counts.items()])
        p_counts.update(counts.keys())
        body_length += sum(counts.values())
    conn.execute("UPDATE files SET blen = ? WHERE id = ?", (body_length, file_id))
    _count(conn, list(summary), p_counts, +1)


def _insert_file(conn: sqlite3.Connection, name: str, st: os.stat_result,
                 revision: str | None, info: dict[str, Any], slen: float) -> int:
    cur = conn.execute(
        "INSERT INTO files VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, 0)",
        (name, st.st_mtime_ns, st.st_size, st.st_ino, revision,
         json.dumps(info, ensure_ascii=False), slen))
    return int(cur.lastrowid or 0)  # always set after an INSERT


def _count(conn: sqlite3.Connection, s_terms: Iterable[str], p_counts: Counter[str],
           sign: int) -> None:
    """Keep document frequencies in step: summaries, paragraphs and whole files."""
    s_set = set(s_terms)
    rows = [(t, sign * (t in s_set), sign * p_counts.get(t, 0), sign)
            for t in s_set | set(p_counts)]
    conn.executemany(
        "INSERT INTO vocab VALUES (?, ?, ?, ?) ON CONFLICT (term) DO UPDATE SET "
        "sdf = sdf + excluded.sdf, pdf = pdf + excluded.pdf, fdf = fdf + excluded.fdf",
        rows)


def summary_terms(memory: Memory) -> dict[str, float]:
    """The weighted term frequencies of a memory's summary fields."""
    weights: dict[str, float] = defaultdict(float)
    fields = {
        "description": memory.description,
        "name": memory.name or "",
        "aliases": " ; ".join(memory.aliases),
        "file": memory.file[:-3].replace("_", " "),
        "tags": " ".join(memory.tags),
    }
    for field, text in fields.items():
        for term in tokens(text):
            weights[term] += SUMMARY_WEIGHTS[field]
    return dict(weights)


def file_info(memory: Memory) -> dict[str, Any]:
    """The fields a search result shows, kept in the index so no file is read to rank."""
    return {
        "name": memory.name, "description": memory.description, "type": memory.type,
        "tags": list(memory.tags),
        "invalid_at": memory.invalid_at.isoformat() if memory.invalid_at else None,
        "superseded_by": memory.superseded_by,
        "baseline": memory.baseline, "baselinePriority": memory.baseline_priority,
    }


def _utf8(name: str) -> bool:
    """A file name the file system gave us with bytes that are not UTF-8 is no memory."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _asks(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


class transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        if not kind:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:  # SQLite itself rolls back on e.g. SQLITE_FULL
            self.conn.execute("ROLLBACK")
