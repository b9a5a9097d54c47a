"""Turning memories into the index's rows, in Python, a batch at a time.

A batch gathers every row of its files (the file, its summary terms, its paragraphs and
their terms) and the document-frequency changes they make, then writes each table with
one ``executemany`` and the vocabulary with one upsert per distinct term. Ids and rowids
are given here, explicitly (``MAX + 1`` onwards when the batch begins), so no row has to
be written before the next one can be built — and the ranges a ``files`` row records stay
true even when the batch's own ``forget`` then deletes the highest rows (SQLite would
hand those rowids out again): one posting at a time, with a vocabulary
upsert per file, was what made a cold build of 10,000 memories take 20 s.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import count, repeat
from typing import Any

from ..files.memory import Memory
from .text import paragraphs, tokens

US = "\x1f"
"""Joins a file's body terms in its ``files`` row (no token holds a control character)."""
SUMMARY_WEIGHTS = {"description": 1.0, "name": 1.0, "aliases": 2.0, "file": 0.5, "tags": 0.5}


class Batch:
    """The rows of the files added in one transaction, written by ``flush``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.files: list[tuple[Any, ...]] = []
        self.sterms: list[tuple[int, str, int, float]] = []
        self.paras: list[tuple[int, int, int, int, int, bool]] = []
        self.pterms: list[tuple[int, int, str]] = []  # a paragraph's term counts, as JSON
        self.sdf: Counter[str] = Counter()
        self.pdf: Counter[str] = Counter()
        self.fdf: Counter[str] = Counter()
        self.next_file = _next_id(conn, "files", "id")
        self.next_para = _next_id(conn, "paras", "id")
        self.first_sterm = _next_id(conn, "sterms", "rowid")

    def add_unreadable(self, name: str, st: os.stat_result, error: str) -> None:
        """A file that cannot be read is remembered with its error, no tokens."""
        self._file(name, st, None, {"error": error}, 0.0, 0, self._ranges(), self._ranges(),
                   ())

    def add(self, name: str, st: os.stat_result, memory: Memory) -> None:
        summary = summary_terms(memory)
        file_id, before = self.next_file, self._ranges()
        p_counts: Counter[str] = Counter()
        body_length = 0
        for para in paragraphs(memory.body, memory.body_line):
            counts = Counter(tokens(para.text))
            para_id, self.next_para = self.next_para, self.next_para + 1
            length = sum(counts.values())
            self.paras.append((para_id, file_id, para.start_line, para.end_line, length,
                               _asks(para.text)))
            if counts:  # one row per paragraph: binding 1.8 million postings cost twice this
                self.pterms.append((file_id, para_id, json.dumps(counts)))
            p_counts.update(counts.keys())
            body_length += length
        self.sterms.extend(zip(count(self.first_sterm + len(self.sterms)), summary.keys(),
                               repeat(file_id), summary.values()))
        after = self._ranges()
        self._file(name, st, memory.revision, file_info(memory), sum(summary.values()),
                   body_length, before, after, p_counts.keys())
        self.sdf.update(summary.keys())
        self.pdf.update(p_counts)
        self.fdf.update(summary.keys() | p_counts.keys())

    def _ranges(self) -> tuple[int, int]:
        """The next rowid of paras and sterms."""
        return self.next_para, self.first_sterm + len(self.sterms)

    def _file(self, name: str, st: os.stat_result, revision: str | None,
              info: dict[str, Any], slen: float, blen: int, first: tuple[int, int],
              end: tuple[int, int], body_terms: Iterable[str]) -> None:
        """The file's row, with the [first, end) rowids of its rows in paras and sterms and
        the terms that key its rows in pterms (an unreadable file's are empty)."""
        self.files.append((self.next_file, name, st.st_mtime_ns, st.st_size, st.st_ino,
                           revision, json.dumps(info, ensure_ascii=False), slen, blen,
                           first[0], end[0], first[1], end[1], US.join(body_terms)))
        self.next_file += 1

    def flush(self) -> None:
        """Write everything gathered (inside the caller's transaction)."""
        conn = self.conn
        conn.executemany(f"INSERT INTO files VALUES ({', '.join('?' * 14)})", self.files)
        # rowids given: exactly the ranges the files rows recorded
        conn.executemany("INSERT INTO sterms (rowid, term, file_id, tf) VALUES (?, ?, ?, ?)",
                         self.sterms)
        conn.executemany("INSERT INTO paras VALUES (?, ?, ?, ?, ?, ?)", self.paras)
        # appended in any order; schema.merge_loaded moves them into pterms sorted
        conn.executemany("INSERT INTO pterms_load VALUES (?, ?, ?)", self.pterms)
        count_terms(conn, ((t, self.sdf[t], self.pdf[t], self.fdf[t]) for t in self.fdf))


def forget(conn: sqlite3.Connection, name: str) -> None:
    """Remove one file's rows and take its terms out of the document frequencies. Its
    rows are found by the id ranges and the body terms its ``files`` row keeps, so no
    term table needs an index by file (one fewer B-tree to build and to keep in order)."""
    row = conn.execute("SELECT id, para_first, para_end, sterm_first, sterm_end, body_terms "
                       "FROM files WHERE name = ?", (name,)).fetchone()
    if row is None:
        return
    file_id, para_first, para_end, sterm_first, sterm_end, body_terms = row
    s_terms = {t for (t,) in conn.execute(
        "SELECT term FROM sterms WHERE rowid >= ? AND rowid < ?", (sterm_first, sterm_end))}
    keys = [(t, file_id) for t in body_terms.split(US) if t]
    p_counts = {t: _paragraphs_holding(conn, t, file_id) for t, _ in keys}
    count_terms(conn, ((t, -(t in s_terms), -p_counts.get(t, 0), -1)
                       for t in s_terms | p_counts.keys()))
    conn.executemany("DELETE FROM pterms WHERE term = ? AND file_id = ?", keys)
    for table, first, end in (("sterms", sterm_first, sterm_end),
                              ("paras", para_first, para_end)):
        conn.execute(f"DELETE FROM {table} WHERE rowid >= ? AND rowid < ?", (first, end))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _paragraphs_holding(conn: sqlite3.Connection, term: str, file_id: int) -> int:
    """How many of the file's paragraphs hold ``term`` (a range of the pterms key)."""
    return int(conn.execute("SELECT COUNT(*) FROM pterms WHERE term = ? AND file_id = ?",
                            (term, file_id)).fetchone()[0])


def count_terms(conn: sqlite3.Connection, rows: Any) -> None:
    """Add (term, sdf, pdf, fdf) changes to the document frequencies: summaries,
    paragraphs and whole files holding each term."""
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
        "valid_at": memory.valid_at.isoformat() if memory.valid_at else None,
        "invalid_at": memory.invalid_at.isoformat() if memory.invalid_at else None,
        "superseded_by": memory.superseded_by,
        "baseline": memory.baseline, "baselinePriority": memory.baseline_priority,
    }


def _next_id(conn: sqlite3.Connection, table: str, key: str) -> int:
    """The id SQLite would give the next row (the largest plus one)."""
    return int(conn.execute(f"SELECT COALESCE(MAX({key}), 0) + 1 FROM {table}").fetchone()[0])


def _asks(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))
