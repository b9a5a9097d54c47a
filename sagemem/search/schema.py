"""The search index's tables: files and their summary fields, paragraphs, the terms of
both, and the document frequencies; ``meta`` holds the version, the directory, the
corpus statistics and the listing digest of the last complete sync."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from .sync import transaction

SCHEMA = """
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


def create_schema(conn: sqlite3.Connection, meta: Mapping[str, str]) -> None:
    """Make the tables of an empty database and record what it indexes."""
    with transaction(conn):
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
