"""What the benchmark scripts share: where the corpus generator lives, and timing."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

GEN_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "gen_corpus.py"


def corpus_generator_or_exit() -> Path:
    """The generator in ../shared; without it a benchmark says so in one line."""
    if not GEN_CORPUS.exists():
        print(f"error: {GEN_CORPUS} not found; benchmarks need ../shared beside the checkout",
              file=sys.stderr)
        sys.exit(1)
    return GEN_CORPUS


def median_of(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` runs of ``work``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
