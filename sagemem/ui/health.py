"""The folder's audit and open conflicts, kept for the header's badges and the Files
screen's marks without auditing on every request.

An audit of 10,000 memories takes seconds; a page must take well under one. The audit is
kept with the folder's signature — each file's name, size and mtime from one stat pass
(tens of milliseconds at 10,000) — and run again only when that changes.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ..audit.report import AuditReport, audit
from ..store import MemoryStore
from ..writes.conflicts import list_conflicts


@dataclass(frozen=True)
class Health:
    """One layer's audit problems per file and open conflicts per file."""

    problems: int
    hints: int
    problems_by_file: Counter[str] = field(default_factory=Counter)
    open_conflicts: int = 0
    conflicts_by_file: Counter[str] = field(default_factory=Counter)
    report: AuditReport | None = None


class HealthCache:
    """``health(store)``: the last audit while the folder's signature holds."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[tuple[str, int, int], ...], Health]] = {}

    def health(self, store: MemoryStore) -> Health:
        signature = folder_signature(store)
        kept = self._kept.get(str(store.directory))
        if kept is not None and kept[0] == signature:
            report = kept[1]
        else:
            report = _audited(store)
            self._kept[str(store.directory)] = (signature, report)
        return _with_conflicts(store, report)


def folder_signature(store: MemoryStore) -> tuple[tuple[str, int, int], ...]:
    """Name, size and mtime (ns) of every top-level file and of archive/'s: one stat pass."""
    found: list[tuple[str, int, int]] = []
    for folder in (store.directory, store.directory / "archive"):
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    found.append((f"{folder.name}/{entry.name}", st.st_size, st.st_mtime_ns))
        except OSError:
            continue
    return tuple(sorted(found))


def _audited(store: MemoryStore) -> Health:
    report = audit(store)
    problems = [f for f in report.findings if f.severity == "problem"]
    return Health(len(problems), len(report.findings) - len(problems),
                  Counter(f.file for f in problems), report=report)


def _with_conflicts(store: MemoryStore, health: Health) -> Health:
    """Open conflicts are read fresh: a write refused a second ago must show."""
    records = list_conflicts(store.state_dir, status="open")
    by_file: Counter[str] = Counter()
    for record in records:
        for file in (record.file, *record.memories):
            if file:
                by_file[file] += 1
    return Health(health.problems, health.hints, health.problems_by_file, len(records),
                  by_file, health.report)
