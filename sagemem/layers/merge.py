"""Merging the two layers' search responses into one.

The scores come from two separate indexes and cannot be compared as they are: BM25's
IDF is each folder's own (a word rare in a five-file global folder scores high there),
and a hybrid score is already read on its folder's own scale (the best lexical score,
the folder's median cosine). So each result is put on its layer's 0–1 scale — its score
divided by the best score of its layer for this question — and the two lists are
interleaved by that, the project first on a tie. Round-robin by rank was the other
option; it gives a layer's weak fifth hit the place of the other's strong second. Each
layer's relevance gate has judged its own results, on its own evidence, so a global
folder that has nothing to do with the question still injects nothing; and since each
layer's best is 1.0, ``gate.injectable``'s "within 85 % of the best" is that layer's
own rule. A project memory shadows a global one of the same title (``name``, else the
file name without .md, NFKC-normalised and case-folded) or the same file name, whether
or not it answered this question: the project overrides that habit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..search.gate import injectable
from ..search.results import Coverage, Relevance, SearchResponse, SearchResult, page_cursor
from .titles import GLOBAL, PROJECT, shadowed


def merged(project: SearchResponse, global_: SearchResponse, keys: frozenset[str], *,
           offset: int, limit: int, paged_as: str, cap: int) -> SearchResponse:
    """One response from both layers' (unpaged) responses: the global results the
    project shadows (``keys``) dropped, both on their 0–1 scales and interleaved, at
    most ``cap`` in all, then the page at ``offset``."""
    kept = tuple(replace(r, layer=GLOBAL) for r in global_.results
                 if not shadowed(r.file, r.name, keys))
    dropped = len(global_.results) - len(kept)
    global_ = replace(global_, results=kept)
    ranked = sorted([*_scaled(project.results), *_scaled(kept)],
                    key=lambda r: (-r.score, r.layer != PROJECT, r.archived, r.file))[:cap]
    page = ranked[offset:offset + max(limit, 1)]
    more = offset + len(page) < len(ranked)
    cursor = page_cursor(offset + len(page), project.query, paged_as) if more else None
    notices = (*project.notices, *(f"global layer: {n}" for n in global_.notices))
    return SearchResponse(project.query, tuple(page),
                          _coverage(project.coverage, global_.coverage, dropped, cursor),
                          tuple(dict.fromkeys(notices)), _relevance(project, global_))


def _scaled(results: Iterable[SearchResult]) -> list[SearchResult]:
    """Results with their score divided by the best of them (their layer's 0–1 scale)."""
    listed = list(results)
    best = max((r.score for r in listed), default=0.0)
    return [replace(r, score=round(r.score / best, 4) if best > 0 else 0.0) for r in listed]


def _coverage(a: Coverage, b: Coverage, dropped: int, cursor: str | None) -> Coverage:
    """Both layers' counts added; the shadowed global results are not candidates."""
    return Coverage(a.files_scanned + b.files_scanned,
                    max(a.candidates + b.candidates - dropped, 0),
                    a.paragraphs_filtered + b.paragraphs_filtered, cursor,
                    a.files_without_vectors + b.files_without_vectors)


def _relevance(project: SearchResponse, global_: SearchResponse) -> Relevance | None:
    """The question concerns the memories if it concerns either layer; ``files`` are the
    results each layer would inject on its own (``injectable``), so the merged response
    injects exactly what the layers would."""
    verdicts = [r.relevance for r in (project, global_) if r.relevance is not None]
    if not verdicts:
        return None  # lexical: every result passed the lexical thresholds already
    files = tuple(r.file for response in (project, global_) for r in injectable(response))
    return Relevance(passes=any(v.passes for v in verdicts),
                     score=max(v.score for v in verdicts),
                     margin=max(v.margin for v in verdicts),
                     lexical=max(v.lexical for v in verdicts), files=files,
                     words_only=any(v.words_only for v in verdicts),
                     evidence=tuple(e for v in verdicts for e in v.evidence))
