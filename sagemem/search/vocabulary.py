"""Folder vocabulary: the question's words that this folder uses far more than questions
in general do — the relevance gate's third piece of evidence (``gate.py``).

The encoder reads meaning and misses a folder's own words: "想看线上真实数据要走什么手续"
reads like any how-to, yet 线上 is starter's word for production (log-odds 3.4; "lotus",
its project's name, 6.3; 怎么 −3.4). So for each term of the question
(``text.tokens``, the index's tokeniser: words, and CJK as two-character units) that a
memory holds, its *log-odds*: how much likelier a token of a memory is to be this term
than a token of a background question (``background.txt``). A memory's vocabulary
evidence is the best of its terms', never below 0.

Rates, not document counts: a memory is about 14 times as long as a question (starter:
107 tokens, the background: 7.5), so "the share of memories holding the word" over "the
share of questions holding it" makes every common word ("the", "go", 的) look like folder
vocabulary. Measured (AUC of starter's answerable questions against LoCoMo's asked of
starter's folder, weight 0.03): with the folder's best word for every memory, document
counts lowered it (0.941 → 0.937) and rates raised it (0.944); judged per memory, as
here, both raise it (0.950), but document counts cost starter's own separation more
(0.991 → 0.988, rates 0.990). A document of ``L`` tokens holds a term of rate ``r`` with
probability ``1 − e^(−rL)``, so the rate of a term in ``df`` of ``n`` documents is
``−ln(1 − df/n) / L`` (smoothed, ``SMOOTHING``).

The background's term counts ship precomputed beside it (``background-terms.json``,
written by ``tools/background_vectors.py``, plain JSON carrying the digest of the text it
counted): counting them afresh takes ~22 ms, which a hook would pay on every prompt;
reading the table ~3 ms. A table that does not match the text is ignored and the counts
made in the process, never wrong. The memories' side is the index's document
frequencies (``SearchIndex.term_stats``) and which candidates hold which word
(``files_holding``): about 0.1–0.3 ms a question on starter and LoCoMo.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .background import BACKGROUND_FILE, questions
from .index import SearchIndex
from .text import tokens

TERMS_FILE = BACKGROUND_FILE.with_name("background-terms.json")
SMOOTHING = 0.5
"""Added to every document count (and twice to the total), so a word no background
question holds gets a rate, not infinite odds. 0.5, 1 and 2 were within 0.002 of each
other in AUC on starter and LoCoMo; 0.5 (Jeffreys' prior) trusts the counts most."""
MAX_TERMS = 64  # as the lexical side (retrieve.MAX_QUERY_TERMS): a pasted page is no question


@dataclass(frozen=True)
class TermCounts:
    """How many documents (of ``documents``, ``length`` tokens on average) hold each term."""

    df: Mapping[str, int]
    documents: int
    length: float

    def rate(self, term: str) -> float:
        """The term's smoothed share of these documents' tokens."""
        return rate(self.df.get(term, 0), self.documents, self.length)


def rate(df: int, documents: int, length: float) -> float:
    """The per-token rate of a term held by ``df`` of ``documents`` of ``length`` tokens."""
    held = (df + SMOOTHING) / (documents + 2 * SMOOTHING)
    return -math.log1p(-held) / max(length, 1.0)


def count_terms(texts: Iterable[str]) -> TermCounts:
    """Document frequencies of the tokens of ``texts``, and their mean length."""
    df: Counter[str] = Counter()
    documents = total = 0
    for text in texts:
        found = tokens(text)
        df.update(set(found))
        documents += 1
        total += len(found)
    return TermCounts(dict(df), documents, total / documents if documents else 0.0)


def text_digest(texts: Iterable[str]) -> str:
    """Names a list of questions, so a table is never matched with another list."""
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]


def terms_table(counts: TermCounts, digest: str) -> str:
    """The shipped table's JSON text (``tools/background_vectors.py`` writes it)."""
    return json.dumps({"digest": digest, "documents": counts.documents,
                       "length": round(counts.length, 4), "df": dict(sorted(counts.df.items()))},
                      ensure_ascii=False, separators=(",", ":")) + "\n"


@lru_cache(maxsize=1)
def background_counts() -> TermCounts:
    """The background's term counts: the shipped table when it matches the text."""
    digest = text_digest(questions())
    try:
        table = json.loads(Path(TERMS_FILE).read_text(encoding="utf-8"))
        if table["digest"] == digest:
            counts = TermCounts(dict(table["df"]), int(table["documents"]),
                                float(table["length"]))
            if _plausible(counts):
                return counts
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # missing or damaged: count them now, as the table would have
    return count_terms(questions())


def _plausible(counts: TermCounts) -> bool:
    """Counts a rate can be computed from: some documents of a finite, positive length,
    each term held by a whole number of them, at most all."""
    return (counts.documents > 0 and math.isfinite(counts.length) and counts.length > 0
            and all(isinstance(t, str) and isinstance(df, int) and 0 <= df <= counts.documents
                    for t, df in counts.df.items()))


def log_odds(index: SearchIndex, terms: Iterable[str],
             background: TermCounts | None = None) -> dict[str, float]:
    """Each of ``terms`` the folder holds: its rate in the memories over its rate in the
    background questions, as a natural log."""
    background = background or background_counts()
    stats = index.stats()
    length = stats.avg_blen + stats.avg_slen
    return {t: math.log(rate(s.fdf, stats.files, length) / background.rate(t))
            for t, s in index.term_stats(terms).items()}


def by_file(index: SearchIndex, query: str, files: Iterable[str],
            background: TermCounts | None = None) -> dict[str, float]:
    """Each of ``files``' vocabulary evidence for ``query``: the best log-odds of the
    question's terms it holds, 0 when none is likelier in the folder than elsewhere."""
    terms = list(dict.fromkeys(tokens(query)))[:MAX_TERMS]
    odds = {t: v for t, v in log_odds(index, terms, background).items() if v > 0}
    wanted = list(dict.fromkeys(files))
    held = index.files_holding(odds, wanted) if odds else {}
    return {f: max((odds[t] for t in held.get(f, ())), default=0.0) for f in wanted}
