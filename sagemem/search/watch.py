"""Following a memory directory with watchfiles, for long-lived processes.

A query normally stats every file to notice edits; a process that stays up (an MCP
server, a benchmark's store) starts a watcher instead, and a query with nothing changed
then skips the stat pass. A change is seen as soon as the OS reports it — typically
within milliseconds; until the watcher is ready, queries stat as usual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
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
        self._names: set[str] | None = None  # what changed, by name; None: anything may have
        self._lock = threading.Lock()
        self._stop_event = threading.Event()

    def run(self) -> None:
        from watchfiles import watch

        try:
            for _changes in watch(self.directory, stop_event=self._stop_event, debounce=1, step=1,
                                  recursive=self.recursive, yield_on_timeout=True,
                                  rust_timeout=200):
                with self._lock:
                    self._note(_changes)
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

    def _note(self, changes: Iterable[tuple[object, str]]) -> None:
        """Remember a batch of changes (the caller holds the lock): the names of files right
        in the directory, or "anything" for an event elsewhere (a subfolder, the folder)."""
        if not changes:
            return
        if not self._changed:
            self._changed, self._names = True, set()
        for _, path in changes:
            where = Path(path)
            if self._names is not None and where.parent == self.directory:
                self._names.add(where.name)
            else:
                self._names = None

    def mark_changed(self) -> None:
        """Anything may have changed (our own write, a restart): the next look is whole."""
        with self._lock:
            self._changed, self._names = True, None

    def take_changes(self) -> bool:
        return self.take_changed_names() != frozenset()

    def take_changed_names(self) -> frozenset[str] | None:
        """What changed since last asked: an empty set for nothing, the names of the files
        that changed, or None when anything may have (then look at every file)."""
        with self._lock:
            changed, names = self._changed, self._names
            self._changed, self._names = False, None
        if not changed:
            return frozenset()
        return frozenset(names) if names is not None else None

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=2)
