"""The search index's tables: files and their summary fields, paragraphs, the terms of
both, and the document frequencies; ``meta`` holds the version, the directory, the
corpus statistics and the listing digest of the last complete sync.

The term tables' secondary indexes are kept apart (``LOOKUPS``): a build that adds many
files drops them and creates them again afterwards — sorting 1.3 million postings once
is far cheaper than keeping two B-trees in order through 1.3 million insertions — and
every sync ends by making sure they exist, so an index whose build was stopped or killed
is still searched through them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, mtime_ns INTEGER, size INTEGER,
    inode INTEGER, revision TEXT, info TEXT NOT NULL, slen REAL NOT NULL DEFAULT 0,
    blen INTEGER NOT NULL DEFAULT 0,
    -- where its rows are in paras, sterms and pterms: [first, end) of rowids
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
    WITHOUT ROWID
"""
LOOKUPS = {
    "sterms_term": "sterms (term, file_id)",
    "pterms_term": "pterms (term, file_id)",
    "paras_file": "paras (file_id)",
}
"""The secondary indexes, by name: the scoring queries read postings by term and a
file's paragraphs by file. A file's removal needs none: ``files`` keeps the rowid ranges
of its rows."""


def create_schema(conn: sqlite3.Connection, meta: Mapping[str, str]) -> None:
    """Make the tables of an empty database and record what it indexes."""
    with transaction(conn):
        for statement in TABLES.split(";"):
            conn.execute(statement)
        create_lookups(conn)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())


def drop_lookups(conn: sqlite3.Connection) -> None:
    """Drop the secondary indexes before a bulk load (inside the caller's transaction)."""
    for name in LOOKUPS:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def create_lookups(conn: sqlite3.Connection) -> None:
    """Create whichever secondary indexes are missing (inside the caller's transaction)."""
    for name, columns in LOOKUPS.items():
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")


def missing_lookups(conn: sqlite3.Connection) -> bool:
    """Whether a secondary index is missing: a bulk load was stopped before the end."""
    present = {name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index'")}
    return not present.issuperset(LOOKUPS)


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
