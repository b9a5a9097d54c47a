#!/usr/bin/env python3
"""Archive benchmarks: one command, one table of medians and ratios.

    python benchmarks/bench_archive.py [--size 1000] [--repeat 7]

Generates a deterministic memory directory with ``../shared/bench/gen_corpus.py`` (beside
the checkout), archives a tenth of it, records a ledger read for half of the rest, and
measures in the same run (library calls, in one process):

- ``store.list()``               the listing floor: every top-level memory read and parsed;
- ``archive candidates``         the listing plus the ledger, locks and the idle rule;
- ``guarded write``              ``store.write`` of one memory: lock, atomic write, fsync;
- ``archive + restore``          one memory out and back: two lock holds, two moves, two
                                 MEMORY.md rewrites, two archive.jsonl lines;
- ``lock + unlock``              one memory: two atomic rewrites of locked.json;
- ``search``                     a warm search of the top level;
- ``search --include-archived``  the same questions over the memories and the archive.

Ratios: the candidate listing against ``store.list()``, the moves and locks against the
guarded write, the archive search against the plain search.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, median_of

from sagemem import MemoryStore
from sagemem.history import ledger
from sagemem.history.archive import archive_memory, restore_memory
from sagemem.history.candidates import archive_candidates
from sagemem.history.locks import lock_memory, unlock_memory

THRESHOLDS = {"project": 90, "reference": 180, "feedback": 365, "user": 0}


def prepare(store: MemoryStore) -> list[str]:
    """Archive every tenth memory (no index line rewrite: done by moving, as a bulk
    archive would); mark half of the rest as read. Returns the top-level files."""
    files = store.files()
    store.archive_dir.mkdir(exist_ok=True)
    for file in files[::10]:
        (store.directory / file).rename(store.archive_dir / file)
    live = store.files()
    ledger.record(store.state_dir, "read", live[::2], datetime.now(timezone.utc))
    return live


def rows_for(store: MemoryStore, live: list[str], queries: list[str], repeat: int
             ) -> list[tuple[str, float, str]]:
    now = datetime.now(timezone.utc)
    target = live[1]
    text = (store.directory / target).read_text(encoding="utf-8")

    def write() -> None:
        store.write(target, text, store.get(target).revision)

    def round_trip() -> None:
        archive_memory(store, target, "bench", now=now)
        restore_memory(store, target, now=now)

    def locking() -> None:
        lock_memory(store, target, now=now)
        unlock_memory(store, target, now=now)

    def search(include_archived: bool) -> None:
        for query in queries:
            store.search(query, include_archived=include_archived)

    search(True)  # build both indexes before timing
    # MEMORY.md over the per-file limit (about 4,500 lines) cannot be rewritten: the
    # moves are then refused (FileTooLarge) and not timed.
    index_fits = (store.directory / "MEMORY.md").stat().st_size <= store.max_bytes
    moves = [
        ("guarded write", median_of(write, repeat), "write"),
        ("archive + restore", median_of(round_trip, repeat), "write"),
        ("lock + unlock", median_of(locking, repeat), "write"),
    ] if index_fits else []
    return [
        ("store.list()", median_of(store.list, repeat), "list"),
        ("archive candidates", median_of(lambda: archive_candidates(store, THRESHOLDS, now),
                                         repeat), "list"),
        *moves,
        (f"search x{len(queries)}", median_of(lambda: search(False), repeat), "search"),
        (f"search --include-archived x{len(queries)}", median_of(lambda: search(True), repeat),
         "search"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        memory = Path(tmp) / "m"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(memory), str(args.size)],
                       check=True, capture_output=True)
        queries = [q for q in Path(f"{memory}.queries.txt").read_text().splitlines() if q][:20]
        with MemoryStore(memory, Path(tmp) / "s") as store:
            live = prepare(store)
            rows = rows_for(store, live, queries, args.repeat)
    bases: dict[str, float] = {}
    for _, seconds, kind in rows:
        bases.setdefault(kind, seconds)  # the first row of each kind is its baseline
    print(f"{args.size} memories ({len(live)} live, {args.size - len(live)} archived), "
          f"median of {args.repeat} runs")
    print(f"{'operation':<36} {'median ms':>10} {'vs baseline':>12}")
    for label, seconds, kind in rows:
        print(f"{label:<36} {seconds * 1000:>10.1f} {seconds / bases[kind]:>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
