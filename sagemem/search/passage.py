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
- **meaning**, where no paragraph shares a word with the question: the paragraph's
  cosine with it, read from the folder's vectors (nothing is embedded here), spread 0–1
  over the memory's paragraphs;
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
import time
from collections import Counter
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
lone common word decided. Passage hit (hybrid), starter / LoCoMo: 0.853 / 0.637 with
every part of this module; 0.726 / 0.586 at 0."""
NEIGHBOUR_WEIGHT = 0.9
"""As retrieval's: the answer follows an asking paragraph (LoCoMo 0.579 without it)."""
MEANING_WEIGHT = 0.3
"""Where no paragraph shares a word with the question (another language than the
note), meaning decides, on its 0–1 spread over the memory's paragraphs: the closest
paragraph outranks the first paragraph's FIRST_WEIGHT. Starter 0.843 at 0.01 (the first
paragraph won), 0.853 at 0.3, 0.824 at 1.0 (the close runner-up was no longer quoted
too); LoCoMo, whose questions always share a word, is unchanged. Where words match,
meaning adds nothing: as a tie-breaker (0.01) it changed neither set, at 0.05 it cost
starter three questions (the closest wording beat the paragraph holding the answer)."""
SPEAKER_WEIGHT = 0.3
"""A dialogue line said by someone the question names: LoCoMo 0.613 without it."""
ENTITY_WEIGHT = 0.15
"""All of the question's entities in this one paragraph alone. Starter is the same
without it, LoCoMo 0.639 (three questions more); at 0.3 a name outweighed a paragraph
holding more of the question and both sets lost. Kept for the pattern seen on the
independent held-out set: a note listing several people's dates quoting the wrong
person's (tests/test_passage.py)."""
FIRST_WEIGHT = 0.1
"""The first paragraph states a note's main fact: starter 0.794, LoCoMo 0.626 without."""
CHANGE_WEIGHT = 1.0
"""A "still X?" question's lift of a paragraph sharing a word with it that says what
changed: a whole match's worth, so what changed outranks the set-up that shares every
word of the question. The sets hold only a handful of such questions, so it is set by
the rule it states, not fitted (measured: starter and LoCoMo the same at 0 and 1)."""
CLOSE = 0.2
"""The runner-up within this of the best is quoted too (when both fit). Without it
(two-part questions aside) starter 0.706, LoCoMo 0.544: the single best is right less
often than its words suggest."""
MAX_CHOICE_BYTES = 128 * 1024
"""A memory larger than this keeps the ranking's quote: reading and splitting a 512 KB
note again costs a question ~30 ms (LoCoMo's largest note is 47 KB)."""
MAX_PARAGRAPHS = 200
"""A bound on what one question pays: a memory of more paragraphs (the largest dialogue
note of LoCoMo has ~50) has only the ``WINDOW`` paragraphs on either side of the one the
ranking chose scored: 12,000 paragraphs scored cost a question ~130 ms."""
WINDOW = 25
PASSAGE_CHARS = 600
"""Two paragraphs together at most this long (an item's text is capped at 1,500)."""

TWO_PARTS = re.compile(r"\b(and|both|as well as|versus|vs)\b|和|与|以及|还有|分别",
                       re.IGNORECASE)
STILL = re.compile(r"\b(still|anymore|any more|any longer|these days|nowadays)\b"
                   r"|还是|仍然|依然|还在|还用|现在还|至今", re.IGNORECASE)
CHANGED = re.compile(r"\b(now|no longer|changed?|switched|moved|replaced|instead|since|"
                     r"from now on|anymore|stopped)\b|现在|改成|改为|改用|换成|换到|"
                     r"已经|不再|之后|以后|起|迁到|迁移到", re.IGNORECASE)
SPEAKER = re.compile(r"\s*\*\*([^*\n]{1,60})\*\*")
EDGE_PUNCTUATION = "\"'`()[]{}<>,;:!?？！，。、“”‘’"
MAX_WORD_CHARS = 64


@dataclass(frozen=True)
class _Scored:
    paragraph: Paragraph
    score: float


def chosen_passages(index: SearchIndex, query: str, results: Sequence[SearchResult],
                    cosines: Mapping[str, Mapping[tuple[int, int], float]] | None = None,
                    *, first: int = TOP, deadline: float | None = None
                    ) -> list[SearchResult]:
    """``results`` with the first ``first`` (TOP; fewer on a later page) quoting the
    paragraphs that answer ``query``; ``cosines`` gives each file's paragraph cosines by
    line range (none: words alone). A memory that cannot be read, that changed since it
    was ranked or is over MAX_CHOICE_BYTES keeps its quote, as does every one once
    ``deadline`` (``time.monotonic()``) has passed."""
    chosen = list(results)
    if first <= 0 or not chosen:
        return chosen
    question = _question(index, query)
    for i, result in enumerate(chosen[:first]):
        if deadline is not None and time.monotonic() > deadline:
            break
        paras = _paragraphs_of(index, result)
        if len(paras) < 2:
            continue
        scored = _scores(question, paras, (cosines or {}).get(result.file, {}))
        chosen[i] = _quoting(result, scored, _picked(query, scored))
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
    if (result.revision and memory.revision != result.revision) or \
            memory.size > MAX_CHOICE_BYTES:
        return []
    found = paragraphs(memory.body, memory.body_line)
    if len(found) <= MAX_PARAGRAPHS:
        return found
    ranked = next((i for i, p in enumerate(found) if p.start_line == result.start_line), 0)
    return found[max(ranked - WINDOW, 0):ranked + WINDOW + 1]


def _scores(question: _Question, paras: list[Paragraph],
            cosines: Mapping[tuple[int, int], float]) -> list[_Scored]:
    query = question.text
    counts = [Counter(tokens(p.text)) for p in paras]
    words = _with_neighbours(paras, [_bm25(question, c) for c in counts])
    full = sum(question.terms.values()) * (K1 + 1)
    scale = max(max(words), LEXICAL_FLOOR * full) or 1.0
    meaning = _spread([cosines.get((p.start_line, p.end_line)) for p in paras])
    weight = 0.0 if max(words) > 0 else MEANING_WEIGHT
    entities = _entity_hits(query, counts)
    speakers = _spoken_by_named(query, paras)
    changed = [bool(words[i] and CHANGED.search(p.text)) for i, p in enumerate(paras)] \
        if STILL.search(query) else [False] * len(paras)
    return [_Scored(p, words[i] / scale + weight * meaning[i]
                    + ENTITY_WEIGHT * entities[i] + SPEAKER_WEIGHT * speakers[i]
                    + CHANGE_WEIGHT * changed[i] + (FIRST_WEIGHT if i == 0 else 0.0))
            for i, p in enumerate(paras)]


def _bm25(question: _Question, counts: Counter[str]) -> float:
    """The paragraph's BM25 for the question (``counts``: its tokens), as the index
    would score it."""
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


def _entity_hits(query: str, counts: list[Counter[str]]) -> list[float]:
    """Share of the question's entities found in exactly one paragraph that this
    paragraph holds (``counts``: each paragraph's tokens)."""
    entities = entities_of(query)
    hits = [0.0] * len(counts)
    for entity in entities:
        where = [i for i, held in enumerate(counts) if entity in held]
        if len(where) == 1:
            hits[where[0]] += 1 / len(entities)
    return hits


def entities_of(query: str) -> set[str]:
    """The question's names, numbers and identifiers, each as its first token: a word
    holding a digit, an inner ``_``, ``.`` or ``/``, or a capital (its first word
    aside, capitalised anyway). Word by word, at most MAX_QUERY_TERMS of them."""
    found: set[str] = set()
    for position, raw in enumerate(query.split()[:MAX_QUERY_TERMS]):
        word = raw.strip(EDGE_PUNCTUATION)[:MAX_WORD_CHARS]
        if word and (any(c.isdigit() for c in word) or any(c in "_./" for c in word[1:-1])
                     or (position > 0 and word[0].isupper())):
            found.update(tokens(word)[:1])
    return found


def _spoken_by_named(query: str, paras: list[Paragraph]) -> list[float]:
    """1 for a paragraph opening with a bold speaker the question names."""
    named = set(tokens(query))
    out = []
    for p in paras:
        match = SPEAKER.match(p.text)
        out.append(1.0 if match and set(tokens(match.group(1))) & named else 0.0)
    return out


def _picked(query: str, scored: list[_Scored]) -> list[int]:
    """The best paragraph, and the runner-up too when the question has two parts or
    the two are close, if both fit: their positions, in file order."""
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    best, second = order[0], order[1]
    wanted = TWO_PARTS.search(query) is not None or \
        scored[second].score >= scored[best].score - CLOSE
    fits = len(scored[best].paragraph.text) + len(scored[second].paragraph.text) \
        <= PASSAGE_CHARS
    return sorted([best, second]) if wanted and fits else [best]


def _quoting(result: SearchResult, scored: list[_Scored], picked: list[int]
             ) -> SearchResult:
    """``result`` quoting the ``picked`` paragraphs: one, two in a row as one span, or
    two apart with the paragraphs between them left out (``…``)."""
    first, last = scored[picked[0]].paragraph, scored[picked[-1]].paragraph
    if len(picked) == 1:
        text = first.text
    elif picked[1] == picked[0] + 1:
        text = f"{first.text}\n\n{last.text}"
    else:
        text = f"{first.text}\n…\n{last.text}"
    return replace(result, start_line=first.start_line, end_line=last.end_line, paragraph=text)
