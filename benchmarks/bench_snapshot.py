#!/usr/bin/env python3
"""Snapshot and rollback of a large memory directory, against a plain ``cp -r``.

    python benchmarks/bench_snapshot.py [--files 10000] [--repeat 5]

Generates a deterministic corpus with ``../shared/bench/gen_corpus.py`` and measures, in
the same run:

- ``cp -r`` (baseline)   a plain recursive copy of the memory folder (no fsync, no check);
- ``snapshot create``    the safe read path, a fsync'd copy of each file, every copy read
                         back and checked against its sha256, the manifest, the rename;
- ``verify``             re-reading a snapshot and checking every file (done by rollback);
- ``rollback touched``   100 files edited, then rolled back (plan with verification, a
                         protection snapshot of the whole directory, 100 guarded restores).

Ratios are against ``cp -r`` measured in the same run; absolute times depend on the
machine (and its disk: fsync on tmpfs is nearly free) and are shown only for scale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, median_of

from sagemem import MemoryStore
from sagemem.history.rollback import rollback
from sagemem.history.snapshots import create_snapshot, damaged_files, load_snapshot

EDITED = 100


def copy_tree(source: Path, target_root: Path) -> None:
    """``cp -r`` into a folder not used before (removing the last copy is not timed)."""
    target_root.mkdir(exist_ok=True)
    target = target_root / str(len(list(target_root.iterdir())))
    subprocess.run(["cp", "-r", str(source), str(target)], check=True)


def edit_and_roll_back(store: MemoryStore, snapshot_id: str) -> None:
    for path in sorted(store.directory.glob("*_*.md"))[:EDITED]:
        path.write_bytes(path.read_bytes() + b"\nedited\n")
    report = rollback(store, snapshot_id, scope="touched")
    assert len(report.restored) == EDITED, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "memory"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(args.files)],
                       check=True, capture_output=True)
        store = MemoryStore(corpus, Path(tmp) / "state")
        rows = [("cp -r (baseline)",
                 median_of(lambda: copy_tree(corpus, Path(tmp) / "copies"), args.repeat)),
                ("snapshot create",
                 median_of(lambda: create_snapshot(store, keep=1000), args.repeat))]
        snapshot = create_snapshot(store, keep=1000)
        count = len(snapshot.files)
        loaded = load_snapshot(store, snapshot.id)
        rows.append(("verify", median_of(lambda: damaged_files(loaded), args.repeat)))
        rows.append((f"rollback touched ({EDITED})",
                     median_of(lambda: edit_and_roll_back(store, snapshot.id), args.repeat)))
    base = rows[0][1]
    print(f"{count} files (memories and MEMORY.md), median of {args.repeat} runs")
    print(f"{'operation':<26} {'median s':>10} {'per file ms':>12} {'vs cp -r':>10}")
    for label, seconds in rows:
        print(f"{label:<26} {seconds:>10.3f} {seconds / count * 1000:>12.3f} "
              f"{seconds / base:>9.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
