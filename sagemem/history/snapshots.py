"""Snapshots: a copy of every top-level memory file and MEMORY.md, to roll back to.

A snapshot is ``<state>/snapshots/<id>/``: the files, byte for byte, beside a
``manifest.json`` naming each with its size and sha256. Ids are UTC times
(``20261130T033512.123456Z``), so they sort by time. A snapshot is written into
``.<id>.partial``, every copy is read back and checked against what was read, and only
then renamed into place: a crash never leaves a half snapshot that looks whole. Files
are copied, not hard-linked — an editor saving in place would change a linked copy —
and copied whole whatever their size, in chunks: a snapshot's purpose is exact bytes,
and a rollback's protection snapshot must hold every file the rollback replaces.

A snapshot whose files no longer match its manifest is *damaged*: it is reported, and
never used to restore (``SnapshotDamaged``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..config import JSON_VERSION
from ..errors import (
    FileChangedDuringRead,
    InvalidName,
    MemoryNotFound,
    SagememError,
    SnapshotDamaged,
    SnapshotNotFound,
    UnreadableFile,
    UnsafeFile,
    WriteFailed,
)
from ..files.atomic import make_folder, remove_quietly, sync_directory, write_new
from ..files.paths import INDEX_FILE, check_name, file_sha256, name_key, read_chunks, read_regular
from ..store import MemoryStore
from .githead import GitHead, git_head

SNAPSHOTS_DIR = "snapshots"
MANIFEST_FILE = "manifest.json"
PARTIAL_SUFFIX = ".partial"
KINDS = ("manual", "auto", "protection")
"""``auto``: made by another operation (``audit --fix``), rotated like ``manual``;
``protection``: taken before a rollback, outside the rotation."""
ROTATED_KINDS = ("manual", "auto")
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
_ID = re.compile(r"\d{8}T\d{6}\.\d{6}Z")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SnapshotFile:
    """One file as the snapshot holds it."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SkippedFile:
    """A file that was not copied (a symlink, a device, unreadable), and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """A snapshot as its manifest describes it."""

    id: str
    created: datetime
    kind: str
    label: str | None
    reason: str | None
    run_id: str | None
    git: GitHead | None
    files: tuple[SnapshotFile, ...]
    skipped: tuple[SkippedFile, ...]
    path: Path
    rotated: tuple[str, ...] = ()
    """Only on the value ``create_snapshot`` returns: the older snapshots its rotation
    removed (rotation deletes, so callers must be able to say which)."""

    def file(self, name: str) -> SnapshotFile | None:
        """The entry for ``name``, compared ignoring case and Unicode form."""
        key = name_key(name)
        return next((f for f in self.files if name_key(f.name) == key), None)


@dataclass(frozen=True)
class SnapshotListing:
    """Every readable snapshot, oldest first, and the ids whose manifest is unreadable."""

    snapshots: tuple[Snapshot, ...]
    unreadable: tuple[str, ...]


def snapshots_folder(store: MemoryStore) -> Path:
    folder = store.state_dir / SNAPSHOTS_DIR
    if os.path.islink(folder):
        raise UnsafeFile(folder, "it is a symlink; sagemem never follows links")
    return folder


# -- creating ------------------------------------------------------------------------------

def create_snapshot(store: MemoryStore, *, label: str | None = None, kind: str = "manual",
                    reason: str | None = None, run_id: str | None = None,
                    keep: int = 20, progress: Progress | None = None,
                    now: datetime | None = None) -> Snapshot:
    """Snapshot the memory directory now, then rotate: the newest ``keep`` manual and
    auto snapshots stay (never the one just made; protection ones are not counted).

    Takes the store lock, so no sagemem write lands half-way through; do not call it
    while holding ``store.locked()`` (the lock is not re-entrant — use
    ``write_snapshot`` there).
    """
    store.require_directory()
    with store.locked():
        snapshot = write_snapshot(store, label=label, kind=kind, reason=reason, run_id=run_id,
                                  progress=progress, now=now)
        if kind in ROTATED_KINDS:
            rotated = rotate_snapshots(store, keep, spare=snapshot.id)
            snapshot = dataclasses.replace(snapshot, rotated=rotated)
    return snapshot


def write_snapshot(store: MemoryStore, *, label: str | None = None, kind: str = "manual",
                   reason: str | None = None, run_id: str | None = None,
                   progress: Progress | None = None, now: datetime | None = None) -> Snapshot:
    """Write a snapshot without rotating; the caller holds ``store.locked()``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    folder = snapshots_folder(store)
    make_folder(folder)
    _remove_partials(folder)
    created = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    snapshot_id, created = _free_id(folder, created)
    partial = folder / f".{snapshot_id}{PARTIAL_SUFFIX}"
    try:
        make_folder(partial)
        files, skipped = _copy_files(store, partial, progress)
        _verify_copies(partial, files)
        manifest = {"version": 1, "id": snapshot_id, "created": created.isoformat(),
                    "kind": kind, "label": label, "reason": reason, "run_id": run_id,
                    "git": _git_json(git_head(store.directory)),
                    "files": [vars(f) for f in files], "skipped": [vars(s) for s in skipped]}
        write_new(partial / MANIFEST_FILE,
                  (json.dumps(manifest, ensure_ascii=False).encode("utf-8"),))
        _flush_to_disk(partial)
        os.rename(partial, folder / snapshot_id)
        sync_directory(folder)
    except OSError as exc:
        raise WriteFailed(partial, exc.strerror or str(exc)) from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return _from_manifest(manifest, folder / snapshot_id)


def memory_file_names(store: MemoryStore) -> list[str]:
    """What a snapshot holds: the top-level memory files and MEMORY.md, as spelt on disk.
    A file whose name the store refuses (a control character, bytes that are not UTF-8)
    is no memory: it is neither copied nor ever touched by a rollback (the audit reports
    it as unreadable)."""
    names = [n for n in store.files() if _acceptable(n)]
    index = store.existing_name(INDEX_FILE)
    return [*names, index] if index is not None else names


def _acceptable(name: str) -> bool:
    try:
        check_name(name)
        name.encode("utf-8")
    except (InvalidName, UnicodeEncodeError):
        return False
    return True


def _copy_files(store: MemoryStore, into: Path, progress: Progress | None
                ) -> tuple[list[SnapshotFile], list[SkippedFile]]:
    """Copy through the safe read path, any size: a symlink or a device is skipped,
    named in the manifest, and left alone by a rollback to this snapshot."""
    names = memory_file_names(store)
    files: list[SnapshotFile] = []
    skipped: list[SkippedFile] = []
    for done, name in enumerate(names, start=1):
        try:
            files.append(_copy_file(store.directory / name, into / name))
        except (MemoryNotFound, FileChangedDuringRead):
            remove_quietly(into / name)
            continue  # gone or being replaced by an editor right now: not part of "now"
        except SagememError as exc:
            remove_quietly(into / name)
            skipped.append(SkippedFile(name, str(exc)))
            continue
        if progress is not None:
            progress(done, len(names))
    return files, skipped


def _copy_file(source: Path, target: Path) -> SnapshotFile:
    """Copy in chunks (bounded memory), hashing what was read."""
    digest = hashlib.sha256()
    size = 0

    def chunks() -> Iterator[bytes]:
        nonlocal size
        for chunk in read_chunks(source):
            digest.update(chunk)
            size += len(chunk)
            yield chunk

    write_new(target, chunks(), sync=not hasattr(os, "sync"))
    return SnapshotFile(source.name, size, digest.hexdigest())


def _verify_copies(partial: Path, files: list[SnapshotFile]) -> None:
    damaged = _damaged(partial, files)
    if damaged:
        raise WriteFailed(partial / damaged[0], "the copy read back differs from the "
                                                "original; the snapshot was not kept")


def _flush_to_disk(partial: Path) -> None:
    """Make the copies durable before the rename that makes the snapshot whole.

    One ``os.sync()`` instead of a fsync per file: on ext4 each fsync is a journal
    commit, and 10,000 of them took 8.6 s where one sync took 0.3 s (see
    benchmarks/bench_snapshot.py). Without ``os.sync`` each file was fsync'd as written.
    """
    if hasattr(os, "sync"):
        os.sync()
    sync_directory(partial)


def _remove_partials(folder: Path) -> None:
    """What an interrupted create left behind (we hold the lock: none is in progress).
    Best effort: a leftover that cannot be removed is still never listed."""
    try:
        with os.scandir(folder) as entries:
            leftovers = [e for e in entries
                         if e.name.startswith(".") and e.name.endswith(PARTIAL_SUFFIX)]
    except OSError:
        return
    for entry in leftovers:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            remove_quietly(Path(entry.path))


def _free_id(folder: Path, created: datetime) -> tuple[str, datetime]:
    """An id no snapshot has: two in the same microsecond take the next one."""
    while True:
        snapshot_id = created.strftime("%Y%m%dT%H%M%S.%fZ")
        if not os.path.lexists(folder / snapshot_id):
            return snapshot_id, created
        created += timedelta(microseconds=1)


def _git_json(head: GitHead | None) -> dict[str, str | None] | None:
    return None if head is None else {"head": head.commit, "ref": head.ref}


# -- reading -------------------------------------------------------------------------------

def list_snapshots(store: MemoryStore) -> SnapshotListing:
    """Every snapshot, oldest first; a leftover ``.partial`` is not one."""
    snapshots: list[Snapshot] = []
    unreadable: list[str] = []
    for snapshot_id in _snapshot_ids(store):
        try:
            snapshots.append(_load(snapshots_folder(store) / snapshot_id, snapshot_id))
        except SnapshotDamaged:
            unreadable.append(snapshot_id)
    return SnapshotListing(tuple(snapshots), tuple(unreadable))


def load_snapshot(store: MemoryStore, snapshot_id: str) -> Snapshot:
    """The snapshot with this id, or with the one id that starts with it."""
    ids = _snapshot_ids(store)
    matches = [snapshot_id] if snapshot_id in ids else [i for i in ids
                                                          if i.startswith(snapshot_id)]
    if len(matches) != 1 or not snapshot_id:
        shown = snapshot_id if len(matches) < 2 else \
            f"{snapshot_id!r} alone (it starts {len(matches)} ids; give more of it)"
        raise SnapshotNotFound(shown, snapshots_folder(store))
    return _load(snapshots_folder(store) / matches[0], matches[0])


def _snapshot_ids(store: MemoryStore) -> list[str]:
    try:
        with os.scandir(snapshots_folder(store)) as entries:
            return sorted(e.name for e in entries
                          if _ID.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UnreadableFile(snapshots_folder(store), exc.strerror or str(exc)) from exc


def _load(path: Path, snapshot_id: str) -> Snapshot:
    try:
        raw = read_regular(path / MANIFEST_FILE, MAX_MANIFEST_BYTES).data
        manifest = json.loads(raw.decode("utf-8"))
        snapshot = _from_manifest(manifest, path)
    except (SagememError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        # InvalidName (a SagememError) too: a manifest naming ../x.md is never used
        raise SnapshotDamaged(snapshot_id, [MANIFEST_FILE],
                              f"its {MANIFEST_FILE} cannot be read: {_unreadable(exc)}") from exc
    if snapshot.id != snapshot_id:
        raise SnapshotDamaged(snapshot_id, [MANIFEST_FILE],
                              f"its {MANIFEST_FILE} names another snapshot, {snapshot.id}")
    return snapshot


def _unreadable(exc: Exception) -> str:
    """Why a manifest could not be read, in words: "no longer matches its manifest" said
    nothing true about a manifest that is itself broken."""
    if isinstance(exc, MemoryNotFound):
        return "it is missing"
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return f"it is not valid JSON at line {exc.lineno} ({exc.msg})"
    if isinstance(exc, KeyError):
        return f"it has no {exc.args[0]!r} field"
    return str(exc) or type(exc).__name__


def _from_manifest(manifest: dict[str, Any], path: Path) -> Snapshot:
    git = manifest.get("git")
    files = tuple(SnapshotFile(_plain_name(f["name"]), int(f["size"]), str(f["sha256"]))
                  for f in manifest["files"])
    if len({f.name for f in files}) != len(files):
        raise ValueError("a file is named twice")
    return Snapshot(
        id=str(manifest["id"]), created=datetime.fromisoformat(manifest["created"]),
        kind=str(manifest["kind"]), label=manifest.get("label"), reason=manifest.get("reason"),
        run_id=manifest.get("run_id"),
        git=GitHead(git.get("head"), git.get("ref")) if isinstance(git, dict) else None,
        files=files,
        skipped=tuple(SkippedFile(_plain_name(s["name"]), str(s["reason"]))
                      for s in manifest.get("skipped", [])),
        path=path)


def _plain_name(name: object) -> str:
    """A manifest name must be what a snapshot can hold — a top-level ``.md`` file or
    MEMORY.md — never ``../x.md`` or an absolute path: a rollback writes to it."""
    if not isinstance(name, str):
        raise TypeError("a file name must be a string")
    return check_name(name)


def read_copy(snapshot: Snapshot, entry: SnapshotFile) -> bytes | None:
    """The snapshot's bytes of one file, or None when they no longer match the manifest."""
    try:
        data = read_regular(snapshot.path / entry.name, entry.size).data
    except SagememError:
        return None
    return data if hashlib.sha256(data).hexdigest() == entry.sha256 else None


def damaged_files(snapshot: Snapshot) -> tuple[str, ...]:
    """The files of ``snapshot`` that are missing or no longer match its manifest."""
    return tuple(_damaged(snapshot.path, list(snapshot.files)))


def verify_snapshot(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` itself if every file matches its manifest, else SnapshotDamaged."""
    damaged = damaged_files(snapshot)
    if damaged:
        raise SnapshotDamaged(snapshot.id, list(damaged))
    return snapshot


def _damaged(folder: Path, files: list[SnapshotFile]) -> list[str]:
    return [entry.name for entry in files if not _matches(folder / entry.name, entry)]


def _matches(path: Path, entry: SnapshotFile) -> bool:
    """Whether the copy at ``path`` is exactly ``entry``: hashed in chunks, any size."""
    try:
        return os.lstat(path).st_size == entry.size and file_sha256(path) == entry.sha256
    except (OSError, SagememError):
        return False


# -- rotation ------------------------------------------------------------------------------

def rotate_snapshots(store: MemoryStore, keep: int, *, spare: str | None = None
                     ) -> tuple[str, ...]:
    """Remove the oldest manual/auto snapshots beyond the newest ``keep``; protection
    snapshots, unreadable ones and ``spare`` are never removed. The caller holds the lock."""
    doomed = rotation_victims(store, max(keep, 1), spare=spare)
    for snapshot_id in doomed:
        shutil.rmtree(snapshots_folder(store) / snapshot_id, ignore_errors=True)
    return tuple(doomed)


def rotation_victims(store: MemoryStore, keep: int, *, spare: str | None = None
                     ) -> tuple[str, ...]:
    """The ids ``rotate_snapshots`` would remove, oldest first."""
    rotated = [s.id for s in list_snapshots(store).snapshots if s.kind in ROTATED_KINDS]
    return tuple(i for i in rotated[:max(0, len(rotated) - max(keep, 0))] if i != spare)


def snapshot_json(snapshot: Snapshot, *, files: bool = False) -> dict[str, Any]:
    """The stable JSON shape of a snapshot (``files`` adds each file and the skipped)."""
    data: dict[str, Any] = {
        "version": JSON_VERSION,
        "id": snapshot.id, "created": snapshot.created.isoformat(), "kind": snapshot.kind,
        "label": snapshot.label, "reason": snapshot.reason, "run_id": snapshot.run_id,
        "git": _git_json(snapshot.git), "file_count": len(snapshot.files),
        "bytes": sum(f.size for f in snapshot.files)}
    if files:
        data["files"] = [vars(f) for f in snapshot.files]
        data["skipped"] = [vars(s) for s in snapshot.skipped]
    return data
