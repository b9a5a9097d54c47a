"""The relevance gate: does this question concern the memories at all?

``search`` is called on purpose and may show weak candidates; ``inject`` runs unasked
before every turn, and a runbook injected into "what's the time complexity of binary
search?" teaches its user to switch memory off. So injection asks the gate first.

The evidence is three numbers, each measured against something, never raw:

- **the semantic margin**: the best cosine between the question and any text of any
  memory, minus the question's *background level* (its similarity to generic questions,
  ``background.py``). A raw cosine threshold separates poorly — questions resemble other
  questions more than they resemble notes, and a generic question near a memory's topic
  still scores 0.3 — while the margin asks "closer to the memories than to questions
  about nothing in particular?" (separation, AUC: starter 0.88 → 0.96, workbench
  0.72 → 0.89);
- **the lexical strength**: the best lexical score (BM25 normalised to the corpus's IDF
  scale, ``retrieve.py``), capped, since rare words shared with one memory — a project's
  name, an error code — are evidence the encoder does not see;
- **the folder vocabulary**: the best log-odds of the question's words that the memory
  holds, of being a word of this folder's memories rather than of a generic question
  (``vocabulary.py``) — "想看线上真实数据要走什么手续" reads like any how-to, but in
  starter's folder 线上 (production) is 30 times likelier than in generic questions, and
  lifts it over the gate. "rust" in a folder of Rust notes is a folder word too (3.6, a
  0.11 lift), but a generic Rust how-to stays out on its margin: the background holds
  such how-tos.

``score = margin + LEXICAL_WEIGHT · min(lexical, LEXICAL_CAP) + VOCABULARY_WEIGHT ·
vocabulary``; the question passes when ``score > THRESHOLD``. Each memory is judged the
same way on its own evidence (its best cosine, its lexical score, the words it holds):
inject takes, of a passing question, the results that pass themselves and whose fused
score is within ``INJECT_SHARE`` of the best. So "what is my cat called" gives the note
about the cat, not the runbook where someone is "on call" that the fusion ranked beside
it (measured on starter: spurious injected 0.20 → 0.16, for 0.90 → 0.87 of the
answerable questions given their memory).

The trade-off the threshold sets is printed by ``sagemem eval SET --curve`` (``evaluate.
curve``); ``docs/retrieval.md`` has it for each evaluation set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from .results import Relevance, SearchResponse, SearchResult

THRESHOLD = -0.125
"""The lowest threshold at which none of starter's unrelated questions passes (4,048
background questions, vocabulary weighed in): at -0.15 one of its 19 does, for 0.88 of
its answerable questions injected instead of 0.87. Generic questions asked of another
folder (LoCoMo's of starter's, starter's of LoCoMo's) pass 12% and 23% of the time here,
20% and 27% at -0.15; at -0.10, 7% and 15%, with injection down to 0.85."""
LEXICAL_WEIGHT = 0.1
"""What lexical strength adds: a strong match (score 2, several rare words) is worth a
0.2 margin. Without it starter injects 0.76 of its answerable questions at this
threshold, with it 0.90; on starter no unrelated question scores above 0.6 lexically.
Again with the vocabulary, 4,048 background questions and -0.125: 0.78 without, 0.87
with, and no unrelated one above 0.72 lexically."""
LEXICAL_CAP = 2.0  # beyond two rare words' worth, more overlap says nothing new
VOCABULARY_WEIGHT = 0.03
"""What a log-odds of folder vocabulary adds: a word 30 times likelier in the memories
(log-odds 3.4) is worth a 0.1 margin. Measured on generic questions the background did
not hold (each half of the second-round questions, the other half in the background),
asked of starter's and LoCoMo's folders, at the threshold that keeps starter's inject
recall at 0.86: 7.5% and 14% of them passed without vocabulary, 5.6% and 11% at 0.02,
5.0% and 10% at 0.03, 5.7% and 11% at 0.04; against the first background alone, 0.03
took them from 11% and 18% to 8% and 12%."""
INJECT_SHARE = 0.85
"""Inject results scoring at least this share of the best: on starter, spurious
injected is 0.27 at 0.8 (five at most), 0.21 at 0.85, 0.17 at 0.9 — where the share of
questions given their memory starts to fall (0.90 → 0.88). Measured again with the
vocabulary and THRESHOLD at -0.125: spurious injected 0.20, 0.15 and 0.11 for 0.87, 0.87
and 0.85 of starter's answerable questions injected, and LoCoMo's 0.89, 0.87, 0.84: 0.8
gives LoCoMo 0.02 for a third more wrong memories on starter, 0.9 costs both; kept."""


def evidence(cosine: float, background_level: float, lexical: float,
             vocabulary: float = 0.0) -> float:
    """The gate's score: the margin over the background plus capped lexical strength
    plus folder vocabulary."""
    return (cosine - background_level
            + LEXICAL_WEIGHT * min(max(lexical, 0.0), LEXICAL_CAP)
            + VOCABULARY_WEIGHT * max(vocabulary, 0.0))


def judge(results: Sequence[SearchResult], cosines: Mapping[str, float],
          lexical: Mapping[str, float], background_level: float,
          vocabulary: Mapping[str, float] | None = None) -> Relevance:
    """The verdict on a question whose ranked ``results`` have these best cosines,
    lexical scores and vocabulary log-odds (by file; a side that did not find a file
    leaves it out): it passes when one of them passes on its own evidence, and reports
    that best one's."""
    words = vocabulary or {}
    scored = {r.file: round(evidence(cosines.get(r.file, -1.0), background_level,
                                     lexical.get(r.file, 0.0), words.get(r.file, 0.0)), 4)
              for r in results}
    best = max(scored, key=lambda f: scored[f], default=None)
    if best is None:
        return Relevance(passes=False, score=-1.0, margin=-1.0, lexical=0.0)
    return at_threshold(Relevance(
        passes=False, score=scored[best],
        margin=round(cosines.get(best, -1.0) - background_level, 4),
        lexical=round(lexical.get(best, 0.0), 4), evidence=tuple(scored.items())), THRESHOLD)


def at_threshold(relevance: Relevance, threshold: float) -> Relevance:
    """The verdict had the gate stood at ``threshold``: what ``evaluate.curve`` draws.
    A verdict by words alone has no evidence to compare, and stays as it is."""
    if relevance.words_only:
        return relevance
    return replace(relevance, passes=relevance.score > threshold,
                   files=tuple(f for f, s in relevance.evidence if s > threshold))


def by_words(results: Sequence[SearchResult]) -> Relevance:
    """The verdict while meaning cannot be judged (memories not embedded yet, the
    embedder or the background not set up): the lexical thresholds, which every lexical
    result passed, decide alone — as with semantic search off."""
    return Relevance(passes=bool(results), score=0.0, margin=0.0,
                     lexical=max((r.score for r in results), default=0.0),
                     files=tuple(r.file for r in results), words_only=True)


def injectable(response: SearchResponse) -> tuple[SearchResult, ...]:
    """The results fit to inject unasked: none when the gate is closed, else those near
    the best. A lexical response (no verdict) passed the lexical thresholds already."""
    relevance = response.relevance
    if relevance is None:
        return response.results
    if not relevance.passes or not response.results:
        return ()
    if relevance.words_only:
        return tuple(r for r in response.results if r.file in relevance.files)
    best = response.results[0].score
    return tuple(r for r in response.results
                 if r.score >= INJECT_SHARE * best and r.file in relevance.files)
