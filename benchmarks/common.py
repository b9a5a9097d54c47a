"""What the benchmark scripts share: where the corpus generator lives, how sagemem is
run, their options, and timing."""

from __future__ import annotations

import argparse
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


def sagemem_command() -> list[str]:
    """The console script beside this interpreter (what the hook runs), else ``-m``."""
    script = Path(sys.executable).with_name("sagemem")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sagemem"]


def sizes_and_repeat(doc: str | None) -> argparse.Namespace:
    """``--sizes`` (memories per corpus) and ``--repeat``, parsed, once the corpus
    generator is known to be there: the options of every benchmark run at two sizes."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    corpus_generator_or_exit()
    return args


def median_of(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` runs of ``work``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
