"""Retrieval evaluation over a set in the format of ``shared/eval/FORMAT.md``.

A set is ``<set>/memory/`` plus ``<set>/queries.jsonl`` — or a ``queries.jsonl`` of the
user's own, written for the memory folder they use (a query naming a file that folder
does not hold is refused: a typo there would silently count as a miss). Every query is
searched; what
search returns is what would be injected (its ranked files, each with its paragraph).
The metrics are computed exactly as FORMAT.md (and its reference ``baseline.py``) define:

- recall@5: answerable queries with a relevant file in the top 5;
- mrr@10: mean reciprocal rank of the first relevant file within the top 10;
- passage hit: queries with an answer whose first relevant file is in the top 5 with a
  paragraph containing the answer;
- spurious (unrelated): unrelated queries for which anything at all would be injected;
- spurious (injected): injected items, over answerable queries, that are not relevant;
- inject recall: answerable queries whose relevant file is among the injected items.

What would be injected is what ``inject`` takes from the response: the results that pass
the relevance gate (``gate.injectable``), at most ``TOP_INJECT`` of them. Session budgets,
baselines and validity dates are left out: the set measures retrieval, not a session.

The gate's trade-off (``curve``): the three inject metrics again with the gate's threshold
moved around its default, from each response's evidence (``gate.at_threshold``) — no
search is run again, so the curve costs nothing over the evaluation itself.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvalSetError
from ..files.folder import MemoryFolder
from .gate import THRESHOLD, at_threshold, injectable
from .index import SearchIndex
from .retrieve import SearchResponse, search

if TYPE_CHECKING:  # semantic modes only: the lexical eval never imports numpy
    from ..embed.embedder import Embedder
    from .hybrid import Mode

TOP_INJECT = 5
WORST_MISSES = 10
CURVE_STEP = 0.025
"""Between two thresholds of the curve: starter's inject recall moves about 0.01–0.03 a
step near the default, a change a set of a hundred questions can show."""
CURVE_STEPS = 4  # on each side of the default: ±0.1, past where the figures level off


@dataclass(frozen=True)
class QueryOutcome:
    """One query of the set and what search returned for it."""

    query: dict[str, Any]
    ranking: tuple[str, ...]
    passages: dict[str, str]
    injected: tuple[str, ...] = ()
    response: SearchResponse | None = field(default=None, repr=False, compare=False)


def load_queries(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalSetError(path, f"cannot be read ({exc})") from exc
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalSetError(path, f"line {number} is not JSON ({exc.msg})") from exc
        problem = _query_problem(item)
        if problem:
            raise EvalSetError(path, f"line {number}: {problem}")
        queries.append(item)
    return queries


def _query_problem(item: object) -> str | None:
    """What makes a line no query of FORMAT.md, or None."""
    if not isinstance(item, dict):
        return "not a JSON object"
    if not isinstance(item.get("query"), str) or "id" not in item:
        return 'needs "id" and a "query" string'
    relevant = item.get("relevant")
    if not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
        return '"relevant" must be a list of file names'
    if item.get("answer") is not None and not isinstance(item["answer"], str):
        return '"answer" must be a string or null'
    return None


def run_set(set_dir: Path, state_dir: Path | None = None, modes: Sequence[Mode] = ("lexical",),
            embedder: Embedder | None = None) -> dict[Mode, list[QueryOutcome]]:
    """Search every query of a set; the index goes to ``state_dir`` or a temporary one."""
    return run_queries(set_dir / "queries.jsonl", set_dir / "memory", state_dir, modes,
                       embedder)


def run_queries(queries_file: Path, memory_dir: Path, state_dir: Path | None = None,
                modes: Sequence[Mode] = ("lexical",), embedder: Embedder | None = None
                ) -> dict[Mode, list[QueryOutcome]]:
    """Search every query of ``queries_file`` over the memories of ``memory_dir`` in each
    of ``modes`` (semantic and hybrid need ``embedder``; every memory is embedded first)."""
    queries = load_queries(queries_file)
    if not memory_dir.is_dir():
        raise EvalSetError(memory_dir, "is not a directory")
    _check_relevant(queries, queries_file, memory_dir)
    if embedder is None and any(m != "lexical" for m in modes):
        raise ValueError("semantic and hybrid modes need an embedder")
    with _state(state_dir) as state:
        index = SearchIndex(MemoryFolder(memory_dir, state))
        try:
            outcomes: dict[Mode, list[QueryOutcome]] = {}
            if "lexical" in modes:
                outcomes["lexical"] = [_outcome(q, search(index, q["query"], limit=10))
                                       for q in queries]
            semantic: list[Mode] = [m for m in modes if m != "lexical"]
            if semantic and embedder is not None:
                outcomes.update(_run_semantic(index, queries, semantic, embedder))
            return {m: outcomes[m] for m in modes}
        finally:
            index.close()


def _run_semantic(index: SearchIndex, queries: list[dict[str, Any]], modes: list[Mode],
                  embedder: Embedder) -> dict[Mode, list[QueryOutcome]]:
    from .background import background_for
    from .hybrid import search_mode
    from .vector_sync import sync_vectors
    from .vectors import VectorStore, vectors_path

    vectors = VectorStore(vectors_path(index.path), embedder.name, embedder.dim)
    try:
        index.sync()
        sync_vectors(vectors, index, embedder)
        background_for(embedder, index.path.parent, vectors.notices, embed=True)
        return {mode: [_outcome(q, search_mode(index, vectors, embedder, q["query"], mode,
                                               limit=10)) for q in queries]
                for mode in modes}
    finally:
        vectors.close()


def _check_relevant(queries: list[dict[str, Any]], queries_file: Path, memory_dir: Path
                    ) -> None:
    held = {p.name for p in memory_dir.iterdir()}
    for query in queries:
        missing = [r for r in query["relevant"] if r not in held]
        if missing:
            raise EvalSetError(queries_file, f"query {query['id']}: {missing[0]} is not a "
                                             f"file of {memory_dir}")


@contextmanager
def _state(given: Path | None) -> Iterator[Path]:
    """The state directory to index into: the one given, else a temporary one."""
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="sagemem-eval-") as tmp:
        yield Path(tmp)


def _outcome(query: dict[str, Any], response: SearchResponse) -> QueryOutcome:
    ranking = tuple(r.file for r in response.results)
    return QueryOutcome(query, ranking, {r.file: r.paragraph for r in response.results},
                        _injected(response), response)


def _injected(response: SearchResponse) -> tuple[str, ...]:
    return tuple(r.file for r in injectable(response))[:TOP_INJECT]


def curve(outcomes: list[QueryOutcome], thresholds: Sequence[float] | None = None
          ) -> list[dict[str, Any]]:
    """Inject recall, spurious (unrelated) and spurious (injected) had the gate stood at
    each of ``thresholds`` (default: ``CURVE_STEPS`` steps either side of THRESHOLD);
    ``default`` marks the gate's own. Empty when no outcome carries a verdict to move
    (lexical mode)."""
    if not any(o.response is not None and o.response.relevance is not None for o in outcomes):
        return []
    steps = range(-CURVE_STEPS, CURVE_STEPS + 1)
    chosen = thresholds or [round(THRESHOLD + k * CURVE_STEP, 4) for k in steps]
    return [_point(outcomes, threshold) for threshold in chosen]


def _point(outcomes: list[QueryOutcome], threshold: float) -> dict[str, Any]:
    """One row of the curve: the outcomes re-judged at ``threshold``."""
    found = metrics([_judged_at(o, threshold) for o in outcomes])
    return {"threshold": threshold, "default": abs(threshold - THRESHOLD) < 1e-9,
            **{k: found[k] for k in ("inject_recall", "spurious_unrelated",
                                     "spurious_injected")}}


def metrics(outcomes: list[QueryOutcome]) -> dict[str, Any]:
    """The FORMAT.md metrics over some outcomes."""
    answerable = [o for o in outcomes if o.query["relevant"]]
    unrelated = [o for o in outcomes if not o.query["relevant"]]
    with_answer = [o for o in answerable if o.query.get("answer")]
    recall = sum(1 for o in answerable if set(o.ranking[:5]) & set(o.query["relevant"]))
    mrr = sum(_reciprocal_rank(o) for o in answerable)
    injected = [(o, f) for o in answerable for f in o.injected]
    hits = sum(1 for o in with_answer if _passage_hit(o))
    found = sum(1 for o in answerable if set(o.injected) & set(o.query["relevant"]))
    return {
        "queries": len(outcomes), "answerable": len(answerable), "unrelated": len(unrelated),
        "recall@5": _ratio(recall, len(answerable)),
        "mrr@10": _ratio(mrr, len(answerable)),
        "passage_hit": _ratio(hits, len(with_answer)),
        "inject_recall": _ratio(found, len(answerable)),
        "spurious_unrelated": _ratio(sum(1 for o in unrelated if o.injected), len(unrelated)),
        "spurious_injected": _ratio(sum(1 for o, f in injected if f not in o.query["relevant"]),
                                    len(injected)),
    }


def _reciprocal_rank(outcome: QueryOutcome) -> float:
    for rank, file in enumerate(outcome.ranking[:10], start=1):
        if file in outcome.query["relevant"]:
            return 1.0 / rank
    return 0.0


def _passage_hit(outcome: QueryOutcome) -> bool:
    first = outcome.query["relevant"][0]
    return first in outcome.ranking[:5] and outcome.query["answer"] in outcome.passages[first]


def _ratio(part: float, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def by_kind(outcomes: list[QueryOutcome]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[QueryOutcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[str(outcome.query.get("kind") or "unknown")].append(outcome)
    return {kind: metrics(group) for kind, group in sorted(groups.items())}


def worst_misses(outcomes: list[QueryOutcome], count: int = WORST_MISSES) -> list[dict[str, Any]]:
    """Queries that went most wrong: relevant files missed, or unrelated ones answered."""
    misses = list(_misses(outcomes))
    misses.sort(key=lambda m: (-m["severity"], m["id"]))
    return misses[:count]


def _misses(outcomes: list[QueryOutcome]) -> Iterator[dict[str, Any]]:
    for o in outcomes:
        relevant = o.query["relevant"]
        if relevant and not set(o.ranking[:5]) & set(relevant):
            severity = 2
        elif not relevant and o.injected:
            severity = 1
        else:
            continue
        yield {"id": o.query["id"], "query": o.query["query"], "kind": o.query.get("kind"),
               "relevant": relevant, "returned": list(o.ranking[:5] if relevant else o.injected),
               "severity": severity}


def _judged_at(outcome: QueryOutcome, threshold: float) -> QueryOutcome:
    """The outcome had the gate stood at ``threshold``."""
    response = outcome.response
    if response is None or response.relevance is None:
        return outcome  # lexical: no verdict to move
    moved = replace(response, relevance=at_threshold(response.relevance, threshold))
    return replace(outcome, injected=_injected(moved))


def evaluate(target: Path, state_dir: Path | None = None, *,
             memory_dir: Path | None = None, modes: Sequence[Mode] = ("lexical",),
             embedder: Embedder | None = None, with_curve: bool = False) -> dict[str, Any]:
    """Run a set folder — or a queries file over ``memory_dir`` — in each of ``modes``
    and report, per mode, its metrics overall, by kind, and its worst misses (and, with
    ``with_curve``, the gate's ``curve`` in the modes that have a gate). The first mode's
    report is also the top level (what one-mode readers of the JSON expect)."""
    if target.is_dir():
        outcomes, name = run_set(target, state_dir, modes, embedder), target.name
    elif memory_dir is None:
        raise EvalSetError(target, "is a queries file: say which memory folder it is for")
    else:
        outcomes, name = run_queries(target, memory_dir, state_dir, modes, embedder), \
            target.name
    reports = {mode: _report(found, with_curve) for mode, found in outcomes.items()}
    return {"set": name, "mode": modes[0], **reports[modes[0]], "modes": reports}


def _report(outcomes: list[QueryOutcome], with_curve: bool = False) -> dict[str, Any]:
    drawn = curve(outcomes) if with_curve else []
    return {**metrics(outcomes), "by_kind": by_kind(outcomes),
            "worst_misses": [{k: v for k, v in m.items() if k != "severity"}
                             for m in worst_misses(outcomes)],
            **({"curve": drawn} if with_curve else {})}
