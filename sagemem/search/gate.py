"""The relevance gate: does this question concern the memories at all?

``search`` is called on purpose and may show weak candidates; ``inject`` runs unasked
before every turn, and a runbook injected into "what's the time complexity of binary
search?" teaches its user to switch memory off. So injection asks the gate first.

The evidence is two numbers, both measured against something, never raw:

- **the semantic margin**: the best cosine between the question and any text of any
  memory, minus the question's *background level* (its similarity to generic questions,
  ``background.py``). A raw cosine threshold separates poorly — questions resemble other
  questions more than they resemble notes, and a generic question near a memory's topic
  still scores 0.3 — while the margin asks "closer to the memories than to questions
  about nothing in particular?" (separation, AUC: starter 0.88 → 0.96, workbench
  0.72 → 0.89);
- **the lexical strength**: the best lexical score (BM25 normalised to the corpus's IDF
  scale, ``retrieve.py``), capped, since rare words shared with one memory — a project's
  name, an error code — are evidence the encoder does not see.

``score = margin + LEXICAL_WEIGHT · min(lexical, LEXICAL_CAP)``; the question passes when
``score > THRESHOLD``. Each memory is judged the same way on its own evidence (its best
cosine, its lexical score): inject takes, of a passing question, the results that pass
themselves and whose fused score is within ``INJECT_SHARE`` of the best. So "what is my
cat called" gives the note about the cat, not the runbook where someone is "on call"
that the fusion ranked beside it (measured on starter: spurious injected 0.20 → 0.16,
for 0.90 → 0.87 of the answerable questions given their memory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .results import Relevance, SearchResponse, SearchResult

THRESHOLD = -0.15
"""Where starter's trade-off turns (2,556 background questions): at -0.20 the share of
its answerable questions injected rises only to 0.93 while unrelated ones start to pass
(0.05), at -0.10 injection falls to 0.87 with none passing either way."""
LEXICAL_WEIGHT = 0.1
"""What lexical strength adds: a strong match (score 2, several rare words) is worth a
0.2 margin. Without it starter injects 0.76 of its answerable questions at this
threshold, with it 0.90; on starter no unrelated question scores above 0.6 lexically."""
LEXICAL_CAP = 2.0  # beyond two rare words' worth, more overlap says nothing new
INJECT_SHARE = 0.85
"""Inject results scoring at least this share of the best: on starter, spurious
injected is 0.27 at 0.8 (five at most), 0.21 at 0.85, 0.17 at 0.9 — where the share of
questions given their memory starts to fall (0.90 → 0.88)."""


def evidence(cosine: float, background_level: float, lexical: float) -> float:
    """The gate's score: the margin over the background plus capped lexical strength."""
    return cosine - background_level + LEXICAL_WEIGHT * min(max(lexical, 0.0), LEXICAL_CAP)


def judge(results: Sequence[SearchResult], cosines: Mapping[str, float],
          lexical: Mapping[str, float], background_level: float) -> Relevance:
    """The verdict on a question whose ranked ``results`` have these best cosines and
    lexical scores (by file; a side that did not find a file leaves it out): it passes
    when one of them passes on its own evidence, and reports that best one's."""
    scored = {r.file: evidence(cosines.get(r.file, -1.0), background_level,
                               lexical.get(r.file, 0.0)) for r in results}
    best = max(scored, key=lambda f: scored[f], default=None)
    if best is None:
        return Relevance(passes=False, score=-1.0, margin=-1.0, lexical=0.0)
    return Relevance(passes=scored[best] > THRESHOLD, score=round(scored[best], 4),
                     margin=round(cosines.get(best, -1.0) - background_level, 4),
                     lexical=round(lexical.get(best, 0.0), 4),
                     files=tuple(f for f in scored if scored[f] > THRESHOLD))


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
