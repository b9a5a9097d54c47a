"""Evaluation: metrics computed exactly as FORMAT.md defines them, and the starter numbers."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from sagemem.search.evaluate import QueryOutcome, evaluate, metrics, run_set

SHARED_EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
needs_shared = pytest.mark.skipif(
    not (SHARED_EVAL / "starter").is_dir(),
    reason="../shared/eval is not beside this checkout (the evaluation sets are not vendored)")


def outcome(relevant: list[str], ranking: list[str], answer: str | None = None,
            passages: dict[str, str] | None = None) -> QueryOutcome:
    query = {"id": "q", "query": "x", "relevant": relevant, "answer": answer}
    return QueryOutcome(query, tuple(ranking), passages or {})


def test_metrics_follow_the_format_definitions() -> None:
    outcomes = [
        outcome(["a.md"], ["b.md", "a.md"], "fact", {"a.md": "the fact", "b.md": "no"}),
        outcome(["c.md"], ["d.md", "e.md", "f.md", "g.md", "h.md", "c.md"]),
        outcome([], ["a.md"]),
        outcome([], []),
    ]
    result = metrics(outcomes)
    assert result["recall@5"] == 0.5
    assert result["mrr@10"] == round((1 / 2 + 1 / 6) / 2, 4)
    assert result["passage_hit"] == 1.0
    assert result["spurious_unrelated"] == 0.5
    assert result["spurious_injected"] == round(6 / 7, 4)


def _baseline() -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline", SHARED_EVAL / "baseline.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_shared
def test_metrics_agree_with_the_reference_baseline_script() -> None:
    outcomes = run_set(SHARED_EVAL / "starter")
    paras = [{"text": text} for o in outcomes for text in o.passages.values()]
    index = iter(range(len(paras)))
    results = [{"q": o.query, "ranking": list(o.ranking[:10]), "inject": list(o.ranking[:5]),
                "passage": {f: next(index) for f in o.passages}} for o in outcomes]
    reference = _baseline().metrics(results, paras)
    ours = metrics(outcomes)
    for key in ("recall@5", "mrr@10", "passage_hit", "spurious_unrelated",
                "spurious_injected"):
        assert ours[key] == reference[key], key


@needs_shared
def test_starter_set_does_not_regress() -> None:
    """Floors just under the figures measured when retrieval last changed (see README)."""
    report = evaluate(SHARED_EVAL / "starter")
    assert report["recall@5"] >= 0.80
    assert report["passage_hit"] >= 0.59
    assert report["spurious_unrelated"] <= 0.11
    assert report["mrr@10"] >= 0.78
