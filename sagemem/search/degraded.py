"""Searching when the state directory cannot be written (read-only, full, missing).

The index is a cache, so a state directory sagemem cannot write must cost freshness at
most, never the answer: an index that exists is opened read-only and searched as it is;
when it must change (files edited since it was built, or a write failed half-way) the
changes go into a copy in memory; when there is no usable index at all, one is built in
memory from the files. Every path ranks with the same schema and the same code, so the
answers are those a writable index would give.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WRITE_FAILURES = frozenset({3, 8, 10, 13, 14})
"""SQLITE_PERM, _READONLY, _IOERR, _FULL, _CANTOPEN: the file or its directory cannot be
written (a WAL database cannot even be opened where its -shm file cannot be created)."""


def cannot_write(error: sqlite3.Error) -> bool:
    """Whether SQLite failed because it could not write, not because the data is bad."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in WRITE_FAILURES


def is_busy(error: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: another connection holds the write lock."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (5, 6)


@contextmanager
def waiting_until(conn: sqlite3.Connection, deadline: float | None, usual: float
                  ) -> Iterator[None]:
    """Wait for another writer no longer than ``deadline`` (``time.monotonic()``) allows,
    then ``usual`` seconds again: the hook must not sit out another process's build."""
    if deadline is None:
        yield
        return
    wait_ms = max(0, int((deadline - time.monotonic()) * 1000))
    conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(usual * 1000)}")


def open_read_only(path: Path, timeout: float) -> sqlite3.Connection | None:
    """``path`` opened read-only, or None. ``immutable`` is the last resort: where the
    -shm file cannot be created, no process can be writing the database either."""
    if not path.is_file():
        return None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"{path.as_uri()}?{query}", uri=True, timeout=timeout,
                                   isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError:
            continue
    return None


def in_memory(source: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """A private database in memory: empty, or a copy of ``source``."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA trusted_schema = OFF")
    if source is not None:
        source.backup(conn)
    return conn
