"""One memory's past versions and going back to one: ``show NAME --history`` and
``revert NAME [--to REV]`` — undoing one bad rewrite without rolling back the folder.

A version is held where its exact bytes still are, checked by sha256 (sagemem's
revision) before use: a snapshot's copy (its manifest names each file's sha256) or a
kept version (``writes/versions.py``: the bytes each sagemem write replaced). Kept
versions are content-addressed, so the change log (``writes/changelog.py``) says which
belong to this memory: the revisions its lines replaced. A version an editor replaced
outside sagemem was never kept; a snapshot may still hold it.

``revert`` is a guarded write based on the revision read: a change meanwhile is refused
as a conflict (its record keeps both sides), never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..errors import SagememError, VersionNotHeld
from ..files.memory import Memory, decode
from ..files.paths import name_key
from ..files.revision import checked_revision
from ..store import MemoryStore
from ..writes import changelog, versions
from ..writes.guard import guarded_write
from .manifest import Snapshot, read_copy
from .snapshots import list_snapshots


@dataclass(frozen=True)
class Held:
    """A snapshot that holds a version: its id and when it was taken."""

    snapshot: str
    created: datetime


@dataclass(frozen=True)
class Version:
    """One version of a memory that can be restored. ``seen``: the latest time it is
    known to have been the file's content (now for the current one, a snapshot's time,
    the time a write replaced it); ``kept``: a kept copy holds it."""

    revision: str
    size: int
    seen: datetime
    current: bool
    kept: bool
    snapshots: tuple[Held, ...]


@dataclass(frozen=True)
class History:
    """A memory's file name and its held versions, newest first."""

    file: str
    versions: tuple[Version, ...]


@dataclass(frozen=True)
class Reverted:
    """What ``revert`` did: ``file`` went from ``before`` to ``after`` (the version
    chosen); ``changed`` is False when it already was that version."""

    file: str
    before: str
    after: str
    changed: bool
    memory: Memory


def versions_of(store: MemoryStore, name: str) -> History:
    """The versions of ``name`` that snapshots or kept copies hold, newest first; the
    current one (held or not) is among them, marked."""
    current = store.get(name)
    names, replaced = _names_and_replaced(store, current.file)
    found: dict[str, Version] = {current.revision: Version(
        current.revision, current.size, datetime.now(timezone.utc), True, False, ())}
    kept = versions.kept(store.state_dir)
    for revision, when in replaced.items():
        if revision in kept:
            found[revision] = _merge(found.get(revision), Version(
                revision, kept[revision].size, when, False, True, ()))
    for snapshot in list_snapshots(store).snapshots:
        for entry in snapshot.files:
            if name_key(entry.name) in names:
                found[entry.sha256] = _merge(found.get(entry.sha256), Version(
                    entry.sha256, entry.size, snapshot.created, False, False,
                    (Held(snapshot.id, snapshot.created),)))
    return History(current.file, tuple(sorted(found.values(), key=lambda v: (v.current, v.seen),
                                              reverse=True)))


def _names_and_replaced(store: MemoryStore, file: str
                        ) -> tuple[set[str], dict[str, datetime]]:
    """The names this memory had (following renames back) and, per revision a write of
    it replaced, when that happened last."""
    names = {name_key(file)}
    replaced: dict[str, datetime] = {}
    for item in changelog.read(store.state_dir).entries:  # newest first
        if item.to is not None and name_key(item.to) in names:
            names.add(name_key(item.file))
        if name_key(item.file) in names and item.before and item.before != item.after:
            replaced.setdefault(item.before, _when(item.time))
    return names, replaced


def _when(stamp: str) -> datetime:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)


def _merge(old: Version | None, new: Version) -> Version:
    """One version found in several places: every place, and its latest sighting."""
    if old is None:
        return new
    return Version(old.revision, old.size, max(old.seen, new.seen), old.current,
                   old.kept or new.kept, old.snapshots + new.snapshots)


def revert(store: MemoryStore, name: str, to: str | None = None, *,
           reason: str | None = None, writer: str = "library") -> Reverted:
    """Put ``name`` back to version ``to`` (a revision or its 8+ character prefix;
    default: the newest held version before the current one), byte for byte, as a
    guarded write based on the revision read now.

    Raises VersionNotHeld when no snapshot or kept copy holds it, a WriteRefused when
    the file changed meanwhile (recorded as a conflict) or the bytes hold merge markers.
    """
    memory = store.get(name)
    target = _chosen(versions_of(store, memory.file).versions, to, memory.file)
    if target.revision == memory.revision:
        return Reverted(memory.file, memory.revision, memory.revision, False, memory)
    text = decode(_bytes(store, target, memory.file), memory.file)
    written = guarded_write(store, memory.file, text, memory.revision, reason=reason,
                            writer=writer, op="revert")
    return Reverted(memory.file, memory.revision, written.revision, True, written)


def _chosen(held: tuple[Version, ...], to: str | None, file: str) -> Version:
    if to is None:
        earlier = [v for v in held if not v.current]
        if not earlier:
            raise VersionNotHeld(file, None)
        return earlier[0]
    wanted = checked_revision(to)
    matches = [v for v in held if v.revision.startswith(wanted)]
    if len(matches) != 1:
        raise VersionNotHeld(file, to)
    return matches[0]


def _bytes(store: MemoryStore, version: Version, file: str) -> bytes:
    """The version's exact bytes from a kept copy or a snapshot, checked by sha256."""
    data = versions.load(store.state_dir, version.revision) if version.kept else None
    snapshots = {s.id: s for s in list_snapshots(store).snapshots}
    for held in version.snapshots:
        if data is None and held.snapshot in snapshots:
            data = _snapshot_copy(snapshots[held.snapshot], version.revision)
    if data is None:
        raise VersionNotHeld(file, version.revision, "is held any more: its copies no "
                                                     "longer match it (damaged)")
    return data


def _snapshot_copy(snapshot: Snapshot, revision: str) -> bytes | None:
    entry = next((f for f in snapshot.files if f.sha256 == revision), None)
    try:
        return None if entry is None else read_copy(snapshot, entry)
    except SagememError:
        return None


def history_json(history: History) -> dict[str, object]:
    """The stable JSON shape of ``show NAME --history``."""
    from ..config import JSON_VERSION

    return {"version": JSON_VERSION, "file": history.file, "versions": [
        {"revision": v.revision, "size": v.size, "seen": v.seen.isoformat(),
         "current": v.current, "kept": v.kept,
         "snapshots": [{"id": h.snapshot, "created": h.created.isoformat()}
                       for h in v.snapshots]} for v in history.versions]}
