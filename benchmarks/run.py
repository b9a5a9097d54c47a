#!/usr/bin/env python3
"""sagemem benchmarks: one command, one table of medians and ratios.

    python benchmarks/run.py [--files N] [--repeat R] [--only NAME ...]

Generates a deterministic synthetic memory directory with ``../shared/bench/gen_corpus.py``
(beside the checkout) and measures, in the same run:

- ``read bytes``      the floor: ``Path.read_bytes`` of every file, nothing else;
- ``store.list()``    sagemem's listing: the safe read path plus lenient parsing;
- ``ruamel parse``    the same listing if frontmatter were read with ruamel.yaml
                      (the alternative the read path does not use).

Then it runs every script of BENCHMARKS (with the same ``--repeat``), each printing its
own table: ``bench_startup.py`` (commands as whole processes next to their floors),
``bench_search.py``, ``bench_index_build.py`` (the lexical build), ``bench_embedder.py``,
``bench_vectors.py`` (retrieval by mode, vector cost), ``bench_inject.py``,
``bench_writes.py``, ``bench_remember.py`` (``new`` with and without its near-duplicate
check), ``bench_snapshot.py``, ``bench_archive.py``, ``bench_audit.py``,
``bench_dream.py`` (``dream run --planner tidy`` as whole processes),
``bench_mcp.py`` (a tool call to a running ``sagemem mcp``; skipped without the extra),
``bench_ui.py`` (the panel's Files screen over HTTP, cold and warm, next to the listing),
``bench_moving.py`` (export, import, the merge driver and ``sync`` as whole processes),
``bench_serve.py`` (the prompt hook through ``sagemem serve`` and in its own process),
``bench_passage.py`` (what the passage choice and the gate cost a hybrid question).
Each also runs on its own; ``--only startup search`` runs just those (``list`` is the
listing table above).

Ratios are against floors measured in the same run; absolute times depend on the
machine and are shown only for scale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, median_of
from ruamel.yaml import YAML

from sagemem import MemoryStore
from sagemem.files.memory import split

# Each runs with its own defaults (their sizes differ: search 1,000 and 10,000, inject
# 1,000 as processes, snapshot 10,000); run.py only passes --repeat along.
BENCHMARKS = ("bench_startup.py", "bench_search.py", "bench_index_build.py",
              "bench_embedder.py", "bench_vectors.py", "bench_inject.py", "bench_writes.py",
              "bench_remember.py", "bench_snapshot.py", "bench_archive.py", "bench_audit.py",
              "bench_dream.py", "bench_mcp.py", "bench_ui.py", "bench_moving.py",
              "bench_serve.py", "bench_passage.py")


def read_all(directory: Path) -> None:
    for path in directory.glob("*.md"):
        path.read_bytes()


def ruamel_list(directory: Path) -> None:
    yaml = YAML(typ="safe")
    for path in directory.glob("*.md"):
        block = split(path.read_bytes().decode("utf-8")).frontmatter
        if block:
            yaml.load(block)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    names = ["list", *(script[len("bench_"):-len(".py")] for script in BENCHMARKS)]
    parser.add_argument("--only", nargs="+", choices=names, default=names,
                        help="Run only these benchmarks (default: all).")
    args = parser.parse_args()
    corpus_generator_or_exit()
    if "list" in args.only:
        listing(args.files, args.repeat)
    for script in BENCHMARKS:
        if script[len("bench_"):-len(".py")] in args.only:
            print(f"\n== {script}", flush=True)
            repeat = ([] if script in ("bench_writes.py", "bench_vectors.py")  # no rounds
                      else ["--repeat", str(args.repeat)])
            subprocess.run([sys.executable, str(Path(__file__).with_name(script)), *repeat],
                           check=True)
    return 0


def listing(files: int, repeat: int) -> None:
    """The listing table: every file parsed through the safe read path."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "memory"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(files)],
                       check=True, capture_output=True)
        store = MemoryStore(corpus, Path(tmp) / "state")
        count = len(store.list().memories)
        rows = [
            ("read bytes (baseline)", median_of(lambda: read_all(corpus), repeat)),
            ("store.list()", median_of(store.list, repeat)),
            ("ruamel parse (not used)", median_of(lambda: ruamel_list(corpus),
                                                       max(1, repeat // 2))),
        ]
    base = rows[0][1]
    print(f"{count} memories, median of {repeat} runs")
    print(f"{'operation':<26} {'median s':>10} {'per file ms':>12} {'vs baseline':>12}")
    for label, seconds in rows:
        print(f"{label:<26} {seconds:>10.3f} {seconds / count * 1000:>12.3f} "
              f"{seconds / base:>11.1f}x")


if __name__ == "__main__":
    sys.exit(main())
