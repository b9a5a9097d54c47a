"""Which paragraphs of a found memory to quote: the ones that answer the question.

Ranking finds a memory by its best evidence; the paragraph it quotes is what the model
reads. So once the ranking is done, the few memories that will be shown (the first
``TOP`` of it) are read again and each of their paragraphs is scored on its own:

- **words**: BM25 of the paragraph for the question (the index's paragraph statistics),
  read on an absolute scale — a share of what a paragraph holding every question word
  would score (``LEXICAL_FLOOR``) — so that one shared common word is not "the best
  match" merely because nothing else matched;
- **the answer follows the question**: a paragraph that ends by asking something hands
  ``NEIGHBOUR_WEIGHT`` of its score to the next one (dialogue and Q&A notes);
- **meaning**: the paragraph's cosine with the question, read from the folder's vectors
  (nothing is embedded here), spread 0–1 over the memory's paragraphs;
- **entities**: a name, number, date or identifier of the question found in exactly one
  paragraph of the memory points at it; a paragraph *said by* someone the question names
  (a dialogue line opening ``**Name**``) too;
- **"still X?"**: a question asking whether something still holds wants the paragraph
  that says what changed (``now``, ``no longer``, ``改成``, ``已经`` …);
- **the first paragraph**, where a note states its main fact, wins a tie.

Two paragraphs are quoted instead of one when the question has two parts (``and``,
``both``, ``和``, ``分别`` …) or when the runner-up scores within ``CLOSE`` of the best —
the choice is a guess, and showing both costs less than showing the wrong one — as long
as both fit ``PASSAGE_CHARS``. They are quoted in file order, the lines between them
left out (``…``); the result's line range spans both.

Every constant was set on starter and LoCoMo (docs/retrieval.md, "Which paragraph");
workbench was only run to confirm.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import SagememError
from .index import SearchIndex
from .results import SearchResult
from .scoring import K1, B
from .text import Paragraph, paragraphs, tokens
from .words import FUNCTION_WEIGHT, MAX_QUERY_TERMS, idf, is_function_word

TOP = 5
"""Results whose paragraphs are chosen again: what evaluation counts and inject shows."""
LEXICAL_FLOOR = 0.8
"""The words' scale: a paragraph's BM25 over the larger of the memory's best and this
share of a paragraph matching every question word. Relative to the best alone (0), a
lone common word decided: starter 0.716 → 0.814, LoCoMo 0.590 → 0.633."""
NEIGHBOUR_WEIGHT = 0.9  # as retrieval's: the answer follows an asking paragraph
COSINE_WEIGHT = 0.01
"""What meaning adds, on its 0–1 spread: a tie-breaker, deciding only where words cannot
(a question in another language than the note). Passage hit, starter / LoCoMo: 0.843 /
0.637 at 0.01; 0.824 / 0.637 at 0.05, 0.833 / 0.633 at 0 — a larger weight lets the
closest wording beat the paragraph holding the answer."""
SPEAKER_WEIGHT = 0.3
"""A dialogue line said by someone the question names: LoCoMo 0.603 → 0.633."""
ENTITY_WEIGHT = 0.15
"""All of the question's entities in this one paragraph alone: at 0.3 a name
outweighed a paragraph holding more of the question (starter 0.824 → 0.814, LoCoMo
0.639 → 0.633); at 0.15 both are as without it or better (0.843, 0.637), and the
name still decides between paragraphs that share every other word."""
FIRST_WEIGHT = 0.1
"""The first paragraph states a note's main fact: starter 0.794 → 0.814 with it."""
CHANGE_WEIGHT = 1.0
"""A "still X?" question's lift of a paragraph sharing a word with it that says what
changed: a whole match's worth, so what changed outranks the set-up that shares every
word of the question. The sets hold only a handful of such questions, so it is set by
the rule it states, not fitted (measured: starter and LoCoMo the same at 0 and 1)."""
CLOSE = 0.2
"""The runner-up within this of the best is quoted too (when both fit). Without it
(two-part questions aside) passage hit is starter 0.706, LoCoMo 0.540; with it 0.814
and 0.633: the single best is right less often than its words suggest."""
MAX_PARAGRAPHS = 200
"""A bound on what one question pays: a memory of more paragraphs (the largest dialogue
note of LoCoMo has ~50) has only the ``WINDOW`` paragraphs on either side of the one the
ranking chose scored, so a 500 KB note of 12,000 paragraphs costs a question ~30 ms
(reading and splitting it), not ~160."""
WINDOW = 25
PASSAGE_CHARS = 600
"""Two paragraphs together at most this long (an item's text is capped at 1,500)."""

TWO_PARTS = re.compile(r"\b(and|both|as well as|versus|vs)\b|和|与|及|以及|还有|分别|跟",
                       re.IGNORECASE)
STILL = re.compile(r"\b(still|anymore|any more|any longer|these days|nowadays)\b"
                   r"|还是|仍然|依然|还在|还用|现在还|至今", re.IGNORECASE)
CHANGED = re.compile(r"\b(now|no longer|changed?|switched|moved|replaced|instead|since|"
                     r"from now on|anymore|stopped)\b|现在|改成|改为|改用|换成|换到|"
                     r"已经|不再|之后|以后|起|迁到|迁移到", re.IGNORECASE)
SPEAKER = re.compile(r"\s*\*\*([^*\n]{1,60})\*\*")
ENTITY_WORD = re.compile(r"(?<![\w])([A-Z][\w'-]*|[\w.-]*\d[\w./:-]*|\w+[_./]\w[\w./-]*)")


@dataclass(frozen=True)
class _Scored:
    paragraph: Paragraph
    score: float


def chosen_passages(index: SearchIndex, query: str, results: Sequence[SearchResult],
                    cosines: Mapping[str, Mapping[tuple[int, int], float]] | None = None
                    ) -> list[SearchResult]:
    """``results`` with the first TOP quoting the paragraphs that answer ``query``;
    ``cosines`` gives each file's paragraph cosines by line range (none: words alone).
    A memory that cannot be read, or that changed since it was ranked, keeps its quote."""
    question = _question(index, query)
    chosen = list(results)
    for i, result in enumerate(chosen[:TOP]):
        paras = _paragraphs_of(index, result)
        if len(paras) < 2:
            continue
        scored = _scores(question, paras, (cosines or {}).get(result.file, {}))
        chosen[i] = _quoting(result, _picked(query, scored))
    return chosen


@dataclass(frozen=True)
class _Question:
    text: str
    terms: dict[str, float]  # each known word's weight × its IDF over paragraphs
    average_tokens: float  # a paragraph's average length in the index


def _question(index: SearchIndex, query: str) -> _Question:
    raw = list(dict.fromkeys(tokens(query)))[:MAX_QUERY_TERMS]
    known = index.term_stats(raw)
    stats = index.stats()
    paras = max(stats.paras, 1)
    terms = {t: (FUNCTION_WEIGHT if is_function_word(t) else 1.0) * idf(known[t].pdf, paras)
             for t in raw if t in known}
    return _Question(query, terms, stats.avg_plen or 1.0)


def _paragraphs_of(index: SearchIndex, result: SearchResult) -> list[Paragraph]:
    """The memory's paragraphs as it is now, or none if it is not what was ranked."""
    try:
        memory = index.store.get(result.file, archived=result.archived)
    except SagememError:
        return []
    if result.revision and memory.revision != result.revision:
        return []
    found = paragraphs(memory.body, memory.body_line)
    if len(found) <= MAX_PARAGRAPHS:
        return found
    ranked = next((i for i, p in enumerate(found) if p.start_line == result.start_line), 0)
    return found[max(ranked - WINDOW, 0):ranked + WINDOW + 1]


def _scores(question: _Question, paras: list[Paragraph],
            cosines: Mapping[tuple[int, int], float]) -> list[_Scored]:
    query = question.text
    words = _with_neighbours(paras, [_bm25(question, p.text) for p in paras])
    full = sum(question.terms.values()) * (K1 + 1)
    scale = max(max(words), LEXICAL_FLOOR * full) or 1.0
    meaning = _spread([cosines.get((p.start_line, p.end_line)) for p in paras])
    entities = _entity_hits(query, paras)
    speakers = _spoken_by_named(query, paras)
    changed = [bool(words[i] and CHANGED.search(p.text)) for i, p in enumerate(paras)] \
        if STILL.search(query) else [False] * len(paras)
    return [_Scored(p, words[i] / scale + COSINE_WEIGHT * meaning[i]
                    + ENTITY_WEIGHT * entities[i] + SPEAKER_WEIGHT * speakers[i]
                    + CHANGE_WEIGHT * changed[i] + (FIRST_WEIGHT if i == 0 else 0.0))
            for i, p in enumerate(paras)]


def _bm25(question: _Question, text: str) -> float:
    """The paragraph's BM25 for the question, as the index would score it."""
    counts: dict[str, int] = {}
    for token in tokens(text):
        counts[token] = counts.get(token, 0) + 1
    norm = K1 * (1 - B + B * sum(counts.values()) / question.average_tokens)
    return sum(w * counts[t] * (K1 + 1) / (counts[t] + norm)
               for t, w in question.terms.items() if t in counts)


def _with_neighbours(paras: list[Paragraph], words: list[float]) -> list[float]:
    """An asking paragraph hands part of its score to the next: the answer follows."""
    out = list(words)
    for i in range(len(paras) - 1):
        if words[i] and paras[i].text.rstrip().endswith(("?", "？")):
            out[i + 1] += NEIGHBOUR_WEIGHT * words[i]
    return out


def _spread(cosines: list[float | None]) -> list[float]:
    """Cosines spread 0–1 over the memory's paragraphs (a paragraph without a vector,
    or a memory with none, adds nothing)."""
    known = [c for c in cosines if c is not None and math.isfinite(c)]
    if len(known) < 2:
        return [0.0] * len(cosines)
    low, high = min(known), max(known)
    span = max(high - low, 1e-6)
    return [0.0 if c is None or not math.isfinite(c) else (c - low) / span for c in cosines]


def _entity_hits(query: str, paras: list[Paragraph]) -> list[float]:
    """Share of the question's entities (names, numbers, identifiers; not its first
    word) found in exactly one paragraph that this paragraph holds."""
    found = [set(tokens(p.text)) for p in paras]
    words = [m.group(1) for m in ENTITY_WORD.finditer(query) if m.start() > 0 or
             not m.group(1)[:1].isupper()]
    entities = {t for w in words for t in tokens(w)[:1]}
    hits = [0.0] * len(paras)
    for entity in entities:
        where = [i for i, held in enumerate(found) if entity in held]
        if len(where) == 1:
            hits[where[0]] += 1 / len(entities)
    return hits


def _spoken_by_named(query: str, paras: list[Paragraph]) -> list[float]:
    """1 for a paragraph opening with a bold speaker the question names."""
    named = set(tokens(query))
    out = []
    for p in paras:
        match = SPEAKER.match(p.text)
        out.append(1.0 if match and set(tokens(match.group(1))) & named else 0.0)
    return out


def _picked(query: str, scored: list[_Scored]) -> list[Paragraph]:
    """The best paragraph, and the runner-up too when the question has two parts or
    the two are close, if both fit; in file order."""
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    best, second = scored[order[0]], scored[order[1]]
    wanted = TWO_PARTS.search(query) is not None or second.score >= best.score - CLOSE
    fits = len(best.paragraph.text) + len(second.paragraph.text) <= PASSAGE_CHARS
    if wanted and fits:
        return sorted([best.paragraph, second.paragraph], key=lambda p: p.start_line)
    return [best.paragraph]


def _quoting(result: SearchResult, quoted: list[Paragraph]) -> SearchResult:
    """``result`` quoting these paragraphs: one, two that touch as one span, or two
    apart with the lines between them left out."""
    first, last = quoted[0], quoted[-1]
    if len(quoted) == 1:
        text = first.text
    elif last.start_line <= first.end_line + 2:  # only a blank line between them
        text = f"{first.text}\n\n{last.text}"
    else:
        text = f"{first.text}\n…\n{last.text}"
    return replace(result, start_line=first.start_line, end_line=last.end_line, paragraph=text)
