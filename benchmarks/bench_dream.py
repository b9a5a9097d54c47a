#!/usr/bin/env python3
"""Consolidation benchmark: ``sagemem dream run --planner tidy`` as whole processes.

    python benchmarks/bench_dream.py [--files 1000 10000] [--repeat 5] [--apply-max 10000]

Generates a memory directory per size with ``../shared/bench/gen_corpus.py`` (beside the
checkout) and times, as whole processes seen from outside (``subprocess`` wall time,
interpreter start and imports included), the median of ``--repeat`` rounds that alternate
every row (a busy spell of the shared machine lands on every row alike), after one untimed
round that warms the page cache:

- ``python -c pass``    the floor: the interpreter's own start;
- ``re-read``           the floor: Python starts and reads every file's bytes, nothing else
                        (the listing's baseline in ``run.py``);
- ``sagemem audit``     the floor of the planner, which runs the audit once;
- ``dream run``         ``--planner tidy``, a report: nothing in the folder is written;
- ``dream run --apply`` the same plan carried out (rollback snapshot, one guarded write or
                        archive move per operation, the manifest), each round on a fresh
                        copy of the corpus and an empty state directory (the copy not timed).

The apply row runs only at sizes up to ``--apply-max`` (default: both sizes; at 10,000
the tidy plan archives about 2,500 idle memories, a quarter of the folder, so the row
passes ``--allow-loss``, which the archive ceiling asks for). The default run takes
about 4 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, sagemem_command

REREAD = """
import sys
from pathlib import Path
for path in Path(sys.argv[1]).glob("*.md"):
    path.read_bytes()
"""

FLOORS = ("python -c pass", "re-read", "sagemem audit")


@dataclass(frozen=True)
class Row:
    label: str
    argv: list[str]
    prepare: Callable[[], list[str]] | None = None  # untimed; returns the argv to run
    warm: bool = True  # part of the untimed first round


def wall(argv: list[str]) -> tuple[float, str]:
    """One process's wall time and its stdout."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as after an install: bytecode cached
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=True, env=env, text=True)
    return time.perf_counter() - start, done.stdout


def fresh_copy(corpus: Path, root: Path) -> Callable[[], list[str]]:
    """A new copy of the corpus and an empty state directory for each apply."""
    rounds = iter(range(1_000_000))

    def prepare() -> list[str]:
        n = next(rounds)
        target, state = root / f"apply{n}", root / f"apply{n}.state"
        if n:
            shutil.rmtree(root / f"apply{n - 1}")
            shutil.rmtree(root / f"apply{n - 1}.state", ignore_errors=True)
        shutil.copytree(corpus, target)
        return [*sagemem_command(), "--dir", str(target), "--state-dir", str(state),
                "dream", "run", "--planner", "tidy", "--apply", "--allow-loss"]

    return prepare


def rows_for(root: Path, size: int, apply: bool) -> list[Row]:
    corpus, state = root / f"m{size}", root / f"s{size}"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(size)], check=True,
                   capture_output=True)
    at = [*sagemem_command(), "--dir", str(corpus), "--state-dir", str(state)]
    rows = [Row("python -c pass", [sys.executable, "-c", "pass"]),
            Row("re-read", [sys.executable, "-c", REREAD, str(corpus)]),
            Row("sagemem audit", [*at, "audit"]),
            Row("dream run (report)", [*at, "dream", "run", "--planner", "tidy"])]
    if apply:
        rows.append(Row("dream run --apply", [], fresh_copy(corpus, root / f"a{size}"),
                        warm=False))
    return rows


def measure(rows: list[Row], repeat: int) -> tuple[dict[str, list[float]], str]:
    """Every row's times over ``repeat`` alternated rounds, and the last apply's stdout."""
    for row in rows:
        if row.warm:
            wall(row.argv)
    times: dict[str, list[float]] = {row.label: [] for row in rows}
    applied = ""
    for _ in range(repeat):
        for row in rows:
            seconds, out = wall(row.prepare() if row.prepare else row.argv)
            times[row.label].append(seconds)
            if row.prepare:
                applied = out
    return times, applied


def print_table(size: int, times: dict[str, list[float]], applied: str) -> None:
    medians = {label: statistics.median(values) for label, values in times.items()}
    print(f"\n{size:,} memories")
    print(f"{'process':<22} {'median':>9} {'min-max':>17} {'x pass':>8} {'x re-read':>10} "
          f"{'x audit':>8}")
    for n, (label, values) in enumerate(times.items()):
        # a ratio only to the floors above the row: a floor against a bigger one says nothing
        ratios = [f"{medians[label] / medians[floor]:.2f}x" if floor in FLOORS[:n] else ""
                  for floor in FLOORS]
        spread = f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f} ms"
        print(f"{label:<22} {medians[label] * 1000:>6.0f} ms {spread:>17} {ratios[0]:>8} "
              f"{ratios[1]:>10} {ratios[2]:>8}")
    if found := re.search(r"(\d+) applied", applied):
        print(f"the apply carried out {found[1]} operations")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10_000],
                        help="Memories per corpus, one table each.")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--apply-max", type=int, default=10_000,
                        help="Time --apply only at sizes up to this.")
    args = parser.parse_args()
    corpus_generator_or_exit()
    start = time.perf_counter()
    print(f"whole processes, median of {args.repeat} alternated rounds, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        for size in args.files:
            apply = size <= args.apply_max
            times, applied = measure(rows_for(Path(tmp), size, apply), args.repeat)
            print_table(size, times, applied)
            if not apply:
                print(f"dream run --apply skipped at {size:,} (--apply-max {args.apply_max})")
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
