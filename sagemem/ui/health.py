"""The folder's audit, open conflicts and memories, kept between requests.

An audit of 10,000 memories takes seconds and parsing them one or two; a page must take
well under a second. So:

- the **memories** are kept with each file's size and mtime and only the files that
  changed are parsed again (one stat pass of the folder: tens of milliseconds);
- the **audit** runs on a thread of its own (over its own store object: it opens no
  database) whenever the folder's signature changes; a page waits for it at most
  ``WAIT_S`` (the first one waits for the first audit), then shows the last one,
  marked as being checked again;
- **open conflicts** are read fresh: a write refused a second ago must show.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..audit.report import AuditReport, audit
from ..errors import SagememError
from ..files.memory import Memory
from ..store import MemoryStore
from ..writes.conflicts import list_conflicts

WAIT_S = 0.5
Signature = tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class Health:
    """One layer's audit problems per file and open conflicts per file; ``stale`` while
    a newer audit is still running."""

    problems: int
    hints: int
    problems_by_file: Counter[str] = field(default_factory=Counter)
    open_conflicts: int = 0
    conflicts_by_file: Counter[str] = field(default_factory=Counter)
    report: AuditReport | None = None
    stale: bool = False


class HealthCache:
    """``health(store)``: the audit of the folder as it is, or the last one while the
    new one runs (see the module doc)."""

    def __init__(self, wait_s: float = WAIT_S) -> None:
        self.wait_s = wait_s
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sagemem-audit")
        self._done: dict[Path, tuple[Signature, Health]] = {}
        self._running: dict[Path, tuple[Signature, Future[Health]]] = {}

    def health(self, store: MemoryStore) -> Health:
        signature = folder_signature(store)
        done = self._done.get(store.directory)
        if done is not None and done[0] == signature:
            return _with_conflicts(store, done[1])
        running = self._running.get(store.directory)
        if running is None or running[0] != signature:
            audited = self._pool.submit(_audited, store.directory, store.state_dir)
            running = (signature, audited)
            self._running[store.directory] = running
        try:
            result = running[1].result(timeout=None if done is None else self.wait_s)
        except FutureTimeout:
            assert done is not None
            return _with_conflicts(store, replace(done[1], stale=True))
        self._done[store.directory] = (running[0], result)
        return _with_conflicts(store, result)


class MemoriesCache:
    """Every memory of a layer (archived ones too), parsed again only when its file's
    size or mtime changed."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Path, bool, str], tuple[int, int, Memory]] = {}

    def memories(self, store: MemoryStore) -> tuple[list[Memory], list[str]]:
        """The memories, and a line for each file that cannot be read."""
        found: list[Memory] = []
        problems: list[str] = []
        for archived in (False, True):
            for name, size, mtime in _stats(store, archived):
                key = (store.directory, archived, name)
                kept = self._kept.get(key)
                if kept is not None and kept[:2] == (size, mtime):
                    found.append(kept[2])
                    continue
                try:
                    memory = store.get(name, archived=archived)
                except SagememError as exc:
                    problems.append(f"{name}: {exc}")
                    continue
                self._kept[key] = (size, mtime, memory)
                found.append(memory)
        return found, problems


def _stats(store: MemoryStore, archived: bool) -> list[tuple[str, int, int]]:
    """The memory files of the layer (the folder's own rules: reserved names left out)
    with their size and mtime; a file that vanished meanwhile is left out."""
    folder = store.folder(archived=archived)
    found = []
    for name in store.files(archived=archived):
        try:
            st = os.lstat(folder / name)
        except OSError:
            continue
        found.append((name, st.st_size, st.st_mtime_ns))
    return found


def folder_signature(store: MemoryStore) -> Signature:
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


def _audited(directory: Path, state_dir: Path) -> Health:
    report = audit(MemoryStore(directory, state_dir))
    problems = [f for f in report.findings if f.severity == "problem"]
    return Health(len(problems), len(report.findings) - len(problems),
                  Counter(f.file for f in problems), report=report)


def _with_conflicts(store: MemoryStore, health: Health) -> Health:
    records = list_conflicts(store.state_dir, status="open")
    by_file: Counter[str] = Counter()
    for record in records:
        for file in (record.file, *record.memories):
            if file:
                by_file[file] += 1
    return replace(health, open_conflicts=len(records), conflicts_by_file=by_file)
