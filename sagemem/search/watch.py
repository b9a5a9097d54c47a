"""Following a memory directory with watchfiles, for long-lived processes.

A query normally stats every file to notice edits; a process that stays up (an MCP
server, a benchmark's store) starts a watcher instead, and a query with nothing changed
then skips the stat pass. A change is seen as soon as the OS reports it — typically
within milliseconds; until the watcher is ready, queries stat as usual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path


class DirectoryWatcher(threading.Thread):
    """A watchfiles thread that remembers whether anything changed since it was last asked."""

    def __init__(self, directory: Path, *, recursive: bool = False) -> None:
        super().__init__(daemon=True, name="sagemem-watch")
        self.directory = directory
        self.recursive = recursive
        self._listeners: list[Callable[[], None]] = []
        self.ready = False
        self._changed = True  # the first query after starting does a full stat pass
        self._lock = threading.Lock()
        self._stop_event = threading.Event()

    def run(self) -> None:
        from watchfiles import watch

        try:
            for _changes in watch(self.directory, stop_event=self._stop_event, debounce=1, step=1,
                                  recursive=self.recursive, yield_on_timeout=True,
                                  rust_timeout=200):
                with self._lock:
                    self._changed = self._changed or bool(_changes)
                    self.ready = True
                    listeners = list(self._listeners) if _changes else []
                for listener in listeners:
                    listener()
        except Exception:  # the watcher is an optimisation: without it, queries stat again
            pass
        self.ready = False

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (on the watcher's thread; keep it quick) after each change
        batch: one watcher can keep several things fresh (the index, a live audit)."""
        with self._lock:
            self._listeners.append(listener)

    def mark_changed(self) -> None:
        with self._lock:
            self._changed = True

    def take_changes(self) -> bool:
        with self._lock:
            changed, self._changed = self._changed, False
        return changed

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=2)
