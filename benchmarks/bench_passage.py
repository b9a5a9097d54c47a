#!/usr/bin/env python3
"""What choosing the quoted paragraphs and judging relevance cost a hybrid question.

    python benchmarks/bench_passage.py [--sizes 1000 10000] [--repeat 7]

For each size, generates a deterministic memory directory with
``../shared/bench/gen_corpus.py``, indexes and embeds it, then asks its questions through
``MemoryStore.search`` in hybrid mode, in one long-lived process (as the server and the
MCP server answer them), and times inside that process, per question:

- ``passage choice``  ``passage.chosen_passages``: reading the first five results'
                      files again and scoring each paragraph (words, meaning, entities);
- ``relevance gate``  the question's background level, the folder vocabulary of its
                      candidates (``vocabulary.by_file``) and the verdict (``gate.judge``);
- ``whole search``    the hybrid search around them, for scale.

Medians over every question of ``repeat`` rounds, with the share of the whole search.
The vectors come from the tests' hashing embedder (tests/fake_embedder.py): what is
timed here reads vectors and never embeds, and embedding 10,000 memories with use-m3
takes minutes; the question's own embedding is in ``bench_embedder.py``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from common import GEN_CORPUS, sizes_and_repeat
from fake_embedder import FakeEmbedder, factory_of

from sagemem import MemoryStore
from sagemem.embed.embedder import register_embedder
from sagemem.search import background, hybrid, vocabulary
from sagemem.search.vector_sync import sync_vectors


class Timed:
    """Wraps a function and keeps the wall time of each call."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.times: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - start)


def measure(size: int, repeat: int, root: Path) -> dict[str, float]:
    directory = root / f"m{size}"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(directory), str(size)], check=True,
                   capture_output=True)
    queries = [q for q in (root / f"m{size}.queries.txt").read_text().splitlines() if q][:40]
    with MemoryStore(directory, root / f"s{size}", semantic=True, embedder="fake") as store:
        store.search_index().sync()
        sync_vectors(store.vector_store(), store.search_index(), store.embedder())
        background.background_for(store.embedder(), store.search_index().path.parent, [],
                                  embed=True)
        store.search(queries[0], mode="hybrid", deadline=None)  # warm: matrix, caches
        choice, gate, level = (Timed(hybrid.chosen_passages), Timed(hybrid.judge),
                               Timed(background.Background.level))
        words = Timed(vocabulary.by_file)
        hybrid.chosen_passages, hybrid.judge = choice, gate  # type: ignore[assignment]
        vocabulary.by_file = words  # type: ignore[assignment]
        background.Background.level = lambda self, v: level(self, v)  # type: ignore[method-assign]
        whole: list[float] = []
        try:
            for _ in range(repeat):
                for query in queries:
                    start = time.perf_counter()
                    store.search(query, mode="hybrid", deadline=None)
                    whole.append(time.perf_counter() - start)
        finally:
            hybrid.chosen_passages, hybrid.judge = choice.function, gate.function
            vocabulary.by_file = words.function  # type: ignore[assignment]
            background.Background.level = level.function  # type: ignore[method-assign]
    gate_times = [a + b + c for a, b, c in zip(gate.times, level.times, words.times,
                                               strict=True)]
    return {"passage choice": statistics.median(choice.times) * 1000,
            "relevance gate": statistics.median(gate_times) * 1000,
            "whole search": statistics.median(whole) * 1000}


def main() -> int:
    args = sizes_and_repeat(__doc__)
    register_embedder("fake", factory_of(FakeEmbedder("fake:bench")))
    rows: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-passage-") as tmp:
        for size in args.sizes:
            rows[size] = measure(size, args.repeat, Path(tmp))
    print(f"{'per hybrid question (median)':30}" + "".join(f"{s:>18,}" for s in rows))
    for key in ("passage choice", "relevance gate", "whole search"):
        cells = "".join(f"{rows[s][key]:>10.2f} ms {_share(rows[s], key):>4}" for s in rows)
        print(f"{key:34}{cells}")
    return 0


def _share(row: dict[str, float], key: str) -> str:
    if key == "whole search":
        return ""
    return f"{100 * row[key] / row['whole search']:.0f}%"


if __name__ == "__main__":
    sys.exit(main())
