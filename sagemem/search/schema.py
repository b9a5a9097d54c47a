"""The search index's tables: files and their summary fields, paragraphs, the terms of
both, and the document frequencies; ``meta`` holds the version, the directory, the
corpus statistics and the listing digest of the last complete sync.

The paragraph postings (``pterms``, 1.8 million rows at 10,000 memories) are one B-tree
ordered by term — a ``WITHOUT ROWID`` table whose key is the lookup — rather than a rowid
table plus an index by term that held every term a second time (70 of the 87 MB of the
index before). New postings arrive in ``pterms_load``, appended in any order, one row per
paragraph with its term counts as JSON (binding one row per posting was a third of the
cold build), and ``merge_loaded`` unpacks them into ``pterms`` sorted: after each batch
of an ordinary sync, once at the end of a bulk build — sorting 1.8 million postings once
is far cheaper than inserting them one by one into a tree kept in term order. Every sync
starts and ends by moving what is left, so a build that was stopped or killed leaves
nothing unsearchable behind.

The other term tables' secondary indexes are kept apart (``LOOKUPS``) for the same
reason: a build that adds many files drops them and creates them again afterwards.
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
    -- where its rows are in paras and sterms: [first, end) of rowids
    para_first INTEGER NOT NULL DEFAULT 0, para_end INTEGER NOT NULL DEFAULT 0,
    sterm_first INTEGER NOT NULL DEFAULT 0, sterm_end INTEGER NOT NULL DEFAULT 0,
    -- its distinct body terms joined by US: the keys of its rows in pterms
    body_terms TEXT NOT NULL DEFAULT '');
CREATE TABLE paras (
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, plen INTEGER NOT NULL, asks INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sterms (term TEXT NOT NULL, file_id INTEGER NOT NULL, tf REAL NOT NULL);
CREATE TABLE pterms (term TEXT NOT NULL, file_id INTEGER NOT NULL, para_id INTEGER NOT NULL,
                     tf INTEGER NOT NULL, PRIMARY KEY (term, file_id, para_id)) WITHOUT ROWID;
CREATE TABLE pterms_load (file_id INTEGER NOT NULL, para_id INTEGER NOT NULL,
                          terms TEXT NOT NULL);
CREATE TABLE vocab (term TEXT PRIMARY KEY, sdf INTEGER NOT NULL DEFAULT 0,
                    pdf INTEGER NOT NULL DEFAULT 0, fdf INTEGER NOT NULL DEFAULT 0)
    WITHOUT ROWID
"""
LOOKUPS = {
    "sterms_term": "sterms (term, file_id)",
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


def merge_loaded(conn: sqlite3.Connection) -> None:
    """Move the postings waiting in ``pterms_load`` (a JSON object of term counts per
    paragraph) into ``pterms``, sorted, so they are appended in key order (inside the
    caller's transaction). ``json_each`` unpacks them in C."""
    conn.execute("INSERT INTO pterms SELECT j.key, p.file_id, p.para_id, j.value "
                 "FROM pterms_load p, json_each(p.terms) j ORDER BY 1, 2, 3")
    conn.execute("DELETE FROM pterms_load")  # no WHERE: SQLite truncates the table


def release_free_pages(conn: sqlite3.Connection) -> None:
    """Truncate the file by its free pages (outside a transaction): what a bulk build's
    ``pterms_load`` used, a third of the file otherwise left free. Needs the incremental
    auto-vacuum ``index.py`` sets before the database is created; elsewhere a no-op."""
    # executescript steps the pragma to its end; execute() would free a single page
    conn.executescript("PRAGMA incremental_vacuum")


def loaded_waiting(conn: sqlite3.Connection) -> bool:
    """Whether postings wait in ``pterms_load``: a bulk build was stopped before its end."""
    return conn.execute("SELECT 1 FROM pterms_load LIMIT 1").fetchone() is not None


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
