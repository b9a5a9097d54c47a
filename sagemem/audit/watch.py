"""``sagemem watch``: follow the memory folder, keep the search index fresh, and say what
the audit now says differently after each change.

One ``DirectoryWatcher`` (watchfiles, on its own thread) wakes the loop; the loop waits
until the folder has been quiet for ``debounce`` seconds, refreshes the index (only the
changed files are re-read) and re-audits with a read cache keyed by each file's
``lstat``, so only changed files are parsed again; the cross-file checks (index, links,
near-duplicates) run over what is cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import SagememError
from ..search.watch import DirectoryWatcher
from ..store import MemoryStore
from .report import AuditReport, Finding, ReadCache, audit

DEBOUNCE_SECONDS = 0.3
READY_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class AuditDiff:
    """What one change batch did: findings that appeared and that went away, the index
    refresh (files re-indexed, removed) or why it failed, and the audit now."""

    added: tuple[Finding, ...]
    fixed: tuple[Finding, ...]
    reindexed: int
    removed: int
    index_error: str | None
    report: AuditReport


class LiveAudit:
    """An audit kept current: it owns the read cache and the last report."""

    def __init__(self, store: MemoryStore, *, refresh_index: bool = True) -> None:
        self.store = store
        self.refresh_index = refresh_index
        self.cache: ReadCache = {}
        self._refresh()
        self.report = audit(store, cache=self.cache)

    def update(self) -> AuditDiff:
        """Refresh the index, re-audit, and return the difference to the last report."""
        reindexed, removed, error = self._refresh()
        report = audit(self.store, cache=self.cache)
        before = {f.key: f for f in self.report.findings}
        after = {f.key: f for f in report.findings}
        self.report = report
        return AuditDiff(tuple(after[k] for k in sorted(after.keys() - before.keys())),
                         tuple(before[k] for k in sorted(before.keys() - after.keys())),
                         reindexed, removed, error, report)

    def _refresh(self) -> tuple[int, int, str | None]:
        if not self.refresh_index:
            return 0, 0, None
        try:
            sync = self.store.search_index().refresh()
        except SagememError as exc:  # a busy or broken index must not end the watch
            return 0, 0, str(exc)
        return len(sync.updated), len(sync.removed), None


def follow(store: MemoryStore, on_change: Callable[[AuditDiff], None], *,
           stop: threading.Event | None = None, on_ready: Callable[[AuditReport], None]
           | None = None, debounce: float = DEBOUNCE_SECONDS, refresh_index: bool = True
           ) -> AuditReport | None:
    """Watch until ``stop`` is set or Ctrl-C; call ``on_change`` once per quiet batch.

    Returns the last report (None when stopped before the first audit finished). Ctrl-C
    ends the watch cleanly at any point, the first audit included (no exception).
    """
    stop = stop or threading.Event()
    live: LiveAudit | None = None
    watcher: DirectoryWatcher | None = None
    try:
        live = LiveAudit(store, refresh_index=refresh_index)
        woke = threading.Event()
        watcher = DirectoryWatcher(store.directory, recursive=True)
        watcher.add_listener(woke.set)
        watcher.start()
        _wait_ready(watcher, stop)
        if on_ready is not None:
            on_ready(live.report)
        while not stop.is_set() and watcher.is_alive():
            if woke.wait(0.1):
                _settle(woke, debounce, stop)
                on_change(live.update())
    except KeyboardInterrupt:
        pass
    finally:
        if watcher is not None:
            watcher.stop()
    return None if live is None else live.report


def _wait_ready(watcher: DirectoryWatcher, stop: threading.Event) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not watcher.ready and watcher.is_alive() and time.monotonic() < deadline:
        if stop.wait(0.02):
            return


def _settle(woke: threading.Event, debounce: float, stop: threading.Event) -> None:
    """Wait until nothing changed for ``debounce`` seconds (at most ten times that): an
    editor's save or a ``git checkout`` is one batch, not a hundred."""
    deadline = time.monotonic() + 10 * debounce
    woke.clear()
    while woke.wait(debounce) and time.monotonic() < deadline and not stop.is_set():
        woke.clear()
    woke.clear()
