"""The derived search index: a rebuildable SQLite cache of every memory's tokens.

Re-reading and re-tokenising every file on every question (what sage-mem does) does not
scale, so the tokens live in ``<state>/index/search.sqlite3``, updated incrementally:
each query first compares every file's (mtime_ns, size, inode) with what was indexed and
re-reads only the files that changed. The index is a cache, never the source of truth:
deleting it loses nothing, a corrupt or foreign-version file is rebuilt with a one-line
notice, and it holds only numbers and tokens (never anything executed or unpickled).

A long-lived process can call ``watch()``: a watchfiles thread then reports changes and a
query with nothing changed skips the stat pass entirely.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import IndexUnavailable, SagememError
from .memory import Memory
from .paths import name_key
from .store import MemoryStore
from .text import paragraphs, tokens
from .watch import DirectoryWatcher

INDEX_VERSION = "5"
"""Bump when the schema or the tokeniser changes: an index of another version is rebuilt."""
INDEX_DIR = "index"
CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB: only these mean damage
BUSY_TIMEOUT_SECONDS = 300  # a cold build of 10,000 memories by another process takes ~30 s
SUMMARY_WEIGHTS = {"description": 1.0, "name": 1.0, "aliases": 2.0, "file": 0.5, "tags": 0.5}
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, mtime_ns INTEGER, size INTEGER,
    inode INTEGER, revision TEXT, info TEXT NOT NULL, slen REAL NOT NULL DEFAULT 0,
    blen INTEGER NOT NULL DEFAULT 0);
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
CREATE INDEX sterms_file ON sterms (file_id);
CREATE INDEX pterms_term ON pterms (term, file_id);
CREATE INDEX pterms_file ON pterms (file_id);
CREATE INDEX paras_file ON paras (file_id);
"""


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


@dataclass(frozen=True)
class Stats:
    """Corpus statistics BM25 needs."""

    files: int
    avg_slen: float
    paras: int
    avg_plen: float
    avg_blen: float


@dataclass(frozen=True)
class TermStats:
    """How many summaries, paragraphs and files hold a term."""

    sdf: int
    pdf: int
    fdf: int


Progress = Callable[[int, int], None]


class SearchIndex:
    """The persistent, incrementally updated token index of one memory directory — or,
    with ``archived=True``, of its ``archive/`` (a separate index, so archived memories
    never weigh on the statistics of an ordinary search)."""

    def __init__(self, store: MemoryStore, path: Path | None = None, *,
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
        self._scanned = 0

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
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnavailable(self.path, exc.strerror or str(exc)) from exc
        try:
            conn = self._connect()
            meta = self._meta(conn)
            if meta == self._expected_meta():
                return conn
            if meta is None:  # a new, empty database
                self._create(conn)
                return conn
            conn.close()
            reason = "was made by another sagemem version or for another directory"
        except sqlite3.DatabaseError as exc:
            reason = f"was unreadable ({exc})"
        self.notices.append(f"search index {self.path} {reason}; rebuilt it")
        self._remove_files()
        conn = self._connect()
        self._create(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA trusted_schema = OFF")
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
        with _transaction(conn):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.executemany("INSERT INTO meta VALUES (?, ?)", self._expected_meta().items())

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
        """Follow the directory with watchfiles so queries need no stat pass (long-lived use)."""
        if self._watcher is None:
            self._watcher = DirectoryWatcher(self.directory)
            self._watcher.start()

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the files: re-read only what changed."""
        watcher = self._watcher
        if watcher is not None and watcher.ready and not watcher.take_changes():
            return SyncReport(self._scanned, (), ())
        on_disk = self._stat_pass()
        self._scanned = len(on_disk)
        digest = _digest(on_disk)
        if digest != self._seen_digest:
            self._stats = None  # another process may have brought the index up to date
        self._seen_digest = digest
        if digest == self._stored_digest():  # nothing moved: no need to compare file by file
            return SyncReport(len(on_disk), (), ())
        changed, removed = self._apply(on_disk, progress, digest)
        return SyncReport(len(on_disk), tuple(changed), tuple(removed))

    def notice_change(self) -> None:
        """Something in the directory changed (our own write): the next query stats again."""
        if self._watcher is not None:
            self._watcher.mark_changed()

    def forget_stat(self, name: str) -> None:
        """Make the next sync re-read ``name`` (its text no longer matches what was indexed,
        though its stat did: an edit that kept size and mtime, as ``cp -p`` makes)."""
        with _transaction(self.conn):
            self.conn.execute("UPDATE files SET mtime_ns = -1 WHERE name = ?", (name,))
            self.conn.execute("DELETE FROM meta WHERE key = 'digest'")
        self.notice_change()

    def refresh(self, progress: Progress | None = None) -> SyncReport:
        """``sync``, rebuilding once from the files if the index turns out damaged."""
        try:
            return self.sync(progress)
        except sqlite3.DatabaseError as exc:
            if not self.recover(exc):
                raise IndexUnavailable(self.path, str(exc)) from exc
            return self.sync(progress)

    def _stored_digest(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
        return row[0] if row else None

    def _stat_pass(self) -> dict[str, tuple[int, int, int]]:
        """Every candidate memory file's (mtime_ns, size, inode), reading none of them."""
        self.store.require_directory()
        found: dict[str, tuple[int, int, int]] = {}
        reserved = self.store.reserved
        folder = self.store.folder(self.archived)  # a symlinked archive/ is refused
        try:
            entries = os.scandir(folder)
        except FileNotFoundError:
            if self.archived:  # no archive/ yet: nothing archived
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

    def _apply(self, on_disk: dict[str, tuple[int, int, int]], progress: Progress | None,
               digest: str) -> tuple[list[str], list[str]]:
        """Re-read what changed. The comparison is made inside the write transaction, so
        a second process that waited for the first one's build finds nothing left to do."""
        conn = self.conn
        self._stats = None
        with _transaction(conn):
            known = {name: (m, s, i) for name, m, s, i in
                     conn.execute("SELECT name, mtime_ns, size, inode FROM files")}
            changed = [n for n, st in on_disk.items() if known.get(n) != st]
            removed = [n for n in known if n not in on_disk]
            total = len(changed)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('digest', ?)", (digest,))
            for name in removed:
                self._forget(name)
            for done, name in enumerate(changed, start=1):
                self._forget(name)
                self._add(name)
                if progress and (done % 200 == 0 or done == total):
                    progress(done, total)
            stats = json.dumps(asdict(self._sum_stats()))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('stats', ?)", (stats,))
        return changed, removed

    def _forget(self, name: str) -> None:
        conn = self.conn
        row = conn.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
        if row is None:
            return
        file_id = row[0]
        s_terms = [t for (t,) in conn.execute("SELECT term FROM sterms WHERE file_id = ?",
                                              (file_id,))]
        p_counts = Counter(t for (t,) in conn.execute(
            "SELECT term FROM pterms WHERE file_id = ?", (file_id,)))
        self._count(s_terms, p_counts, -1)
        for table in ("sterms", "pterms", "paras"):
            conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))
        conn.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _add(self, name: str) -> None:
        """Index one file; one that cannot be read is remembered with its error, no tokens."""
        path = self.directory / name
        try:
            st = os.lstat(path)
            memory = self.store.get(name, archived=self.archived)
        except FileNotFoundError:
            return
        except SagememError as exc:
            self._insert_file(name, st, None, {"error": str(exc)}, 0.0)
            return
        body_length = 0
        summary = summary_terms(memory)
        file_id = self._insert_file(name, st, memory.revision, file_info(memory),
                                    sum(summary.values()))
        self.conn.executemany("INSERT INTO sterms VALUES (?, ?, ?)",
                              [(t, file_id, tf) for t, tf in summary.items()])
        p_counts: Counter[str] = Counter()
        for para in paragraphs(memory.body, memory.body_line):
            counts = Counter(tokens(para.text))
            cur = self.conn.execute("INSERT INTO paras VALUES (NULL, ?, ?, ?, ?, ?)",
                                    (file_id, para.start_line, para.end_line,
                                     sum(counts.values()), _asks(para.text)))
            self.conn.executemany("INSERT INTO pterms VALUES (?, ?, ?, ?)",
                                  [(t, file_id, cur.lastrowid, n) for t, n in counts.items()])
            p_counts.update(counts.keys())
            body_length += sum(counts.values())
        self.conn.execute("UPDATE files SET blen = ? WHERE id = ?", (body_length, file_id))
        self._count(list(summary), p_counts, +1)

    def _insert_file(self, name: str, st: os.stat_result, revision: str | None,
                     info: dict[str, Any], slen: float) -> int:
        cur = self.conn.execute(
            "INSERT INTO files VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, 0)",
            (name, st.st_mtime_ns, st.st_size, st.st_ino, revision,
             json.dumps(info, ensure_ascii=False), slen))
        return int(cur.lastrowid or 0)  # always set after an INSERT

    def _count(self, s_terms: Iterable[str], p_counts: Counter[str], sign: int) -> None:
        """Keep document frequencies in step: summaries, paragraphs and whole files."""
        s_set = set(s_terms)
        rows = [(t, sign * (t in s_set), sign * p_counts.get(t, 0), sign)
                for t in s_set | set(p_counts)]
        self.conn.executemany(
            "INSERT INTO vocab VALUES (?, ?, ?, ?) ON CONFLICT (term) DO UPDATE SET "
            "sdf = sdf + excluded.sdf, pdf = pdf + excluded.pdf, fdf = fdf + excluded.fdf",
            rows)

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
        return self._sum_stats()

    def _sum_stats(self) -> Stats:
        files, slen, blen = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(slen), 0), COALESCE(SUM(blen), 0) FROM files "
            "WHERE revision IS NOT NULL").fetchone()
        paras, plen = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(plen), 0) FROM paras").fetchone()
        return Stats(files, slen / files if files else 0.0, paras, plen / paras if paras else 0.0,
                     blen / files if files else 0.0)

    def term_stats(self, terms: Iterable[str]) -> dict[str, TermStats]:
        return {t: TermStats(s, p, f) for t, s, p, f in
                self._in("SELECT term, sdf, pdf, fdf FROM vocab WHERE term IN ({})",
                         list(terms)) if f > 0}

    # Scoring runs inside SQLite: each query term arrives as a row of a VALUES table
    # (term, weight, idf, information), posting lists are read through the term index,
    # and only aggregates come back to Python — a common word over ten thousand files
    # costs a C loop, not ten thousand Python objects.

    def summary_scores(self, q: QueryTerms, avg_len: float, *, file_ids: list[int] | None = None,
                       min_mass: float = 0.0) -> list[tuple[int, float, float, str]]:
        """(file id, BM25 score, matched information, matched terms joined by US) of every
        summary holding a query term, keeping those with at least ``min_mass``."""
        where = f"WHERE s.file_id IN ({_marks(file_ids)})" if file_ids is not None else ""
        sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}) "
               "SELECT s.file_id, SUM(q.w * q.idf * s.tf * ? / (s.tf + ? * (1 - ? + ? * "
               "f.slen / ?))), SUM(q.w * q.info), GROUP_CONCAT(s.term, char(31)) "
               "FROM q CROSS JOIN sterms s ON s.term = q.term JOIN files f ON f.id = s.file_id "
               f"{where} GROUP BY s.file_id HAVING SUM(q.w * q.info) >= ?")
        args = (*_flat(q), *_bm25_args(avg_len), *(file_ids or ()), min_mass)
        return self.conn.execute(sql, args).fetchall()

    def paragraph_scores(self, q: QueryTerms, avg_len: float, file_ids: list[int]
                         ) -> list[tuple[int, int, float, float, str]]:
        """(paragraph id, file id, BM25 score, matched information, matched terms) of the
        paragraphs of ``file_ids`` holding a query term."""
        if not file_ids or not q:
            return []
        sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}) "
               "SELECT t.para_id, t.file_id, SUM(q.w * q.idf * t.tf * ? / (t.tf + ? * (1 - ? + "
               "? * p.plen / ?))), SUM(q.w * q.info), GROUP_CONCAT(t.term, char(31)) "
               "FROM q CROSS JOIN pterms t ON t.term = q.term JOIN paras p ON p.id = t.para_id "
               f"WHERE t.file_id IN ({_marks(file_ids)}) GROUP BY t.para_id")
        return self.conn.execute(sql, (*_flat(q), *_bm25_args(avg_len), *file_ids)).fetchall()

    def body_scores(self, q: QueryTerms, avg_len: float, file_ids: list[int]
                    ) -> list[tuple[int, float]]:
        """(file id, BM25 score of the whole body as one document) for ``file_ids``."""
        if not file_ids or not q:
            return []
        sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}), "
               "b(file_id, term, tf) AS (SELECT t.file_id, t.term, SUM(t.tf) FROM q "
               "CROSS JOIN pterms t ON t.term = q.term "
               f"WHERE t.file_id IN ({_marks(file_ids)}) GROUP BY t.file_id, t.term) "
               "SELECT b.file_id, SUM(q.w * q.idf * b.tf * ? / (b.tf + ? * (1 - ? + ? * "
               "f.blen / ?))) FROM b JOIN q ON q.term = b.term JOIN files f ON f.id = b.file_id "
               "GROUP BY b.file_id")
        return self.conn.execute(sql, (*_flat(q), *file_ids, *_bm25_args(avg_len))).fetchall()

    def body_pool(self, q: QueryTerms, limit: int) -> list[int]:
        """Files whose paragraphs hold the most information of the given terms."""
        if not q:
            return []
        sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}) "
               "SELECT d.file_id FROM (SELECT DISTINCT t.file_id, t.term FROM q CROSS JOIN "
               "pterms t ON t.term = q.term) d JOIN q ON q.term = d.term GROUP BY d.file_id "
               "ORDER BY SUM(q.w * q.info) DESC, d.file_id LIMIT ?")
        return [f for (f,) in self.conn.execute(sql, (*_flat(q), limit))]

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


QueryTerms = dict[str, tuple[float, float, float]]
"""A query as scoring sees it: term → (weight, idf, information)."""
K1, B = 1.2, 0.75


def _marks(items: object, width: int = 1) -> str:
    group = "?" if width == 1 else "(" + ",".join("?" * width) + ")"
    return ",".join([group] * len(items))  # type: ignore[arg-type]


def _flat(q: QueryTerms) -> list[object]:
    return [x for term, values in q.items() for x in (term, *values)]


def _bm25_args(avg_len: float) -> tuple[float, ...]:
    return (K1 + 1, K1, B, B, avg_len or 1.0)


def index_path(store: MemoryStore, *, archived: bool = False) -> Path:
    """One index per memory directory, even when two share a state directory (and one
    more for its archive)."""
    key = hashlib.sha256(str(store.directory.resolve()).encode("utf-8", "surrogateescape"))
    suffix = "-archive" if archived else ""
    return store.state_dir / INDEX_DIR / f"search-{key.hexdigest()[:12]}{suffix}.sqlite3"


def _utf8(name: str) -> bool:
    """A file name the file system gave us with bytes that are not UTF-8 is no memory."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _asks(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


def _digest(stats: dict[str, tuple[int, int, int]]) -> str:
    """A value that changes whenever any file is added, removed or touched. It follows the
    directory's own listing order: a reordered listing only costs one full comparison."""
    text = repr(list(stats.items()))  # repr runs in C: a third of the cost of formatting
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


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


class _transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if kind else "COMMIT")
