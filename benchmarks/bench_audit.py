#!/usr/bin/env python3
"""Audit benchmark: ``sagemem audit`` over a generated folder, against a plain listing.

    python benchmarks/bench_audit.py [--files 10000] [--repeat 5]

Generates a memory directory with ``../shared/bench/gen_corpus.py`` (beside the checkout),
plants a few problems and near-duplicates in it, then times in the same run:

- ``store.list()``        the baseline: every file through the safe read path, parsed;
- ``audit()``             the whole audit (every check, near-duplicates included);
- ``near-duplicates``     that check alone, on memories already parsed;
- ``re-audit, 1 change``  what ``sagemem watch`` does after one edit (read cache warm).

Target: the audit of 10,000 memories in at most 5 s (2-core machine).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, median_of

from sagemem import MemoryStore
from sagemem.audit.duplicates import candidate_pairs, fingerprint, near_duplicates
from sagemem.audit.report import ReadCache, audit

PLANTED_DUPLICATES = 20


def plant(corpus: Path) -> None:
    """Near-duplicates (copies, half of them edited) and one broken index line, so the
    checks have work: every planted pair should be found."""
    files = sorted(corpus.glob("*_*.md"))
    for n, source in enumerate(files[:PLANTED_DUPLICATES]):
        text = source.read_text(encoding="utf-8")
        if n % 2:  # half exact copies, half with their name edited
            text = text.replace("\nname: ", "\nname: copy of ", 1)
        (corpus / f"{source.stem}-copy{n}.md").write_text(text, encoding="utf-8")
    with (corpus / "MEMORY.md").open("a") as index:
        index.write("- [gone](reference_gone.md) — deleted\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        corpus = Path(tmp) / "memory"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(args.files)],
                       check=True, capture_output=True)
        plant(corpus)
        store = MemoryStore(corpus, Path(tmp) / "state")
        memories = store.list(include_archived=False).memories
        report = audit(store)
        pairs = len(candidate_pairs([fingerprint(m) for m in memories]))
        cache: ReadCache = {}
        audit(store, cache=cache)
        edited = sorted(corpus.glob("user_*.md"))[0]

        def one_change() -> None:
            edited.write_text(edited.read_text() + "x\n")
            audit(store, cache=cache)

        rows = [
            ("store.list() (baseline)", median_of(store.list, args.repeat)),
            ("audit()", median_of(lambda: audit(store), args.repeat)),
            ("near-duplicates alone", median_of(lambda: near_duplicates(memories), args.repeat)),
            ("re-audit, 1 change", median_of(one_change, args.repeat)),
        ]
    count = len(memories)
    duplicates = sum(1 for f in report.findings if f.category == "near_duplicate")
    print(f"{count} memories, median of {args.repeat} runs; {len(report.findings)} findings, "
          f"{duplicates} near-duplicate pairs from {pairs} candidate pairs "
          f"(all pairs: {count * (count - 1) // 2})")
    base = rows[0][1]
    print(f"{'operation':<26} {'median s':>10} {'per file ms':>12} {'vs baseline':>12}")
    for label, seconds in rows:
        print(f"{label:<26} {seconds:>10.3f} {seconds / count * 1000:>12.3f} "
              f"{seconds / base:>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
