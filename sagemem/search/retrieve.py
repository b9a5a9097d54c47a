"""Two-stage retrieval: find the few memories that answer a question, and in each the one
paragraph that does.

Stage 1 scores each memory's summary (description, name, aliases, file name, tags) with
BM25 and keeps at most ten candidates that pass a relevance threshold. Stage 2 runs BM25
over the body paragraphs of those candidates and ranks each file by its best paragraph
(the paragraphs the first results quote are then chosen by ``passage.py``). When
no summary passes, the paragraphs of every memory are searched instead (only for
questions of at least four characters). Scoring is lexical, not semantic: ``aliases``
are how a memory learns the other wordings — and the other language — people use.

The threshold is normalised to the question's own information, so that sharing one
common word with a question is not enough: a match must carry a good part of it
(``MIN_COVERAGE``). A term's information is its IDF over whole files; a query term the
corpus has never seen counts as fully rare (a CJK bigram less, ``UNSEEN_CJK_WEIGHT``),
so a question made mostly of words no memory holds matches nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import date

from ..errors import IndexUnavailable
from ..files.fields import TYPES
from .index import SearchIndex, SyncReport, TermStats
from .passage import TOP, chosen_passages
from .results import Coverage as Coverage
from .results import Moved, cursor_offset, page_cursor, results_of
from .results import SearchResponse as SearchResponse
from .results import SearchResult as SearchResult
from .scoring import K1, Stats, body_pool, body_scores, paragraph_scores, summary_scores
from .superseded import after_replacements, capped_scores
from .text import is_cjk, tokens
from .words import FUNCTION_WEIGHT, MAX_QUERY_TERMS, idf, is_function_word

MAX_CANDIDATES = 10
MOVED_RETRIES = 2
"""Re-syncs after a result's file changed under us; then such a file is left out, so an
editor saving again and again cannot make a search fail."""
MIN_COVERAGE = 0.27
"""The lexical gate (the only one with semantic search off): a match must cover this share
of the question's information. Set on starter; at 0 its lexical spurious (unrelated)
goes from 0.11 to 0.42. (A second rule on rare-term evidence, and a "focused" pair for
one-name questions, changed recall@5 and spurious by at most 0.01 on starter and LoCoMo,
lexical and hybrid, and were retired.)"""
UNSEEN_CJK_WEIGHT = 0.4
"""Unseen CJK bigrams are mostly artefacts of unsegmented text, not missing topics: at 1.0,
starter's lexical recall@5 falls from 0.82 to 0.73 (LoCoMo, English, is unaffected)."""
NEIGHBOUR_WEIGHT = 0.9
"""Share of an asking paragraph's score handed to the next one (``_with_neighbours``).
Set on LoCoMo: at 0, passage hit falls from 0.49 to 0.42 (starter unaffected); handing
a share on from every paragraph, not only asking ones, lowered it (0.3: 0.45)."""
SUMMARY_OVER_PARAGRAPH = 2.0
"""``_passage``: how much better the summary must match than any paragraph before the
first paragraph is shown. Set on starter (never: passage hit 0.62 → 0.56); at 1.0
LoCoMo, whose summaries retell the dialogue, falls from 0.48 to 0.42."""
MIN_FALLBACK_CHARS = 4
MIN_CORPUS_FILES = 20
"""A small folder's evidence is judged as if it had this many files, the others without
the term: in a folder of three memories, a word they all share still names the topic."""
TYPO_MIN_LEN = 5
TYPO_MIN_SCORE = 80.0
RELATIVE_FLOOR = 0.5
"""``_cut``: a result scoring under half the best one is left out, so a memory sharing
one word with the question does not ride along (tests/test_degraded_reading.py pins it).
No measurement set it: at 0, starter and LoCoMo move by at most 0.003."""
SELECTIVE_INFO = 0.3
"""A cost bound: only terms carrying this share of a rare term's information pull extra
files into the body pool. At 0 nothing measured moves, but LoCoMo takes 40 % longer."""
NEGLIGIBLE_INFO = 0.1
"""A cost bound: a term under a tenth of a rare term's information (a word in most
files) is not looked up. Looking such words up too lifts LoCoMo's lexical passage hit by
0.014, but costs 9 ms a question there (273 files) and grows with the folder: their
posting lists are the longest; at 10,000 memories the lexical search is already the
slowest part of a question."""
MAX_BODY_POOL = 200
@dataclass
class _Query:
    """A tokenised question: each term's weight, its information, and the total."""

    terms: dict[str, float]
    info: dict[str, float]
    total_info: float
    idf_max: float
    stats: dict[str, TermStats] = field(default_factory=dict)




def search(index: SearchIndex, query: str, scope: str | None = None, limit: int = 10,
           cursor: str | None = None, today: date | None = None, *,
           include_archived: bool = False, deadline: float | None = None,
           replaced_last: bool = True, choose_passages: bool = True) -> SearchResponse:
    """Rank the memories that answer ``query``; ``scope`` is a type or a tag. Archived
    memories are searched only with ``include_archived`` (marked ``archived``); the index
    is brought up to date until ``deadline`` (``time.monotonic()``), if any. Hybrid search
    asks with ``replaced_last`` off: it fuses raw scores and demotes after fusing, and
    with ``choose_passages`` off: it chooses the quoted paragraphs after fusing, with
    their meaning (``passage.py``)."""
    if include_archived:
        return _with_archive(index, query, scope, limit, cursor, today, deadline)
    offset = cursor_offset(cursor, query, scope)
    for attempt in range(MOVED_RETRIES + 1):
        try:
            report, ranked, candidates, filtered = _search_index(index, query, scope, deadline,
                                                                 replaced_last)
            page = ranked[offset:offset + max(limit, 1)]
            results = results_of(index, page, today or date.today(),
                                 skip_moved=attempt == MOVED_RETRIES)
            if choose_passages:  # the first TOP of the ranking, whichever page they are on
                results = chosen_passages(index, query, results, first=TOP - offset,
                                          deadline=deadline)
            break
        except sqlite3.DatabaseError as exc:  # a cache damaged on disk: rebuild it
            if not index.recover(exc) or attempt == MOVED_RETRIES:
                raise IndexUnavailable(index.path, str(exc)) from exc
        except Moved as moved:  # edited since the sync, even keeping size and mtime
            index.forget_stat(moved.name)
    more = offset + len(page) < len(ranked)
    next_cursor = page_cursor(offset + len(page), query, scope) if more else None
    coverage = Coverage(report.scanned, candidates, filtered, next_cursor)
    notices = tuple(index.notices)
    index.notices.clear()
    return SearchResponse(query, tuple(results), coverage, notices)


def _search_index(index: SearchIndex, query: str, scope: str | None, deadline: float | None,
                  replaced_last: bool) -> tuple[SyncReport, list[tuple[int, float, int | None]],
                                                int, int]:
    report = index.sync(deadline=deadline)
    return (report, *_rank(index, index.stats(), query, scope, replaced_last))


def _rank(index: SearchIndex, stats: Stats, query: str, scope: str | None,
          replaced_last: bool = True) -> tuple[list[tuple[int, float, int | None]], int, int]:
    """[(file id, score, paragraph id)] best first, the candidate count, paragraphs dropped;
    a replaced memory after its replacement unless ``replaced_last`` is off (``superseded``)."""
    if stats.files == 0:
        return [], 0, 0
    q = _prepare(index, stats, query)
    if not q.terms:
        return [], 0, 0
    body = len("".join(query.split())) >= MIN_FALLBACK_CHARS
    lowest = MIN_COVERAGE * q.total_info
    rows = summary_scores(index.conn, _weights(q, "sdf", stats.files), stats.avg_slen,
                          min_mass=lowest)
    if scope:
        allowed = set(_in_scope(index, [row[0] for row in rows], scope))
        rows = [row for row in rows if row[0] in allowed]
    summary = {f: (score, set(terms.split(US))) for f, score, _, terms in rows}
    pool = _first_candidates(index, rows)
    if body:
        selective = {t: v for t, v in _weights(q, "pdf", stats.paras).items()
                     if q.info[t] >= SELECTIVE_INFO * q.idf_max}
        extra = [f for f in body_pool(index.conn, selective, MAX_BODY_POOL) if f not in pool]
        summary.update({f: (score, set(terms.split(US))) for f, score, _, terms in
                        summary_scores(index.conn, _weights(q, "sdf", stats.files), stats.avg_slen,
                                       file_ids=extra)} if extra else {})
        pool.update(extra)
    paras = _body_scores(index, stats, q, sorted(pool))
    scale = q.idf_max * (K1 + 1)
    combined: dict[int, float] = {}
    for file_id in pool:
        score, in_summary = summary.get(file_id, (0.0, set()))
        in_paragraphs = paras.matched.get(file_id, []) if body else []
        if _passes(q, in_summary) or any(_passes(q, in_summary | t) for t in in_paragraphs):
            # summary, best paragraph and whole body weigh the same: weighing the paragraph
            # 0.6 (or 0) moved recall@5 by at most 0.01 on starter and LoCoMo.
            combined[file_id] = (score + paras.best_score.get(file_id, 0.0)
                                 + paras.whole.get(file_id, 0.0)) / scale
    passing = _in_scope(index, list(combined), scope)
    indexed_files = index.files(passing)
    names = {f: indexed.name for f, indexed in indexed_files.items()}
    ranked = _cut({f: combined[f] for f in passing}, names)[:MAX_CANDIDATES]
    if replaced_last:
        def replaced_by(f: int) -> str | None:
            return indexed_files[f].info.get("superseded_by") if f in indexed_files else None

        ranked = after_replacements(ranked, lambda f: names.get(f, ""), replaced_by)
        capped = capped_scores(ranked, lambda f: names.get(f, ""), replaced_by,
                               lambda f: combined[f])
        combined.update({f: capped[names.get(f, "")] for f in ranked})
    returned = [(f, combined[f], _passage(q, summary.get(f, (0.0, set()))[1], paras, f))
                for f in ranked]
    dropped = paras.scored - sum(1 for _, _, p in returned if p is not None)
    return returned, len(passing), max(dropped, 0)


US = "\x1f"


def _first_candidates(index: SearchIndex, rows: list[tuple[int, float, float, str]]
                      ) -> set[int]:
    """Stage 1 keeps at most ten, a tie at the tenth place broken by file name as the
    final ranking is (docs/retrieval.md: ties break by file name). By index id, a tie kept whichever
    files the sync met first — the newest by mtime — so a fresh clone could answer
    differently."""
    rows.sort(key=lambda row: (-row[1], row[0]))
    if len(rows) <= MAX_CANDIDATES:
        return {row[0] for row in rows}
    edge = rows[MAX_CANDIDATES - 1][1]
    sure = {f for f, score, _, _ in rows if score > edge}
    tied = [f for f, score, _, _ in rows if score == edge]
    names = {f: indexed.name for f, indexed in index.files(tied).items()}
    tied.sort(key=lambda f: (names.get(f, ""), f))
    return sure | set(tied[:MAX_CANDIDATES - len(sure)])


def _weights(q: _Query, df_kind: str, n: int) -> dict[str, tuple[float, float, float]]:
    """The query as the index scores it: term → (weight, idf over ``n`` units, information)."""
    return {t: (w, idf(getattr(q.stats[t], df_kind), n), q.info[t]) for t, w in q.terms.items()}


def _prepare(index: SearchIndex, stats: Stats, query: str) -> _Query:
    """Weigh each query term: 1, less for a function word, the similarity for a typo fix."""
    raw = list(dict.fromkeys(tokens(query)))[:MAX_QUERY_TERMS]
    known = index.term_stats(raw)
    files = max(stats.files, MIN_CORPUS_FILES)
    idf_max = idf(0, files)
    terms: dict[str, float] = {}
    total = 0.0
    for term in raw:
        prior = FUNCTION_WEIGHT if is_function_word(term) else 1.0
        match, weight = (term, prior) if term in known else _typo_fix(index, term) or (None, 0.0)
        if match is None:
            unseen = UNSEEN_CJK_WEIGHT if is_cjk(term) else 1.0
            total += idf_max * unseen * prior
            continue
        terms[match] = max(terms.get(match, 0.0), weight)
    known.update(index.term_stats([t for t in terms if t not in known]))
    info = {t: idf(known[t].fdf, files) for t in terms}
    total += sum(terms[t] * info[t] for t in terms)
    # A word in most files tells little and its posting list is the longest: it counts in
    # the question's total but is not looked up (NEGLIGIBLE_INFO, a cost bound).
    terms = {t: w for t, w in terms.items() if info[t] >= NEGLIGIBLE_INFO * idf_max}
    return _Query(terms, info, total, idf_max, known)




def _typo_fix(index: SearchIndex, term: str) -> tuple[str, float] | None:
    """A close indexed spelling of a rare-looking unseen word (``kubernets``)."""
    if len(term) < TYPO_MIN_LEN or not term.isascii() or not term.isalpha():
        return None
    slack = 1 if len(term) <= 8 else 2  # a typo keeps the word's length; "config" is no typo
    vocabulary = index.vocabulary(term[0], len(term) - slack, len(term) + slack)
    from rapidfuzz import fuzz, process  # only a question with an unknown word pays for it

    best = process.extractOne(term, vocabulary, scorer=fuzz.ratio, score_cutoff=TYPO_MIN_SCORE)
    return (best[0], (best[1] / 100) ** 2) if best else None


def _passes(q: _Query, matched: set[str]) -> bool:
    """The match covers a fair share of the question's information (``MIN_COVERAGE``)."""
    mass = sum(q.terms[t] * q.info[t] for t in matched)
    return q.total_info > 0 and mass >= MIN_COVERAGE * q.total_info


@dataclass
class _BodyScores:
    """Stage 2 for a pool of files: each file's best paragraph, its score and terms, and
    the BM25 score of the whole body."""

    best: dict[int, int] = field(default_factory=dict)
    best_score: dict[int, float] = field(default_factory=dict)
    matched: dict[int, list[set[str]]] = field(default_factory=dict)
    whole: dict[int, float] = field(default_factory=dict)
    best_mass: dict[int, float] = field(default_factory=dict)
    scored: int = 0


def _body_scores(index: SearchIndex, stats: Stats, q: _Query, file_ids: list[int]
                 ) -> _BodyScores:
    out = _BodyScores()
    if not file_ids:
        return out
    para: dict[int, float] = {}
    owner: dict[int, int] = {}
    rows = paragraph_scores(index.conn, _weights(q, "pdf", stats.paras), stats.avg_plen, file_ids)
    for para_id, file_id, score, mass, terms in rows:
        para[para_id] = score
        owner[para_id] = file_id
        out.best_mass[file_id] = max(out.best_mass.get(file_id, 0.0), mass)
        out.matched.setdefault(file_id, []).append(set(terms.split(US)))
    out.whole = dict(body_scores(index.conn, _weights(q, "fdf", stats.files), stats.avg_blen,
                                 file_ids))
    for para_id, score in para.items():  # ranking files uses the paragraphs' own scores
        file_id = owner[para_id]
        out.best_score[file_id] = max(out.best_score.get(file_id, 0.0), score)
    smoothed = _with_neighbours(index, para, owner)  # choosing the paragraph looks around
    for para_id in sorted(smoothed, key=lambda p: (-smoothed[p], p)):
        out.best.setdefault(owner[para_id], para_id)
    out.scored = len(para)
    return out


def _passage(q: _Query, in_summary: set[str], paras: _BodyScores, file_id: int) -> int | None:
    """The paragraph to show: the best-matching one — unless the question matched the
    summary far better than any paragraph, which means it asked what the memory is
    about; then the first paragraph, where a note states its main fact, answers it."""
    summary_mass = sum(q.terms[t] * q.info[t] for t in in_summary)
    if summary_mass > SUMMARY_OVER_PARAGRAPH * paras.best_mass.get(file_id, 0.0):
        return None  # None: the file's first paragraph
    return paras.best.get(file_id)


def _with_neighbours(index: SearchIndex, para: dict[int, float], owner: dict[int, int]
                     ) -> dict[int, float]:
    """A paragraph that asks something and matches the question hands part of its score
    to the paragraph after it: in dialogue and Q&A notes, that is where the answer is."""
    if not NEIGHBOUR_WEIGHT or not para:
        return dict(para)
    asking = index.questions_among(list(para))
    owner.update(index.paragraph_owners([p + 1 for p in asking if p + 1 not in owner]))
    smoothed = dict(para)
    for para_id in asking:
        nxt = para_id + 1
        if owner.get(nxt) == owner[para_id]:
            smoothed[nxt] = smoothed.get(nxt, 0.0) + NEIGHBOUR_WEIGHT * para[para_id]
    return smoothed


def _cut(scores: dict[int, float], names: dict[int, str]) -> list[int]:
    """Best first (ties by file name, so deterministic), dropping far weaker tails."""
    ranked = sorted(scores, key=lambda f: (-scores[f], names.get(f, "")))
    if not ranked:
        return []
    floor = scores[ranked[0]] * RELATIVE_FLOOR
    return [f for f in ranked if scores[f] >= floor]


def _in_scope(index: SearchIndex, file_ids: list[int], scope: str | None) -> list[int]:
    """Files whose type is ``scope``, or that carry ``scope`` as a tag."""
    if not scope or not file_ids:
        return file_ids
    wanted = scope.strip().casefold()
    files = index.files(file_ids)
    keep = {f for f, info in files.items()
            if (wanted in TYPES and info.info.get("type") == wanted)
            or wanted in (t.casefold() for t in info.info.get("tags", []))}
    return [f for f in file_ids if f in keep]


def _with_archive(index: SearchIndex, query: str, scope: str | None, limit: int,
                  cursor: str | None, today: date | None, deadline: float | None
                  ) -> SearchResponse:
    """Search the memories and, in a second index, the archive, and interleave them by
    score. Each side keeps its own relevance cut and up to ten results: the two corpora
    weigh words differently (a small archive's IDF is low), so a cut across both would
    drop archived memories that answer the question."""
    paged_as = f"{scope or ''}\0archived"  # a cursor of a plain search never pages this one
    offset = cursor_offset(cursor, query, paged_as)
    archive = SearchIndex(index.store, archived=True)
    try:
        live = search(index, query, scope, MAX_CANDIDATES, None, today, deadline=deadline)
        old = search(archive, query, scope, MAX_CANDIDATES, None, today, deadline=deadline)
    finally:
        archive.close()
    merged = sorted([*live.results, *old.results], key=lambda r: (-r.score, r.archived, r.file))
    page = merged[offset:offset + max(limit, 1)]
    more = offset + len(page) < len(merged)
    coverage = Coverage(
        live.coverage.files_scanned + old.coverage.files_scanned,
        live.coverage.candidates + old.coverage.candidates,
        live.coverage.paragraphs_filtered + old.coverage.paragraphs_filtered,
        page_cursor(offset + len(page), query, paged_as) if more else None)
    return SearchResponse(query, tuple(page), coverage, live.notices + old.notices)


