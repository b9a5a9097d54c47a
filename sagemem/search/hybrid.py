"""Search modes: lexical (two-stage BM25, ``retrieve.py``), semantic (vectors) and hybrid.

- ``semantic``: each memory scores the highest cosine between the question and any of
  its texts (summary or paragraph), and quotes that text's lines.
- ``hybrid``: score fusion of both rankings (``fuse``). Each side is first put on a
  0–1 scale of its own: lexical scores by the best lexical score; cosines from the
  folder's median cosine for this question (what "unrelated" looks like here) up to the
  best one. A memory then scores ``max(l, s) + FUSION_MIN_WEIGHT · min(l, s)``: strong
  evidence from one side is enough, agreement of both ranks higher.

In both, the first results then quote the paragraphs chosen by ``passage.py`` (words,
entities, the speaker, what changed, meaning where no word is shared), given the
paragraphs' cosines; so does a search that fell back to words.

Semantic and hybrid responses carry the relevance gate's verdict (``gate.py``).
Memories whose vectors are not in step yet (edited, and not embedded within the query's
budget) are left out of the semantic ranking and counted in
``Coverage.files_without_vectors``; lexical ranking still sees them. All modes return
the same ``SearchResponse``.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Literal

from ..embed.embedder import Embedder
from ..errors import EmbedderUnavailable, VectorsUnavailable
from ..files.fields import TYPES
from . import vocabulary
from .background import background_for
from .degraded import cannot_write
from .gate import by_words, judge
from .index import IndexedFile, SearchIndex
from .passage import TOP, chosen_passages
from .results import (
    Coverage,
    Moved,
    Relevance,
    SearchResponse,
    SearchResult,
    cursor_offset,
    page_cursor,
    result_at,
)
from .retrieve import MAX_CANDIDATES, search
from .superseded import after_replacements, capped_scores
from .vector_sync import QUERY_BUDGET_SECONDS, VectorReport, clip, indexed_revisions, sync_vectors
from .vectors import Hit, VectorStore, vectors_path

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Mode = Literal["lexical", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = ("lexical", "semantic", "hybrid")
FUSION_MIN_WEIGHT = 0.3
"""basic-memory's weight of the weaker side, kept: measured, recall@5 is the same at 0.5
on starter and workbench and 0.003 apart on LoCoMo; reciprocal-rank fusion (k = 60)
lost LoCoMo's name and date questions (0.885 against lexical 0.904; this fusion 0.910)."""
MIN_SPAN = 0.1
"""The least spread of cosines a folder's scale is read on: a folder of one or two
memories has none (its best and median cosines can be 0.0001 apart), and a lone memory
scoring 1 whatever it is asked ranked an unrelated archived note second (real folders
spread 0.25–0.45 between the median and the best)."""
FIRST_ROWS = 256
"""Best-scoring rows looked at first: ten memories rarely need more (a memory holds ~5
texts); a scope that filters most of them out widens the look fourfold each time."""


def search_mode(index: SearchIndex, vectors: VectorStore | None, embedder: Embedder | None,
                query: str, mode: Mode, *, scope: str | None = None, limit: int = 10,
                cursor: str | None = None, today: date | None = None,
                include_archived: bool = False, deadline: float | None = None,
                budget: float = QUERY_BUDGET_SECONDS) -> SearchResponse:
    """Rank the memories that answer ``query`` in ``mode``; ``vectors`` and ``embedder``
    are needed for semantic and hybrid. Paged as ``retrieve.search``."""
    if mode == "lexical" or vectors is None or embedder is None:
        return search(index, query, scope, limit, cursor, today,
                      include_archived=include_archived, deadline=deadline)
    paged_as = f"{scope or ''}\0{mode}\0{int(include_archived)}"
    offset = cursor_offset(cursor, query, paged_as)
    day = today or date.today()
    ranked, coverage, notices, relevance = _ranked(index, vectors, embedder, query, mode,
                                                   scope, day, deadline, budget)
    if include_archived:
        archive = SearchIndex(index.store, archived=True)
        old_vectors = VectorStore(vectors_path(archive.path), embedder.name, embedder.dim)
        try:
            old, old_cov, old_notices, old_relevance = _ranked(
                archive, old_vectors, embedder, query, mode, scope, day, deadline, budget)
        finally:
            archive.close()
            old_vectors.close()
        ranked = sorted([*ranked, *old], key=lambda r: (-r.score, r.archived, r.file))
        coverage = _added(coverage, old_cov)
        notices = tuple(dict.fromkeys((*notices, *old_notices)))
        relevance = replace(relevance, files=relevance.files + old_relevance.files)
    page = ranked[offset:offset + max(limit, 1)]
    more = offset + len(page) < len(ranked)
    coverage = replace(coverage, next_cursor=page_cursor(offset + len(page), query, paged_as)
                       if more else None)
    return SearchResponse(query, tuple(page), coverage, notices, relevance)


@dataclass(frozen=True)
class SemanticPass:
    """The semantic ranking of one question, and the scale its cosines are read on."""

    results: list[SearchResult]
    top: float  # the best cosine of any text
    zero: float  # the median cosine over every text: "unrelated", in this folder
    query_vector: NDArray[np.float32]
    scores: NDArray[np.float32] | None = None  # every row's cosine, for ``cosines``

    def cosines(self, vectors: VectorStore, files: list[str]) -> dict[str, float]:
        """The best cosine of each of ``files`` (found semantically or not); a file
        whose rows cannot be told (compacted meanwhile) keeps what the ranking saw."""
        known = {r.file: r.score for r in self.results}
        if self.scores is not None:
            known.update(semantic_cosines(vectors, self.scores, files))
        return known

    def paragraph_cosines(self, vectors: VectorStore, results: list[SearchResult]
                          ) -> dict[str, dict[tuple[int, int], float]]:
        """Each result's paragraphs' cosines by line range (none when the rows were
        renumbered since they were scored)."""
        if self.scores is None or not results:
            return {}
        rows = vectors.rows_of([r.file for r in results]) or {}
        scored = len(self.scores)  # rows added by another process since are not scored
        return {f: {lines: float(self.scores[row]) for lines, row in by_lines.items()
                    if row < scored} for f, by_lines in rows.items()}


def semantic_cosines(vectors: VectorStore, scores: NDArray[np.float32], files: list[str]
                     ) -> dict[str, float]:
    """Each of ``files``' best cosine among ``scores`` (the last scoring's rows);
    nothing when the rows were renumbered since."""
    rows = vectors.rows_of(list(dict.fromkeys(files))) if files else None
    scored = len(scores)  # rows another process added since were not scored
    return {f: float(scores[kept].max()) for f, r in (rows or {}).items()
            if (kept := [row for row in r.values() if row < scored])}


def _ranked(index: SearchIndex, vectors: VectorStore, embedder: Embedder, query: str,
            mode: Mode, scope: str | None, today: date, deadline: float | None,
            budget: float) -> tuple[list[SearchResult], Coverage, tuple[str, ...], Relevance]:
    """One index's results in ``mode``, best first, with their coverage, notices and the
    gate's verdict (by words alone while meaning cannot be judged)."""
    lexical = search(index, query, scope, MAX_CANDIDATES, None, today, deadline=deadline,
                     replaced_last=False, choose_passages=False)
    semantic: SemanticPass | None = None
    behind: frozenset[str] = frozenset()
    ready = getattr(embedder, "ready", None)  # an embedder with a one-time setup says so
    if deadline is not None and ready is not None and not ready():
        vectors.notices.append(f"the embedder {embedder.name} is not set up yet; ranked "
                               "by words (sagemem index sets it up)")
    else:
        try:
            semantic, behind = _semantic(index, vectors, embedder, query, scope, today,
                                         deadline, budget)
        except VectorsUnavailable as exc:  # the answer costs its semantic half, never more
            vectors.notices.append(f"vectors unavailable: {exc.reason}; ranked by words")
        except EmbedderUnavailable as exc:
            vectors.notices.append(f"embedder unavailable: {exc}; ranked by words")
    relevance = by_words(lexical.results)  # until meaning can be judged too
    if semantic is None:
        ranked = chosen_passages(index, query, replaced_last(list(lexical.results)),
                                 deadline=deadline)
    else:
        files = [r.file for r in (*lexical.results, *semantic.results)]
        cosines = semantic.cosines(vectors, files)
        ranked = replaced_last(semantic.results if mode == "semantic" else
                               fuse(list(lexical.results), semantic, cosines))
        ranked = chosen_passages(index, query, ranked,
                                 semantic.paragraph_cosines(vectors, ranked[:TOP]),
                                 deadline=deadline)
        background = background_for(embedder, index.path.parent, vectors.notices)
        if background is not None and not behind:  # half the folder embedded: judge by
            # words alone, or a memory not embedded yet could never pass the gate
            relevance = judge(ranked, cosines, {r.file: r.score for r in lexical.results},
                              background.level(semantic.query_vector),
                              vocabulary.by_file(index, query, [r.file for r in ranked]))
    coverage = Coverage(lexical.coverage.files_scanned, len(ranked),
                        lexical.coverage.paragraphs_filtered, None, len(behind))
    told = getattr(embedder, "notices", None)  # use-m3's: its cache rebuilt, or in memory
    notices = (*lexical.notices, *index.notices, *vectors.notices, *(told or ()))
    index.notices.clear()
    vectors.notices.clear()
    if told:
        told.clear()
    if behind:
        notices += (f"{len(behind)} changed memories not embedded yet: ranked and judged "
                    "by words until they are; run sagemem index",)
    return ranked, coverage, notices, relevance


def _semantic(index: SearchIndex, vectors: VectorStore, embedder: Embedder, query: str,
              scope: str | None, today: date, deadline: float | None, budget: float
              ) -> tuple[SemanticPass | None, frozenset[str]]:
    """The semantic pass (None with no vectors or no question) and the memories left
    out of it; vectors found damaged are dropped and rebuilt once (a cache, like the
    lexical index)."""
    for attempt in (1, 2):
        try:
            until = time.monotonic() + budget
            report = _synced(vectors, index, embedder,
                             until if deadline is None else min(until, deadline))
            return semantic_pass(index, vectors, embedder, query, scope, today,
                                 report.behind, report.current), report.behind
        except sqlite3.DatabaseError as exc:
            if attempt == 2 or not vectors.recover(exc):
                raise
    raise AssertionError("unreachable")


def _synced(vectors: VectorStore, index: SearchIndex, embedder: Embedder,
            deadline: float) -> VectorReport:
    """``sync_vectors``; a store that turns out not writable is read as it is."""
    try:
        return sync_vectors(vectors, index, embedder, deadline=deadline)
    except (sqlite3.OperationalError, OSError) as exc:
        if vectors.unsaved is not None or (isinstance(exc, sqlite3.Error)
                                           and not cannot_write(exc)):
            raise
        vectors.stop_writing(str(exc))
        return sync_vectors(vectors, index, embedder, deadline=deadline)


def semantic_pass(index: SearchIndex, vectors: VectorStore, embedder: Embedder,
                  query: str, scope: str | None, today: date, behind: frozenset[str],
                  known_files: dict[str, tuple[int, str]] | None = None
                  ) -> SemanticPass | None:
    """Memories by the highest cosine of any of their texts, each quoting that text;
    ``known_files`` (name → file id, revision) as the sync read it, or read afresh.
    None when there is nothing to compare: no vectors, or a blank question."""
    if vectors.rows() == 0 or not query.strip():
        return None
    query_vector = embedder.encode([clip(query)])[0]
    results, top, scores = _best_files(index, vectors, query_vector,
                                       vectors.scores(query_vector), scope, today, behind,
                                       known_files)
    if not results:  # every memory in scope is waiting to be embedded: judge by words
        return None
    return SemanticPass(results, top, _median(scores), query_vector, scores)


def _median(scores: NDArray[np.float32]) -> float:
    """``np.median``'s value, computed as it does (a partition, then the middle one or
    the mean of the middle two), without importing ``numpy.ma``, which it does on first
    use: ~6 ms of every hook's start."""
    import numpy as np

    values = np.asarray(scores).reshape(-1)
    middle = len(values) // 2
    if not len(values):
        return float("nan")  # as np.median, without its warning; a pass has rows
    if len(values) % 2:
        return float(np.partition(values, middle)[middle])
    part = np.partition(values, [middle - 1, middle])
    return float(np.mean(part[middle - 1:middle + 1]))


def _best_files(index: SearchIndex, vectors: VectorStore, query_vector: NDArray[np.float32],
                scores: NDArray[np.float32], scope: str | None, today: date,
                behind: frozenset[str], known_files: dict[str, tuple[int, str]] | None
                ) -> tuple[list[SearchResult], float, NDArray[np.float32]]:
    """Up to MAX_CANDIDATES memories in ``scope`` by their best row, best first; the best
    cosine unrounded (the scale is read on it); and the scores the rows were read by
    (scored again if another process compacted them meanwhile)."""
    import numpy as np

    known = known_files if known_files is not None else indexed_revisions(index)
    current = {n: ids for n, ids in known.items() if n not in behind} if behind else known
    look = FIRST_ROWS
    rescored = False
    while True:
        best = _best_per_file(vectors, scores, look, current)
        if best is None:  # another process compacted the rows since they were scored
            if rescored:
                index.notices.append("the vectors were compacted while they were searched; "
                                     "ranked by words")
                return [], 0.0, np.asarray(scores)
            scores, rescored = vectors.scores(query_vector), True
            continue
        files = index.files([current[name][0] for name in best])
        kept = [(files[current[name][0]], hit) for name, hit in best.items()
                if current[name][0] in files and in_scope(files[current[name][0]], scope)]
        if len(kept) >= MAX_CANDIDATES or look >= len(scores):
            break
        look *= 4
    kept.sort(key=lambda pair: (-pair[1].score, pair[0].name))
    results = []
    for indexed, hit in kept[:MAX_CANDIDATES]:
        lines = (hit.start_line, hit.end_line) if hit.kind != "summary" else None
        try:
            results.append(result_at(index, indexed, hit.score, lines, today))
        except Moved:  # edited since the sync: the next query embeds it again
            index.notices.append(f"{indexed.name} changed while it was searched; left out "
                                 "of the semantic results")
    return results, kept[0][1].score if kept else 0.0, np.asarray(scores)


def _best_per_file(vectors: VectorStore, scores: object, look: int,
                   current: dict[str, tuple[int, str]]) -> dict[str, Hit] | None:
    """Among the ``look`` best rows, each current memory's best-scoring item; None when
    the rows were renumbered since they were scored."""
    import numpy as np

    values = np.asarray(scores)
    look = min(look, len(values))
    top = np.argpartition(-values, look - 1)[:look] if look < len(values) else \
        np.arange(len(values))
    order = top[np.argsort(-values[top], kind="stable")]
    hits = vectors.hits([int(r) for r in order])
    if hits is None:
        return None
    best: dict[str, Hit] = {}
    for row in order:
        for hit in hits.get(int(row), []):
            if hit.file not in current:
                continue
            if hit.file not in best:
                best[hit.file] = replace(hit, score=float(values[row]))
            elif best[hit.file].kind == "summary" and hit.kind == "paragraph":
                # the summary scores, the closest paragraph is quoted: the description is
                # shown beside it anyway (starter passage hit 0.32 → 0.60 semantically)
                best[hit.file] = replace(hit, score=best[hit.file].score, kind="paragraph+")
    return best


def fuse(lexical: list[SearchResult], semantic: SemanticPass,
         cosines: dict[str, float] | None = None) -> list[SearchResult]:
    """Score fusion (module docstring): each side on its own 0–1 scale, then the
    stronger plus FUSION_MIN_WEIGHT of the weaker; a memory found lexically keeps its
    lexical paragraph. ``cosines`` (file → best cosine) gives the semantic side of a
    memory found lexically but not among the semantic results (else it has none)."""
    best_lexical = max((r.score for r in lexical), default=0.0)
    span = max(semantic.top - semantic.zero, MIN_SPAN)
    near = dict(cosines or {})
    near.update({r.file: r.score for r in semantic.results})
    chosen = {r.file: r for r in semantic.results}
    chosen.update({r.file: r for r in lexical})
    lexical_side = {r.file: r.score / best_lexical if best_lexical > 0 else 0.0 for r in lexical}
    score = {}
    for file in chosen:
        a = lexical_side.get(file, 0.0)
        b = max(near.get(file, semantic.zero) - semantic.zero, 0.0) / span
        score[file] = max(a, b) + FUSION_MIN_WEIGHT * min(a, b)
    order = sorted(score, key=lambda f: (-score[f], f))
    return [replace(chosen[f], score=round(score[f], 4)) for f in order][:MAX_CANDIDATES]


def replaced_last(ranked: list[SearchResult]) -> list[SearchResult]:
    """Each memory that names its replacement right after it, scored no higher
    (``superseded``)."""
    order = after_replacements(ranked, lambda r: r.file, lambda r: r.superseded_by)
    score = capped_scores(order, lambda r: r.file, lambda r: r.superseded_by,
                          lambda r: r.score)
    return [replace(r, score=score[r.file]) if score[r.file] != r.score else r for r in order]


def in_scope(indexed: IndexedFile, scope: str | None) -> bool:
    """A memory of type ``scope``, or carrying ``scope`` as a tag (as lexical search)."""
    if not scope:
        return True
    wanted = scope.strip().casefold()
    return ((wanted in TYPES and indexed.info.get("type") == wanted)
            or wanted in (t.casefold() for t in indexed.info.get("tags", [])))


def _added(a: Coverage, b: Coverage) -> Coverage:
    return Coverage(a.files_scanned + b.files_scanned, a.candidates + b.candidates,
                    a.paragraphs_filtered + b.paragraphs_filtered, None,
                    a.files_without_vectors + b.files_without_vectors)
