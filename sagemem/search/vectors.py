"""The vector store: one embedding per distinct text, beside the lexical index.

``<state>/index/vectors-<12 hex of the folder>.sqlite3`` holds which texts each memory
has (its summary and each body paragraph, with their lines) keyed by the sha256 of the
exact text embedded, and for each distinct text its row in the matrix file
``vectors-<…>.<generation>.i8`` (int8 rows and their scales: ``matrix.py``).

The matrix is append-only: a batch writes its rows past the committed ones, fsyncs, then
commits their count with the text rows in one SQLite transaction, so a build killed at
any instant keeps every committed batch and a torn tail is simply overwritten. Rows of
texts no memory holds any more are dropped by ``compact`` into the next generation's file.
The store records the embedder's name: another embedder's vectors are never mixed in.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VectorsUnavailable
from .degraded import cannot_write, is_busy, open_read_only
from .index import CORRUPT_CODES
from .matrix import SCALE_BYTES as SCALE_BYTES
from .matrix import SCORE_CHUNK_ROWS as SCORE_CHUNK_ROWS
from .matrix import Matrix
from .matrix import quantise as quantise

if TYPE_CHECKING:
    import numpy as np

VECTORS_VERSION = "1"
"""Bump when the schema or the matrix layout changes: another version is rebuilt."""
BUSY_TIMEOUT_SECONDS = 300  # as the lexical index: a batch of another process is short

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS texts (hash TEXT PRIMARY KEY, row INTEGER NOT NULL) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS texts_row ON texts (row);
CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, revision TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items (file TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
                                  start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
                                  hash TEXT NOT NULL, PRIMARY KEY (file, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_hash ON items (hash);
"""


@dataclass(frozen=True)
class Item:
    """One text of a memory that is embedded: its summary, or a paragraph with its lines
    (0, 0 for the summary)."""

    kind: str  # "summary" or "paragraph"
    start_line: int
    end_line: int
    text: str

    @property
    def key(self) -> str:
        return text_key(self.text)


@dataclass(frozen=True)
class Hit:
    """A matrix row that scored, and one item holding its text."""

    score: float
    file: str
    kind: str
    start_line: int
    end_line: int


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def vectors_path(index_path: Path) -> Path:
    """The item table beside the lexical index ``search-<key>[-archive].sqlite3``."""
    return index_path.with_name(index_path.name.replace("search-", "vectors-", 1))


class VectorStore:
    """The embeddings of one memory directory's texts, for one embedder."""

    def __init__(self, path: Path, embedder_name: str, dim: int) -> None:
        self.path = path
        self.embedder_name = embedder_name
        self.dim = dim
        self.matrix = Matrix(path, dim)
        self.in_step: tuple[str, dict[str, tuple[int, str]]] | None = None
        """(lexical digest, its memories) this process last brought the vectors in step
        with; another process's writes change the lexical digest, which ends it."""
        self.notices: list[str] = []
        self.unsaved: str | None = None
        """Why this store cannot be written (then it is read as it is, never synced), or
        None."""
        self._conn: sqlite3.Connection | None = None

    # -- opening ------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def close(self) -> None:
        self.in_step = None  # reopened, the files are checked again
        self.unsaved = None
        self.matrix.forget()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def drop(self) -> None:
        """Throw every vector away (``sagemem index --rebuild``); the next use starts anew."""
        self.close()
        self._remove_files()

    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_on_disk()
        except (sqlite3.OperationalError, OSError) as exc:
            if isinstance(exc, sqlite3.Error) and not cannot_write(exc):
                raise
            return self._open_read_only(str(exc))

    def _open_on_disk(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            problem = self._problem(conn)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if not damaged(exc):  # a busy or read-only store is no damage
                raise
            conn, problem = None, f"was unreadable ({exc}); rebuilt it"
        if problem is None:
            assert conn is not None
            return conn
        if problem:  # real damage, or another embedder or version: start anew
            if conn is not None:
                conn.close()
            self.notices.append(f"vector index {self.path} {problem}")
            self._remove_files()
            conn = self._connect()
        assert conn is not None
        self._create(conn)
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        """The schema, made idempotently under the write lock: processes opening a new
        store at once all share it, and none removes another's fresh files (the
        "table meta already exists" / "disk I/O error" of four first searches at once)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA.strip().split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", [
                ("version", VECTORS_VERSION), ("embedder", self.embedder_name),
                ("dim", str(self.dim)), ("rows", "0"), ("generation", "0")])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _open_read_only(self, reason: str) -> sqlite3.Connection:
        """The store as it is, never written (a read-only or full state directory), or
        VectorsUnavailable when there is none this process could use."""
        conn = open_read_only(self.path, BUSY_TIMEOUT_SECONDS)
        try:
            if conn is not None and self._problem(conn) is None:
                self.unsaved = reason
                return conn
        except sqlite3.DatabaseError:
            pass
        if conn is not None:
            conn.close()
        raise VectorsUnavailable(self.path, reason)

    def recover(self, error: sqlite3.DatabaseError) -> bool:
        """Drop a store found damaged mid-use, so the next access rebuilds it; False (and
        nothing touched) when the error is not damage."""
        if not damaged(error) or self.unsaved is not None:
            return False
        self.notices.append(f"vector index {self.path} was damaged ({error}); rebuilt it")
        self.drop()
        return True

    def _problem(self, conn: sqlite3.Connection) -> str | None:
        """Why the store on disk cannot be used ("" for a new one), or None."""
        if not conn.execute("SELECT name FROM sqlite_master").fetchall():
            return ""
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("version") != VECTORS_VERSION:
            return "was made by another sagemem version; rebuilt it"
        if meta.get("embedder") != self.embedder_name or meta.get("dim") != str(self.dim):
            return (f"holds vectors of embedder {meta.get('embedder')}; re-embedding every "
                    f"memory with {self.embedder_name}")
        rows, generation = int(meta["rows"]), int(meta["generation"])
        if not self.matrix.holds(generation, rows):
            return "lost part of its matrix file; rebuilt it"
        return None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None,
                               check_same_thread=False)
        try:  # a damaged header already fails here ("file is not a database")
            conn.execute("PRAGMA trusted_schema = OFF")
            _wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def stop_writing(self, reason: str) -> None:
        """Go on reading the store as it is: a write to it failed (read-only or full)."""
        self.close()
        self._conn = self._open_read_only(reason)

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            _unlink(Path(f"{self.path}{suffix}"))
        self.matrix.remove_all()

    def _meta_int(self, key: str) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- what is stored -------------------------------------------------------------

    def revisions(self) -> dict[str, str]:
        """Each memory whose items are stored, and the revision they were taken from."""
        return dict(self.conn.execute("SELECT name, revision FROM files").fetchall())

    def missing(self, keys: Iterable[str]) -> set[str]:
        """Of these text keys, those with no vector yet."""
        wanted = list(dict.fromkeys(keys))
        have: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            have.update(k for (k,) in self.conn.execute(
                f"SELECT hash FROM texts WHERE hash IN ({','.join('?' * len(chunk))})", chunk))
        return set(wanted) - have

    def rows(self) -> int:
        return self._meta_int("rows")

    def garbage(self) -> int:
        """Rows whose text no memory holds any more."""
        return int(self.conn.execute("SELECT count(*) FROM texts WHERE hash NOT IN "
                                     "(SELECT hash FROM items)").fetchone()[0])

    # -- writing ----------------------------------------------------------------------

    def commit(self, vectors: dict[str, np.ndarray], files: dict[str, tuple[str, list[Item]]],
               removed: Iterable[str] = ()) -> None:
        """In one transaction: append ``vectors`` (text key → float32 row) not stored yet,
        set each file's revision and items, forget ``removed`` files."""
        with self._transaction() as conn:
            new = sorted(self.missing(vectors))
            if new:
                rows = self._meta_int("rows")
                self.matrix.append(self._meta_int("generation"), rows, [vectors[k] for k in new])
                conn.executemany("INSERT INTO texts VALUES (?, ?)",
                                 [(k, rows + i) for i, k in enumerate(new)])
                conn.execute("UPDATE meta SET value = ? WHERE key = 'rows'",
                             (str(rows + len(new)),))
            for name in [*removed, *files]:
                conn.execute("DELETE FROM items WHERE file = ?", (name,))
                conn.execute("DELETE FROM files WHERE name = ?", (name,))
            for name, (revision, items) in files.items():
                conn.execute("INSERT INTO files VALUES (?, ?)", (name, revision))
                conn.executemany("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)", [
                    (name, seq, it.kind, it.start_line, it.end_line, it.key)
                    for seq, it in enumerate(items)])

    def compact(self) -> int:
        """Drop the rows no memory holds into a new generation's file; returns how many."""
        with self._transaction() as conn:
            generation, rows = self._meta_int("generation"), self._meta_int("rows")
            live = [(k, r) for k, r in conn.execute(
                "SELECT hash, row FROM texts WHERE hash IN (SELECT hash FROM items) ORDER BY row")]
            self.matrix.keep(generation, rows, [r for _, r in live])
            conn.execute("DELETE FROM texts")
            conn.executemany("INSERT INTO texts VALUES (?, ?)",
                             [(k, i) for i, (k, _) in enumerate(live)])
            conn.execute("UPDATE meta SET value = ? WHERE key = 'rows'", (str(len(live)),))
            conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'",
                         (str(generation + 1),))
        self.matrix.remove(generation)
        return rows - len(live)

    # -- scoring ----------------------------------------------------------------------

    @property
    def width(self) -> int:
        """Bytes per matrix row: ``dim`` int8 components and the float32 scale."""
        return self.matrix.width

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The cosine of ``query`` (a normalised float32 row) with every stored row; a
        long-lived process keeps a float32 copy from its second query on (``Matrix``)."""
        return self.matrix.scores((self._meta_int("generation"), self._meta_int("rows")), query)

    def hits(self, rows: list[int]) -> dict[int, list[Hit]] | None:
        """The items holding each of these rows' texts (none for a garbage row), as
        numbered by the last ``scores``; None when another process has compacted the rows
        since (their numbers changed: score again)."""
        found: dict[int, list[Hit]] = {}
        with self._as_scored() as conn:
            if conn is None:
                return None
            for row, file, kind, start, end in _chunked(
                    conn, "SELECT t.row, i.file, i.kind, i.start_line, i.end_line FROM texts t "
                    "JOIN items i ON i.hash = t.hash WHERE t.row IN ({}) "
                    "ORDER BY i.file, i.seq", rows):
                found.setdefault(row, []).append(Hit(0.0, file, kind, start, end))
        return found

    def rows_of(self, files: list[str]) -> dict[str, dict[tuple[int, int], int]] | None:
        """Each file's rows by their item's line range (the summary's is (0, 0)), as
        numbered by the last ``scores``; None when another process has compacted the
        rows since (score again)."""
        found: dict[str, dict[tuple[int, int], int]] = {}
        with self._as_scored() as conn:
            if conn is None:
                return None
            for file, start, end, row in _chunked(
                    conn, "SELECT i.file, i.start_line, i.end_line, t.row FROM items i "
                    "JOIN texts t ON t.hash = i.hash WHERE i.file IN ({})", files):
                found.setdefault(file, {})[(start, end)] = row
        return found

    @contextmanager
    def _as_scored(self) -> Iterator[sqlite3.Connection | None]:
        """One read snapshot in which the rows are numbered as the last ``scores`` saw
        them: the connection, or None when another process has compacted since."""
        conn = self.conn
        conn.execute("BEGIN")  # one snapshot: the generation checked is the one read
        try:
            scored = self.matrix.scored_generation
            yield conn if scored is not None and self._meta_int("generation") == scored \
                else None
        finally:
            conn.execute("COMMIT")


def _chunked(conn: sqlite3.Connection, sql: str, values: list[Any]) -> Iterator[Any]:
    """The rows of ``sql`` (its ``IN ({})`` filled) for ``values``, 500 bound at a time."""
    for i in range(0, len(values), 500):
        chunk = values[i:i + 500]
        yield from conn.execute(sql.format(",".join("?" * len(chunk))), chunk)


def _wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, waiting out another process switching a new file
    too: SQLite answers SQLITE_BUSY there at once, without the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def damaged(error: sqlite3.Error) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB: the file is damaged, not busy or read-only."""
    return getattr(error, "sqlite_errorcode", None) in CORRUPT_CODES


def _unlink(path: Path) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)
