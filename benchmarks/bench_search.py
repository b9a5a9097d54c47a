#!/usr/bin/env python3
"""Search benchmarks: one command, one table of medians and ratios.

    python benchmarks/bench_search.py [--sizes 1000 10000] [--repeat 7]

For each size, generates a deterministic memory directory with
``../shared/bench/gen_corpus.py`` (beside the checkout) and measures, in the same run:

- ``bare stat pass``       scandir + stat of every file: the floor for noticing edits;
- ``full re-read search``  read, parse and tokenise every file per question (sage-mem's way);
- ``cold first query``     no index yet: the query builds it (in a fresh process);
- ``warm, in-process``     index on disk, a new process opens the store and searches,
                           timed inside the process: imports and interpreter excluded;
- ``warm, long-lived``     one store object kept open with its watchfiles watcher;
- ``query after an edit``  one file edited, the next query must find the new text;
- ``stat pass, process``   the floor for whole processes: Python starts, stats every file;
- ``sagemem search (CLI)`` the whole command as a process, interpreter start included
                           (its note: the ratio to the stat-pass process).

Ratios are against the bare stat pass measured in the same run. ``bench_startup.py``
times every command as a whole process, alternated with its floors. Peak RSS is the largest
resident set of the fresh processes (cold build included).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import GEN_CORPUS, median_of, sizes_and_repeat

from sagemem import MemoryStore
from sagemem.files.memory import parse
from sagemem.search.text import tokens

FRESH_QUERY = """
import resource, sys, time
from sagemem import MemoryStore
start = time.perf_counter()
with MemoryStore(sys.argv[1], sys.argv[2]) as store:
    found = len(store.search(sys.argv[3]).results)
elapsed = time.perf_counter() - start
print(elapsed, found, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""




def bare_stat_pass(directory: Path) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            entry.stat(follow_symlinks=False)


def full_reread_search(directory: Path, query: str) -> list[str]:
    """The sage-mem approach: every file read, parsed and tokenised for every question."""
    wanted = set(tokens(query))
    scores: Counter[str] = Counter()
    for path in directory.glob("*.md"):
        if path.name == "MEMORY.md":
            continue
        memory = parse(path.read_bytes(), path.name)
        counts = Counter(tokens(memory.description + "\n" + memory.body))
        scores[path.name] = sum(counts[t] for t in wanted)
    return [name for name, score in scores.most_common(10) if score]


def fresh_process(directory: Path, state: Path, query: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", FRESH_QUERY, str(directory), str(state), query],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[2]) // 1024


def cli_process(directory: Path, state: Path, query: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(directory), "--state-dir",
                    str(state), "search", query], check=True, capture_output=True)
    return time.perf_counter() - start


def stat_process(directory: Path) -> float:
    code = ("import os, sys\nwith os.scandir(sys.argv[1]) as entries:\n"
            "    for entry in entries:\n        entry.stat(follow_symlinks=False)")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(directory)], check=True)
    return time.perf_counter() - start


def edit_then_query(store: MemoryStore, directory: Path, word: str) -> tuple[float, bool]:
    """Append a new word to one memory, then time the next query for it."""
    victim = sorted(directory.glob("user_*.md"))[0]
    with victim.open("a", encoding="utf-8") as handle:
        handle.write(f"\nA new note mentions {word} for the benchmark.\n")
    start = time.perf_counter()
    found = any(r.file == victim.name for r in store.search(f"{word} benchmark note").results)
    return time.perf_counter() - start, found


def measure(size: int, repeat: int, root: Path) -> list[tuple[str, float, str]]:
    directory = root / f"m{size}"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(directory), str(size)], check=True,
                   capture_output=True)
    queries = [q for q in (root / f"m{size}.queries.txt").read_text().splitlines() if q][:40]
    state = root / f"s{size}"
    floor = median_of(lambda: bare_stat_pass(directory), repeat)
    rows = [("bare stat pass", floor, "")]
    reread = median_of(lambda: full_reread_search(directory, queries[0]), 3)
    rows.append(("full re-read search", reread, ""))
    cold, cold_rss = fresh_process(directory, state, queries[0])
    rows.append(("cold first query", cold, ""))
    fresh = [fresh_process(directory, state, q) for q in queries[1:repeat + 1]]
    peak = max([cold_rss] + [rss for _, rss in fresh])
    rows.append(("warm, in-process", statistics.median(t for t, _ in fresh), "imports excluded"))
    with MemoryStore(directory, state) as store:
        store.search(queries[0])
        store.search_index().watch()
        _wait_for_watcher(store)
        long_lived = []
        for query in queries:
            start = time.perf_counter()
            store.search(query)
            long_lived.append(time.perf_counter() - start)
        rows.append(("warm, long-lived", statistics.median(long_lived), ""))
    with MemoryStore(directory, state) as store:
        store.search(queries[0])
        edits = [edit_then_query(store, directory, f"zqx{size}w{i}") for i in range(repeat)]
    seen = sum(found for _, found in edits)
    rows.append(("query after an edit", statistics.median(t for t, _ in edits),
                 f"seen {seen}/{len(edits)}"))
    stat, cli = [], []
    for query in queries[1:repeat + 1]:  # alternated, so both see the same machine
        stat.append(stat_process(directory))
        cli.append(cli_process(directory, state, query))
    floor_process = statistics.median(stat)
    rows.append(("stat pass, process", floor_process, "incl. interpreter"))
    rows.append(("sagemem search (CLI)", statistics.median(cli),
                 f"{statistics.median(cli) / floor_process:.2f}x the stat-pass process"))
    rows.append(("peak RSS (MB)", float(peak), ""))
    return rows


def _wait_for_watcher(store: MemoryStore) -> None:
    watcher = store.search_index()._watcher
    deadline = time.time() + 5
    while watcher is not None and not watcher.ready and time.time() < deadline:
        time.sleep(0.05)
    store.search("warm up the watcher")


def main() -> int:
    args = sizes_and_repeat(__doc__)
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        for size in args.sizes:
            rows = measure(size, args.repeat, Path(tmp))
            floor = rows[0][1]
            print(f"\n{size} memories (median of {args.repeat}; ratio to the bare stat pass)")
            print(f"{'measurement':<24} {'median':>11} {'ratio':>9}  note")
            for label, value, note in rows:
                if label.startswith("peak"):
                    print(f"{label:<24} {value:>8.0f} MB {'':>9}  {note}")
                else:
                    print(f"{label:<24} {value * 1000:>8.1f} ms {value / floor:>8.1f}x  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
