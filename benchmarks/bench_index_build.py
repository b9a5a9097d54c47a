#!/usr/bin/env python3
"""Lexical index build benchmark: whole processes, one table of medians and ratios.

    python benchmarks/bench_index_build.py [--files 10000] [--repeat 3] [--against DIR]

Generates a deterministic memory directory with ``../shared/bench/gen_corpus.py`` (beside
the checkout) and times, as processes from outside (interpreter start and imports
included), in the same run:

- ``python -c pass``          the interpreter alone;
- ``re-read + tokenise``      the floor: a process that reads every file, splits off its
                              frontmatter and tokenises it and every body paragraph with
                              sagemem's own ``search/text.py`` — the work the index caches
                              (the YAML parse a build also needs is not in the floor);
- ``sagemem index (cold)``    no index yet: build it from nothing;
- ``sagemem search (warm)``   index up to date, one query;
- ``edit + sagemem search``   one file edited, the next query re-indexes it;
- ``one-file update``         the same edit, timed inside a long-lived process around
                              ``SearchIndex.sync()`` alone (the 50 ms target), next to
                              the stat pass every sync makes to notice it.

``--against DIR`` (a checkout of another version, e.g. ``git archive main | tar -x -C
DIR``) also times that version's cold build, warm search and one-file update, with
``PYTHONPATH=DIR``, alternated with this one's, so before and after share the machine's
load. Ratios are against the re-read floor measured in the same run (the target: cold
build ≤ 5× it). SAGE_MEM_SEMANTIC=off for every process: this measures the lexical index.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit

FLOOR = """
import sys
from pathlib import Path
from sagemem.files.memory import split
from sagemem.search.text import paragraphs, tokens
n = 0
for path in Path(sys.argv[1]).glob("*.md"):
    if path.name == "MEMORY.md":
        continue
    text = path.read_bytes().decode("utf-8")
    parts = split(text)
    n += len(tokens(parts.frontmatter or ""))
    for para in paragraphs(text[parts.body_start:], 1):
        n += len(tokens(para.text))
print(n)
"""

ONE_FILE_UPDATE = """
import sys, time, statistics
from pathlib import Path
from sagemem.files.folder import MemoryFolder
from sagemem.search.index import SearchIndex
from sagemem.search.sync import stat_pass
directory, state, repeat = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
index = SearchIndex(MemoryFolder(directory, state))
index.sync()
victim = sorted(directory.glob("user_*.md"))[1]
syncs, stats = [], []
for i in range(repeat):
    start = time.perf_counter()
    stat_pass(index.store, False)
    stats.append(time.perf_counter() - start)
    with victim.open("a", encoding="utf-8") as handle:
        handle.write(f"\\nAn update mentions zqxupdate{i} here.\\n")
    start = time.perf_counter()
    report = index.sync()
    syncs.append(time.perf_counter() - start)
    assert report.updated == (victim.name,), report
index.close()
print(statistics.median(syncs), statistics.median(stats))
"""


def run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    # python -m and -c put the working directory first on sys.path: the version run is
    # the one PYTHONPATH names, else this checkout
    subprocess.run(args, check=True, capture_output=True, env=env, cwd=_cwd(env))
    return time.perf_counter() - start


def sagemem(directory: Path, state: Path, *command: str) -> list[str]:
    return [sys.executable, "-m", "sagemem", "--dir", str(directory), "--state-dir",
            str(state), *command]


def measure(files: int, repeat: int, root: Path, against: Path | None = None
            ) -> list[tuple[str, float, str]]:
    directory = root / "memory"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(directory), str(files)], check=True,
                   capture_output=True)
    env = {**os.environ, "SAGE_MEM_SEMANTIC": "off"}
    other = {**env, "PYTHONPATH": str(against)} if against else None
    state = root / "state"
    times: dict[str, list[float]] = {k: [] for k in ("pass", "floor", "cold", "warm", "edit",
                                                     "cold_before", "warm_before")}
    victim = sorted(directory.glob("user_*.md"))[0]
    for i in range(repeat):  # alternated, so a busy moment of the machine hits every row
        times["pass"].append(run([sys.executable, "-c", "pass"], env))
        times["floor"].append(run([sys.executable, "-c", FLOOR, str(directory)], env))
        if other is not None:
            shutil.rmtree(root / "before", ignore_errors=True)
            times["cold_before"].append(run(sagemem(directory, root / "before", "index"), other))
            times["warm_before"].append(run(sagemem(directory, root / "before", "search",
                                                    "deploy notes"), other))
        shutil.rmtree(state, ignore_errors=True)
        times["cold"].append(run(sagemem(directory, state, "index"), env))
        times["warm"].append(run(sagemem(directory, state, "search", "deploy notes"), env))
        with victim.open("a", encoding="utf-8") as handle:
            handle.write(f"\nA new note mentions zqxedit{i} for the benchmark.\n")
        times["edit"].append(run(sagemem(directory, state, "search", f"zqxedit{i}"), env))
    out = one_file_update(directory, state, repeat, env)
    size = sum(p.stat().st_size for p in directory.glob("*.md")) / 1e6
    index_mb = sum(p.stat().st_size for p in (state / "index").iterdir()) / 1e6
    med = {k: statistics.median(v) for k, v in times.items() if v}
    before: list[tuple[str, float, str]] = []
    if other is not None:
        old = one_file_update(directory, root / "before", repeat, other)
        old_mb = sum(p.stat().st_size for p in (root / "before" / "index").iterdir()) / 1e6
        before = [
            ("index (cold), --against", med["cold_before"], f"index {old_mb:.1f} MB on disk"),
            ("search (warm), --against", med["warm_before"], ""),
            ("one-file update, --against", old[0], ""),
        ]
    return [
        *before,
        ("python -c pass", med["pass"], ""),
        ("re-read + tokenise", med["floor"], f"the floor; {size:.1f} MB of memories"),
        ("sagemem index (cold)", med["cold"], f"index {index_mb:.1f} MB on disk"),
        ("sagemem search (warm)", med["warm"], ""),
        ("edit + sagemem search", med["edit"], "one file re-indexed"),
        ("one-file update", out[0], "in-process SearchIndex.sync(), stat pass included"),
        ("  its stat pass", out[1], "the same stat pass with nothing changed"),
    ]


def one_file_update(directory: Path, state: Path, repeat: int, env: dict[str, str]
                    ) -> tuple[float, float]:
    """The medians of (one-file sync, its stat pass) in a long-lived process."""
    out = subprocess.run([sys.executable, "-c", ONE_FILE_UPDATE, str(directory), str(state),
                          str(max(repeat, 5))], check=True, capture_output=True, text=True,
                         env=env, cwd=_cwd(env)).stdout.split()
    return float(out[0]), float(out[1])


def _cwd(env: dict[str, str]) -> str:
    return env.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None,
                        help="a checkout of another version to time alongside this one")
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-index-") as tmp:
        rows = measure(args.files, args.repeat, Path(tmp), args.against)
    floor = next(value for label, value, _ in rows if label == "re-read + tokenise")
    print(f"\n{args.files} memories, lexical index (median of {args.repeat}; "
          "ratio to the re-read floor)")
    print(f"{'measurement':<28} {'median':>11} {'ratio':>9}  note")
    for label, value, note in rows:
        print(f"{label:<28} {value * 1000:>8.1f} ms {value / floor:>8.2f}x  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
