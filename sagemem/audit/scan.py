"""Reading a memory folder once for the audit, and the Finding value the checks return.

``scan`` reads every file through the safe read path (symlinks refused, the size gate
before reading): a live memory, or the finding that says why a file is not one. With a
``ReadCache`` (``watch``), a file whose ``lstat`` did not change is not read again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    FileChangedDuringRead,
    FileTooLarge,
    InvalidName,
    MemoryNotFound,
    SagememError,
    UnreadableFile,
    UnsafeFile,
)
from ..files import indexfile
from ..files.atomic import TMP_SUFFIX
from ..files.memory import Memory
from ..files.paths import INDEX_FILE, name_key
from ..store import ARCHIVE_DIR, MemoryStore

PROBLEM = "problem"
HINT = "hint"


@dataclass(frozen=True)
class Finding:
    """One thing the audit found: where, what, and category-specific ``data``."""

    category: str
    severity: str
    file: str
    line: int | None
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, int, str]:
        """The deterministic sort (and diff) key: category, file, line, message."""
        return (self.category, self.file, self.line or 0, self.message)

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "severity": self.severity, "file": self.file,
                "line": self.line, "message": self.message, "data": dict(self.data)}


@dataclass(frozen=True)
class IndexRead:
    """MEMORY.md as the audit read it (``revision`` None: there is no MEMORY.md)."""

    text: str
    revision: str | None
    entries: tuple[indexfile.IndexEntry, ...]


@dataclass(frozen=True)
class Scan:
    """What one pass over the folder read; every check works from it, none reads again."""

    store: MemoryStore
    memories: tuple[Memory, ...]
    failed: tuple[Finding, ...]
    live: frozenset[str]
    archived: frozenset[str]
    index: IndexRead | None
    temporary: tuple[str, ...]
    reserved: frozenset[str]
    names: tuple[str, ...] = ()
    """Every top-level ``*.md`` name, as spelt on disk (memories or not)."""

    def exists(self, name: str) -> bool:
        """Whether a link or index line naming ``name`` points at a file: a live memory,
        or a reserved file (MEMORY.md, session-log.md, …) that is not a memory but is there."""
        key = name_key(name)
        return key in self.live or key in self.reserved


ReadCache = dict[str, tuple[tuple[int, int, int, int], "Memory | Finding"]]
"""file → (lstat identity, what reading it gave): lets ``watch`` re-read only what changed."""


def problem(category: str, file: str, line: int | None, message: str, **data: Any) -> Finding:
    return Finding(category, PROBLEM, file, line, message, data)


def hint(category: str, file: str, line: int | None, message: str, **data: Any) -> Finding:
    return Finding(category, HINT, file, line, message, data)


# -- reading ------------------------------------------------------------------------------

def scan(store: MemoryStore, cache: ReadCache | None = None) -> Scan:
    """Read the folder once: live memories (or why a file could not be read), the
    archive's names, MEMORY.md and leftover temporary files."""
    store.require_directory()
    names = store.files()
    results = [_read_cached(store, name, cache) for name in names]
    if cache is not None:
        for gone in cache.keys() - set(names):
            del cache[gone]
    index, index_failure = _read_index(store)
    archived_names, archive_failure = _archived_names(store)
    failed = [r for r in results if isinstance(r, Finding)]
    failed += [f for f in (index_failure, archive_failure) if f is not None]
    return Scan(store, tuple(r for r in results if isinstance(r, Memory)), tuple(failed),
                frozenset(name_key(n) for n in names), archived_names, index,
                tuple(_temporary_files(store)), _reserved_present(store), tuple(names))


def _read_cached(store: MemoryStore, name: str, cache: ReadCache | None) -> Memory | Finding:
    try:
        st = os.lstat(store.directory / name)
    except OSError as exc:
        return _unreadable(name, exc.strerror or str(exc))
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
    if cache is not None and name in cache and cache[name][0] == identity:
        return cache[name][1]
    result = _read_one(store, name, st)
    if cache is not None:
        cache[name] = (identity, result)
    return result


def _read_one(store: MemoryStore, name: str, st: os.stat_result) -> Memory | Finding:
    """A memory, or the finding that says why it is not one: too large (never read in),
    unreadable (permissions, not UTF-8, a symlink or device, a name the store refuses):
    one bad file must never end the audit of the others."""
    if stat.S_ISREG(st.st_mode) and st.st_size > store.max_bytes:
        return _too_large(name, st.st_size, store.max_bytes)
    for attempt in range(2):  # a file caught mid-save is read once more
        try:
            return store.get(name)
        except FileTooLarge as exc:
            return _too_large(name, exc.size, exc.limit)
        except FileChangedDuringRead:
            if attempt:
                return _unreadable(name, "it kept changing while being read")
        except (UnreadableFile, UnsafeFile) as exc:
            return _unreadable(name, exc.reason)
        except InvalidName as exc:  # a tab, a bidi override, a byte that is not UTF-8
            return _unreadable(name, f"bad file name: {exc.reason}")
        except MemoryNotFound:
            return _unreadable(name, "it vanished while being read")
    raise AssertionError("not reached")


def _too_large(name: str, size: int, limit: int) -> Finding:
    return problem("file_too_large", shown_name(name), None,
                   f"{size} bytes, over the {limit}-byte limit (not read)", size=size, limit=limit)


def _unreadable(name: str, reason: str) -> Finding:
    return problem("unreadable", shown_name(name), None, f"cannot be read: {reason}", reason=reason)


def shown_name(name: str) -> str:
    """A file name that can be printed: bytes that are not UTF-8 (kept by the OS as lone
    surrogates, which no encoder writes) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _read_index(store: MemoryStore) -> tuple[IndexRead | None, Finding | None]:
    try:
        text, revision = store.read_index()
    except FileTooLarge as exc:
        return None, _too_large(INDEX_FILE, exc.size, exc.limit)
    except (UnreadableFile, UnsafeFile) as exc:
        return None, _unreadable(INDEX_FILE, exc.reason)
    except SagememError as exc:
        return None, _unreadable(INDEX_FILE, str(exc))
    return IndexRead(text, revision, indexfile.entries(text)), None


def _archived_names(store: MemoryStore) -> tuple[frozenset[str], Finding | None]:
    try:
        return frozenset(name_key(n) for n in store.files(archived=True)), None
    except (UnreadableFile, UnsafeFile) as exc:
        return frozenset(), _unreadable(f"{ARCHIVE_DIR}/", exc.reason)


def _reserved_present(store: MemoryStore) -> frozenset[str]:
    """The reserved names (as keys) that exist in the folder: ``store.files()`` leaves them
    out, yet ``- [Log](session-log.md)`` or ``[[MEMORY]]`` points at a real file."""
    try:
        with os.scandir(store.directory) as entries:
            return frozenset(key for e in entries if (key := name_key(e.name)) in store.reserved)
    except OSError:
        return frozenset()


def _temporary_files(store: MemoryStore) -> list[str]:
    found = []
    for folder, prefix in ((store.directory, ""), (store.archive_dir, f"{ARCHIVE_DIR}/")):
        if prefix and os.path.islink(folder):
            continue
        try:
            with os.scandir(folder) as entries:
                found += [prefix + e.name for e in entries
                          if e.name.startswith(".") and e.name.endswith(TMP_SUFFIX)]
        except OSError:
            continue
    return sorted(found)
