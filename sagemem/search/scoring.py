"""BM25 inside SQLite: the scoring queries retrieval ranks with, and the corpus
statistics they need.

Each query term arrives as a row of a VALUES table (term, weight, idf, information),
posting lists are read through the term index, and only aggregates come back to Python —
a common word over ten thousand files costs a C loop, not ten thousand Python objects.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

QueryTerms = dict[str, tuple[float, float, float]]
"""A query as scoring sees it: term → (weight, idf, information)."""
K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Stats:
    """Corpus statistics BM25 needs."""

    files: int
    avg_slen: float
    paras: int
    avg_plen: float
    avg_blen: float


def sum_stats(conn: sqlite3.Connection) -> Stats:
    """The statistics summed afresh from the tables (kept in a meta row after each change)."""
    files, slen, blen = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(slen), 0), COALESCE(SUM(blen), 0) FROM files "
        "WHERE revision IS NOT NULL").fetchone()
    paras, plen = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(plen), 0) FROM paras").fetchone()
    return Stats(files, slen / files if files else 0.0, paras, plen / paras if paras else 0.0,
                 blen / files if files else 0.0)


def summary_scores(conn: sqlite3.Connection, q: QueryTerms, avg_len: float, *,
                   file_ids: list[int] | None = None, min_mass: float = 0.0
                   ) -> list[tuple[int, float, float, str]]:
    """(file id, BM25 score, matched information, matched terms joined by US) of every
    summary holding a query term, keeping those with at least ``min_mass``."""
    where = f"WHERE s.file_id IN ({_marks(file_ids)})" if file_ids is not None else ""
    sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}) "
           "SELECT s.file_id, SUM(q.w * q.idf * s.tf * ? / (s.tf + ? * (1 - ? + ? * "
           "f.slen / ?))), SUM(q.w * q.info), GROUP_CONCAT(s.term, char(31)) "
           "FROM q CROSS JOIN sterms s ON s.term = q.term JOIN files f ON f.id = s.file_id "
           f"{where} GROUP BY s.file_id HAVING SUM(q.w * q.info) >= ?")
    args = (*_flat(q), *_bm25_args(avg_len), *(file_ids or ()), min_mass)
    return conn.execute(sql, args).fetchall()


def paragraph_scores(conn: sqlite3.Connection, q: QueryTerms, avg_len: float, file_ids: list[int]
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
    return conn.execute(sql, (*_flat(q), *_bm25_args(avg_len), *file_ids)).fetchall()


def body_scores(conn: sqlite3.Connection, q: QueryTerms, avg_len: float, file_ids: list[int]
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
    return conn.execute(sql, (*_flat(q), *file_ids, *_bm25_args(avg_len))).fetchall()


def body_pool(conn: sqlite3.Connection, q: QueryTerms, limit: int) -> list[int]:
    """Files whose paragraphs hold the most information of the given terms."""
    if not q:
        return []
    sql = (f"WITH q(term, w, idf, info) AS (VALUES {_marks(q, 4)}) "
           "SELECT d.file_id FROM (SELECT DISTINCT t.file_id, t.term FROM q CROSS JOIN "
           "pterms t ON t.term = q.term) d JOIN q ON q.term = d.term GROUP BY d.file_id "
           "ORDER BY SUM(q.w * q.info) DESC, d.file_id LIMIT ?")
    return [f for (f,) in conn.execute(sql, (*_flat(q), limit))]


def _marks(items: object, width: int = 1) -> str:
    group = "?" if width == 1 else "(" + ",".join("?" * width) + ")"
    return ",".join([group] * len(items))  # type: ignore[arg-type]


def _flat(q: QueryTerms) -> list[object]:
    return [x for term, values in q.items() for x in (term, *values)]


def _bm25_args(avg_len: float) -> tuple[float, ...]:
    return (K1 + 1, K1, B, B, avg_len or 1.0)
