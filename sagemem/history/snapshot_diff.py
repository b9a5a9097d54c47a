"""What differs between a snapshot and the memory directory now: changed, added since,
removed since — and the unified diff of each.

Current files are compared by sha256, hashed in chunks, so a file grown past the size
limit since is still compared (and restored) rather than refused. A file that is now a
symlink or a device is *unreadable*: neither compared nor ever replaced.

Files are paired by their exact name. A snapshot file and a current file whose names
differ only in case or Unicode form (``Project_A.md``, ``project_a.md``) are
*ambiguous*: the same file renamed, or two files? A rollback never guesses — it would
overwrite one file with another's bytes — and leaves both alone.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass

from ..errors import (
    MemoryNotFound,
    SagememError,
    SnapshotDamaged,
)
from ..files.paths import INDEX_FILE, check_name, file_sha256, name_key, read_regular, with_suffix
from ..store import MemoryStore
from .snapshots import SkippedFile, Snapshot, SnapshotFile, memory_file_names, read_copy


@dataclass(frozen=True)
class CurrentFile:
    """A file of the memory directory now: its sha256, or the problem that hides it."""

    name: str
    sha256: str | None
    problem: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Names as spelt on disk now (or in the snapshot, for removed files)."""

    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: int
    unreadable: tuple[SkippedFile, ...]
    ambiguous: tuple[str, ...] = ()

    @property
    def differs(self) -> tuple[str, ...]:
        return tuple(sorted((*self.changed, *self.added, *self.removed), key=name_key))


@dataclass(frozen=True)
class Pairing:
    """The snapshot's files matched with the current files by exact name."""

    pairs: tuple[tuple[SnapshotFile, CurrentFile | None], ...]  # None: removed since
    added: tuple[CurrentFile, ...]
    ambiguous: tuple[str, ...]  # snapshot or current names with a different-spelling twin


def current_files(store: MemoryStore) -> dict[str, CurrentFile]:
    """Every file a snapshot would hold, now, keyed by its exact name."""
    found: dict[str, CurrentFile] = {}
    for name in memory_file_names(store):
        try:
            found[name] = CurrentFile(name, file_sha256(store.directory / name))
        except MemoryNotFound:
            continue  # removed while we listed: it is not part of "now"
        except SagememError as exc:
            found[name] = CurrentFile(name, None, str(exc))
    return found


def pair(snapshot: Snapshot, now: dict[str, CurrentFile]) -> Pairing:
    """Match by exact name. What is left unmatched on both sides under one ``name_key``
    (a case or Unicode-form spelling of each other) is ambiguous, never matched."""
    in_snapshot = {f.name for f in snapshot.files}
    lost = [f for f in snapshot.files if f.name not in now]
    new = [c for n, c in now.items() if n not in in_snapshot]
    twins = {name_key(f.name) for f in lost} & {name_key(c.name) for c in new}
    pairs = [(f, now.get(f.name)) for f in snapshot.files if name_key(f.name) not in twins
             or f.name in now]
    ambiguous = [f.name for f in lost if name_key(f.name) in twins]
    ambiguous += [c.name for c in new if name_key(c.name) in twins]
    added = tuple(c for c in new if name_key(c.name) not in twins)
    return Pairing(tuple(pairs), added, tuple(sorted(ambiguous, key=name_key)))


def compare(store: MemoryStore, snapshot: Snapshot,
            now: dict[str, CurrentFile] | None = None) -> Comparison:
    """What differs between ``snapshot`` and the directory now."""
    paired = pair(snapshot, current_files(store) if now is None else now)
    changed, removed, unchanged = [], [], 0
    for entry, current in paired.pairs:
        if current is None:
            removed.append(entry.name)
        elif current.sha256 is not None and current.sha256 != entry.sha256:
            changed.append(current.name)
        elif current.sha256 is not None:
            unchanged += 1
    added = [c.name for c in paired.added if c.problem is None]
    unreadable = [SkippedFile(c.name, c.problem) for c in (*(c for _, c in paired.pairs if c),
                                                           *paired.added) if c.problem]
    return Comparison(tuple(sorted(changed, key=name_key)), tuple(sorted(added, key=name_key)),
                      tuple(sorted(removed, key=name_key)), unchanged, tuple(unreadable),
                      paired.ambiguous)


def snapshot_diff(store: MemoryStore, snapshot: Snapshot, name: str | None = None) -> str:
    """A unified diff from the snapshot to now, of every file that differs (ambiguous ones
    too) or of ``name`` alone (empty when it is the same); bytes that are not UTF-8 are
    shown replaced. ``name`` must be a memory's file name or MEMORY.md (InvalidName)."""
    by_name = {f.name: f for f in snapshot.files}  # one dict, not a scan per name
    if name is None:
        comparison = compare(store, snapshot)
        names = sorted((*comparison.differs, *comparison.ambiguous), key=name_key)
    else:
        names = [_one_name(store, by_name, name)]
    return "".join(_file_diff(store, snapshot, n, by_name.get(n)) for n in names)


def _one_name(store: MemoryStore, by_name: dict[str, SnapshotFile], name: str) -> str:
    """The exact name ``name`` denotes in the snapshot or on disk. It is checked first:
    ``../outside`` must not read a file outside the memory directory."""
    name = check_name(with_suffix(name), store.reserved - {name_key(INDEX_FILE)})
    if name in by_name or os.path.lexists(store.directory / name):
        return name
    key = name_key(name)
    in_snapshot = next((n for n in by_name if name_key(n) == key), None)
    on_disk = in_snapshot or store.existing_name(name)
    if on_disk is None:
        raise MemoryNotFound(name, store.directory)
    return on_disk


def _file_diff(store: MemoryStore, snapshot: Snapshot, name: str,
               entry: SnapshotFile | None) -> str:
    old = b""
    if entry is not None:
        copy = read_copy(snapshot, entry)
        if copy is None:
            raise SnapshotDamaged(snapshot.id, [entry.name])
        old = copy
    exists = os.path.lexists(store.directory / name)
    new = _current_bytes(store, name) if exists else b""
    return "".join(difflib.unified_diff(
        _lines(old), _lines(new),
        fromfile=f"snapshot/{snapshot.id}/{name}" if entry else "/dev/null",
        tofile=f"now/{name}" if exists else "/dev/null"))


def _current_bytes(store: MemoryStore, name: str) -> bytes:
    try:
        return read_regular(store.directory / name, store.max_bytes).data
    except SagememError as exc:
        return f"[cannot show the current file: {exc}]\n".encode()


def _lines(data: bytes) -> list[str]:
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
