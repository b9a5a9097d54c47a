#!/usr/bin/env python3
"""sagemem benchmarks: one command, one table of medians and ratios.

    python benchmarks/run.py [--files N] [--repeat R] [--all]

Generates a deterministic synthetic memory directory with ``../shared/bench/gen_corpus.py``
(beside the checkout) and measures, in the same run:

- ``read bytes``      the floor: ``Path.read_bytes`` of every file, nothing else;
- ``store.list()``    sagemem's listing: the safe read path plus lenient parsing;
- ``ruamel parse``    the same listing if frontmatter were read with ruamel.yaml
                      (the alternative the read path does not use).

The other benchmarks also run on their own: ``bench_search.py``, ``bench_inject.py``,
``bench_writes.py``, ``bench_snapshot.py``, ``bench_archive.py`` and ``bench_audit.py``.

Ratios are against ``read bytes`` measured in the same run; absolute times depend on the
machine and are shown only for scale. ``--all`` then runs every script of BENCHMARKS
(with the same ``--repeat``), each printing its own table.
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
# 1,000 as processes, snapshot 10,000); `--all` only passes --repeat along.
BENCHMARKS = ("bench_search.py", "bench_inject.py", "bench_writes.py", "bench_snapshot.py",
              "bench_archive.py", "bench_audit.py")


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
    parser.add_argument("--all", action="store_true", help="Also run BENCHMARKS.")
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "memory"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(args.files)],
                       check=True, capture_output=True)
        store = MemoryStore(corpus, Path(tmp) / "state")
        count = len(store.list().memories)
        rows = [
            ("read bytes (baseline)", median_of(lambda: read_all(corpus), args.repeat)),
            ("store.list()", median_of(store.list, args.repeat)),
            ("ruamel parse (not used)", median_of(lambda: ruamel_list(corpus),
                                                       max(1, args.repeat // 2))),
        ]
    base = rows[0][1]
    print(f"{count} memories, median of {args.repeat} runs")
    print(f"{'operation':<26} {'median s':>10} {'per file ms':>12} {'vs baseline':>12}")
    for label, seconds in rows:
        print(f"{label:<26} {seconds:>10.3f} {seconds / count * 1000:>12.3f} "
              f"{seconds / base:>11.1f}x")
    for script in BENCHMARKS if args.all else ():
        print()
        repeat = [] if script == "bench_writes.py" else ["--repeat", str(args.repeat)]
        subprocess.run([sys.executable, str(Path(__file__).with_name(script)), *repeat],
                       check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
