"""The derived search index: a rebuildable SQLite cache of every memory's tokens.

Re-reading and re-tokenising every file on every question (what sage-mem does) does not
scale, so the tokens live in ``<state>/index/search.sqlite3``, updated incrementally:
each query first compares every file's (mtime_ns, size, inode) with what was indexed and
re-reads only the files that changed. The index is a cache, never the source of truth:
deleting it loses nothing, a corrupt or foreign-version file is rebuilt with a one-line
notice, and it holds only numbers and tokens (never anything executed or unpickled).

A long-lived process can call ``watch()``: a watchfiles thread then reports changes and a
query with nothing changed skips the stat pass entirely.

This module owns the database (schema, versions, damage) and the lookups; turning files
into rows is ``sync.py``, and the BM25 queries are ``scoring.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IndexUnavailable
from ..files.folder import MemoryFolder
from .degraded import cannot_write, in_memory, is_busy, open_read_only, waiting_until
from .progress import Progress as Progress
from .schema import create_schema, transaction
from .scoring import Stats, sum_stats
from .sync import apply_changes, listing_digest, restat, stat_pass
from .watch import DirectoryWatcher

INDEX_VERSION = "9"
"""Bump when the schema, the tokeniser or the summary fields kept per file change (8:
``valid_at``; 9: ``pterms`` keyed by term, no rowid, no second index): an index of
another version is rebuilt."""
INDEX_DIR = "index"
CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB: only these mean damage
BUSY_TIMEOUT_SECONDS = 300  # a cold build of 10,000 memories by another process takes ~30 s


@dataclass(frozen=True)
class IndexedFile:
    """One memory as the index knows it: its summary fields and where its body starts."""

    id: int
    name: str
    revision: str | None
    info: dict[str, Any]


@dataclass(frozen=True)
class SyncReport:
    """What one refresh of the index did."""

    scanned: int
    updated: tuple[str, ...]
    removed: tuple[str, ...]
    pending: int = 0
    """Files left unindexed because the sync's deadline came first."""


@dataclass(frozen=True)
class TermStats:
    """How many summaries, paragraphs and files hold a term."""

    sdf: int
    pdf: int
    fdf: int



class SearchIndex:
    """The persistent, incrementally updated token index of one memory directory — or,
    with ``archived=True``, of its ``archive/`` (a separate index, so archived memories
    never weigh on the statistics of an ordinary search)."""

    def __init__(self, store: MemoryFolder, path: Path | None = None, *,
                 archived: bool = False) -> None:
        self.store = store
        self.archived = archived
        self.directory = store.folder(archived)
        self.path = path or index_path(store, archived=archived)
        self.notices: list[str] = []
        self._conn: sqlite3.Connection | None = None
        self._watcher: DirectoryWatcher | None = None
        self._stats: Stats | None = None
        self._seen_digest: str | None = None
        self._listing: dict[str, tuple[int, int, int]] | None = None  # the last look, watched
        self._scanned = 0
        self.unsaved: str | None = None
        """Why this index cannot be saved to disk (then it is searched read-only or in
        memory; see ``degraded.py``), or None."""

    # -- connection ---------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def close(self) -> None:
        self._stats = None
        if self._watcher:
            self._watcher.stop()
            self._watcher = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_on_disk()
        except IndexUnavailable as exc:
            return self._open_degraded(exc.reason)

    def _open_on_disk(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnavailable(self.path, exc.strerror or str(exc)) from exc
        conn = self._connect()
        try:
            meta = self._meta(conn)
            if meta == self._expected_meta():
                return conn
            if meta is None:  # a new, empty database
                self._create(conn)
                return conn
            conn.close()
            reason = "was made by another sagemem version or for another directory"
        except sqlite3.DatabaseError as exc:
            if cannot_write(exc):  # a full or read-only state directory is no damage
                conn.close()
                raise IndexUnavailable(self.path, str(exc)) from exc
            reason = f"was unreadable ({exc})"
        self.notices.append(f"search index {self.path} {reason}; rebuilt it")
        self._remove_files()
        conn = self._connect()
        self._create(conn)
        return conn

    def _open_degraded(self, reason: str) -> sqlite3.Connection:
        """The index read-only as it is, else an empty one in memory (``degraded.py``)."""
        conn = open_read_only(self.path, BUSY_TIMEOUT_SECONDS)
        try:
            if conn is not None and self._meta(conn) == self._expected_meta():
                self._unsaved(reason, "cannot be written")
                return conn
        except sqlite3.DatabaseError:
            pass
        if conn is not None:
            conn.close()
        conn = in_memory()
        self._create(conn)
        self._unsaved(reason, "cannot be used")
        return conn

    def _to_memory(self, reason: str) -> None:
        """Go on in a copy in memory of the index as it is: a write to it failed."""
        copy = in_memory(self.conn)
        self.conn.close()
        self._conn, self._stats = copy, None
        self._unsaved(reason, "cannot be written")

    def _unsaved(self, reason: str, what: str) -> None:
        """One notice per index, however many writes it then skips."""
        if self.unsaved is None:
            self.unsaved = reason
            searched = ("searched the files directly" if what == "cannot be used"
                        else "searched it without saving changes")
            self.notices.append(f"search index {self.path} {what} ({reason}); {searched}; "
                                "run sagemem index once the state directory is writable")

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA trusted_schema = OFF")
            # before the first write creates the file (no effect on an existing one): lets a
            # bulk build give its loading pages back (schema.release_free_pages)
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError as exc:
            raise IndexUnavailable(self.path, str(exc)) from exc
        return conn

    def _expected_meta(self) -> dict[str, str]:
        return {"version": INDEX_VERSION, "directory": str(self.directory)}

    @staticmethod
    def _meta(conn: sqlite3.Connection) -> dict[str, str] | None:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not tables:
            return None
        return dict(conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('version', 'directory')").fetchall())

    def _create(self, conn: sqlite3.Connection) -> None:
        create_schema(conn, self._expected_meta())

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise IndexUnavailable(self.path, exc.strerror or str(exc)) from exc

    def recover(self, error: sqlite3.DatabaseError) -> bool:
        """Drop an index found damaged mid-use, so the next access rebuilds it; False (and
        nothing touched) when the error is not damage — a busy database is not corrupt."""
        if getattr(error, "sqlite_errorcode", None) not in CORRUPT_CODES:
            return False
        self.notices.append(f"search index {self.path} was damaged ({error}); rebuilt it")
        self.close()
        self._remove_files()
        return True

    def rebuild(self, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and build it again from the files."""
        self.close()
        self._remove_files()
        return self.sync(progress=progress)

    # -- keeping it fresh -----------------------------------------------------------

    def watch(self) -> None:
        """Follow the directory with watchfiles so queries need no stat pass (long-lived use).
        Called again after the watcher stopped (the folder was removed and came back), it
        starts a new one; until then, queries stat every file as without a watcher."""
        if self._watcher is not None and not self._watcher.is_alive():
            self._watcher = None
            self._listing = None
        if self._watcher is None:
            self._watcher = DirectoryWatcher(self.directory)
            self._watcher.start()

    def sync(self, progress: Progress | None = None, deadline: float | None = None
             ) -> SyncReport:
        """Bring the index up to date with the files: re-read only what changed, stopping
        at ``deadline`` (a ``time.monotonic()`` value) with what is done kept. A state
        directory that cannot be written costs the saving, not the sync."""
        try:
            with waiting_until(self.conn, deadline, BUSY_TIMEOUT_SECONDS):
                return self._sync(progress, deadline)
        except sqlite3.OperationalError as exc:
            if is_busy(exc) and deadline is not None:  # another process is writing the index
                self.notices.append("the index is being updated by another sagemem process; "
                                    "answered from it as it is")
                return SyncReport(self._scanned, (), ())
            if not cannot_write(exc) or self._conn is None or self._in_memory():
                raise
            self._to_memory(str(exc))
            return self._sync(progress, deadline)

    def _in_memory(self) -> bool:
        return bool(self.conn.execute("PRAGMA database_list").fetchone()[2] == "")

    def _sync(self, progress: Progress | None, deadline: float | None) -> SyncReport:
        watcher = self._watcher
        names = watcher.take_changed_names() if watcher is not None and watcher.ready else None
        if names == frozenset():
            return SyncReport(self._scanned, (), ())
        if names is not None and self._listing is not None:  # the watcher named them
            on_disk = restat(self.store, self.archived, self._listing, names)
        else:
            on_disk = stat_pass(self.store, self.archived)
        self._listing = on_disk
        self._scanned = len(on_disk)
        digest = listing_digest(on_disk)
        if digest != self._seen_digest:
            self._stats = None  # another process may have brought the index up to date
        self._seen_digest = digest
        if digest == self.content_digest():  # nothing moved: no need to compare file by file
            return SyncReport(len(on_disk), (), ())
        self._stats = None
        changed, removed, pending = apply_changes(self.conn, self.store, self.archived,
                                                  on_disk, progress, digest, deadline)
        if pending:
            self.notice_change()  # the next sync goes on where this one stopped
            self.notices.append(f"index incomplete: {len(on_disk) - pending} of "
                                f"{len(on_disk)} files indexed; run sagemem index")
        return SyncReport(len(on_disk), tuple(changed), tuple(removed), pending)

    def notice_change(self) -> None:
        """Something in the directory changed (our own write): the next query stats again."""
        if self._watcher is not None:
            self._watcher.mark_changed()

    def forget_stat(self, name: str) -> None:
        """Make the next sync re-read ``name`` (its text no longer matches what was indexed,
        though its stat did: an edit that kept size and mtime, as ``cp -p`` makes)."""
        try:
            self._forget_stat(name)
        except sqlite3.OperationalError as exc:
            if not cannot_write(exc) or self._in_memory():
                raise
            self._to_memory(str(exc))
            self._forget_stat(name)
        self.notice_change()

    def _forget_stat(self, name: str) -> None:
        with transaction(self.conn):
            self.conn.execute("UPDATE files SET mtime_ns = -1 WHERE name = ?", (name,))
            self.conn.execute("DELETE FROM meta WHERE key = 'digest'")

    def refresh(self, progress: Progress | None = None) -> SyncReport:
        """``sync``, rebuilding once from the files if the index turns out damaged."""
        try:
            return self.sync(progress)
        except sqlite3.DatabaseError as exc:
            if not self.recover(exc):
                raise IndexUnavailable(self.path, str(exc)) from exc
            return self.sync(progress)

    def content_digest(self) -> str | None:
        """The listing digest the index is complete for; None while it is not (a partial
        build, a file forgotten to be re-read). Equal digests mean the same indexed files."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
        return row[0] if row else None

    # -- what retrieval reads -------------------------------------------------------

    def stats(self) -> Stats:
        """Corpus statistics, cached until the index next changes."""
        if self._stats is None:
            self._stats = self._read_stats()
        return self._stats

    def _read_stats(self) -> Stats:
        """From the meta row written with the last change; summed afresh if it is missing."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'stats'").fetchone()
        if row:
            try:
                return Stats(**json.loads(row[0]))
            except (TypeError, ValueError):
                pass
        return sum_stats(self.conn)

    def term_stats(self, terms: Iterable[str]) -> dict[str, TermStats]:
        return {t: TermStats(s, p, f) for t, s, p, f in
                self._in("SELECT term, sdf, pdf, fdf FROM vocab WHERE term IN ({})",
                         list(terms)) if f > 0}

    def files_holding(self, terms: Iterable[str], names: Iterable[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each of the memories ``names`` holds (in its summary or body).
        Both lists are a question's (at most 64 terms) and its candidates: one statement
        each, never the postings of a common word across a whole folder."""
        wanted, among = list(terms), list(names)
        held: dict[str, set[str]] = {}
        if not wanted or not among:
            return held
        marks = f"({','.join('?' * len(wanted))}) AND f.name IN ({','.join('?' * len(among))})"
        for table in ("sterms", "pterms"):
            for name, term in self.conn.execute(
                    f"SELECT DISTINCT f.name, t.term FROM {table} t JOIN files f "
                    f"ON f.id = t.file_id WHERE t.term IN {marks}", [*wanted, *among]):
                held.setdefault(name, set()).add(term)
        return held

    def first_paragraphs(self, file_ids: list[int]) -> dict[int, tuple[int, int, int]]:
        """Each file's first paragraph: (paragraph id, start line, end line)."""
        rows = self._in("SELECT file_id, id, start_line, end_line FROM paras "
                        "WHERE file_id IN ({}) ORDER BY id", file_ids)
        first: dict[int, tuple[int, int, int]] = {}
        for file_id, para_id, start, end in rows:
            first.setdefault(file_id, (para_id, start, end))
        return first

    def questions_among(self, para_ids: list[int]) -> dict[int, int]:
        """Of these paragraphs, those that end by asking something: id → file id."""
        return dict(self._in("SELECT id, file_id FROM paras WHERE asks AND id IN ({})",
                             para_ids))

    def paragraph_owners(self, para_ids: list[int]) -> dict[int, int]:
        return dict(self._in("SELECT id, file_id FROM paras WHERE id IN ({})", para_ids))

    def paragraph_lines(self, para_ids: list[int]) -> dict[int, tuple[int, int]]:
        return {pid: (s, e) for pid, s, e in self._in(
            "SELECT id, start_line, end_line FROM paras WHERE id IN ({})", para_ids)}

    def files(self, file_ids: Iterable[int] | None = None) -> dict[int, IndexedFile]:
        """Indexed memories (readable ones only), by id."""
        sql = "SELECT id, name, revision, info FROM files WHERE revision IS NOT NULL"
        rows = (self.conn.execute(sql).fetchall() if file_ids is None
                else self._in(sql + " AND id IN ({})", list(file_ids)))
        return {i: IndexedFile(i, n, r, json.loads(info)) for i, n, r, info in rows}

    def names(self) -> list[tuple[str, str | None]]:
        """(file, ``name`` field) of every readable memory: the titles another layer's
        memories are compared with, without parsing each one's summary."""
        return [(n, t if isinstance(t, str) else None) for n, t in self.conn.execute(
            "SELECT name, json_extract(info, '$.name') FROM files WHERE revision IS NOT NULL")]

    def baselines(self) -> list[IndexedFile]:
        """Memories marked ``baseline: true``, highest ``baselinePriority`` first."""
        rows = self.conn.execute(
            "SELECT id, name, revision, info FROM files WHERE revision IS NOT NULL "
            "AND json_extract(info, '$.baseline') = 1").fetchall()
        found = [IndexedFile(i, n, r, json.loads(info)) for i, n, r, info in rows]
        return sorted(found, key=lambda f: (-int(f.info.get("baselinePriority") or 0), f.name))

    def vocabulary(self, first: str, min_len: int, max_len: int) -> list[str]:
        """Indexed ASCII terms starting with ``first`` within a length range (typo lookup)."""
        upper = chr(ord(first) + 1)
        return [t for (t,) in self.conn.execute(
            "SELECT term FROM vocab WHERE term >= ? AND term < ? AND fdf > 0 "
            "AND length(term) BETWEEN ? AND ?", (first, upper, min_len, max_len))]

    def _in(self, sql: str, items: list[Any]) -> list[Any]:
        """Run ``sql`` with its ``IN ({})`` bound to ``items``, in chunks SQLite accepts."""
        rows: list[Any] = []
        for i in range(0, len(items), 500):
            chunk = items[i:i + 500]
            marks = ",".join("?" * len(chunk))
            rows.extend(self.conn.execute(sql.format(marks), chunk).fetchall())
        return rows


def index_path(store: MemoryFolder, *, archived: bool = False) -> Path:
    """One index per memory directory, even when two share a state directory (and one
    more for its archive)."""
    key = hashlib.sha256(str(store.directory.resolve()).encode("utf-8", "surrogateescape"))
    suffix = "-archive" if archived else ""
    return store.state_dir / INDEX_DIR / f"search-{key.hexdigest()[:12]}{suffix}.sqlite3"

