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
from ..files.controls import visible_name
from ..files.ids import resolve_id
from ..files.paths import INDEX_FILE, check_name, read_chunks
from ..store import MemoryStore
from .githead import git_head
from .manifest import MANIFEST_FILE as MANIFEST_FILE
from .manifest import SkippedFile as SkippedFile
from .manifest import Snapshot as Snapshot
from .manifest import SnapshotFile as SnapshotFile
from .manifest import check_taken_of as check_taken_of
from .manifest import damaged_copies, from_manifest, git_json, load_manifest
from .manifest import damaged_files as damaged_files
from .manifest import read_copy as read_copy
from .manifest import snapshot_json as snapshot_json
from .manifest import verify_snapshot as verify_snapshot

SNAPSHOTS_DIR = "snapshots"
PARTIAL_SUFFIX = ".partial"
KINDS = ("manual", "auto", "protection", "dream")
"""``auto``: made by another operation (``audit --fix``), rotated like ``manual``;
``protection``: taken before a rollback, outside the rotation; ``dream``: a
consolidation run's rollback point, bound to its run id, rotated by ``dream`` itself
(``dream_keep_runs``) so a run's undo never loses it to manual snapshots."""
ROTATED_KINDS = ("manual", "auto")
_ID = re.compile(r"\d{8}T\d{6}\.\d{6}Z")

Progress = Callable[[int, int], None]


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
    auto snapshots stay (never the one just made; protection ones are not counted);
    ``keep=0`` keeps them all, a negative ``keep`` is refused before anything is written.

    Takes the store lock, so no sagemem write lands half-way through; do not call it
    while holding ``store.locked()`` (the lock is not re-entrant — use
    ``write_snapshot`` there).
    """
    _check_keep(keep)
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
                    "folder": str(store.directory),
                    "git": git_json(git_head(store.directory)),
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
    return from_manifest(manifest, folder / snapshot_id)


def memory_file_names(store: MemoryStore) -> list[str]:
    """What a snapshot holds: the top-level memory files and MEMORY.md, as spelt on disk.
    A file whose name the store refuses (a control character, bytes that are not UTF-8)
    is no memory: it is neither copied nor ever touched by a rollback (``refused_names``
    reports it in the snapshot, the audit as unreadable)."""
    names = [n for n in store.files() if _acceptable(n)]
    index = store.existing_name(INDEX_FILE)
    return [*names, index] if index is not None else names


def _acceptable(name: str) -> bool:
    return _refusal(name) is None


def _refusal(name: str) -> str | None:
    """Why a listed name can be no memory, or None when it can be one."""
    try:
        check_name(name)
        name.encode("utf-8")
    except InvalidName as exc:
        return f"its name is refused ({exc.reason}); rename it to keep it"
    except UnicodeEncodeError:
        return "its name is not UTF-8; rename it to keep it"
    return None


def refused_names(store: MemoryStore) -> list[SkippedFile]:
    """The listed files a snapshot leaves out for their names, each shown on one line
    with its control characters made visible (``bad\\x1bname.md``): reported, not copied,
    so a name that hides itself in a terminal does not drop out of a snapshot silently."""
    return [SkippedFile(visible_name(name), reason) for name in store.files()
            if (reason := _refusal(name)) is not None]


def _copy_files(store: MemoryStore, into: Path, progress: Progress | None
                ) -> tuple[list[SnapshotFile], list[SkippedFile]]:
    """Copy through the safe read path, any size: a symlink, a device or a file whose name
    is refused is skipped, named in the manifest, and left alone by a rollback to this
    snapshot."""
    names = memory_file_names(store)
    files: list[SnapshotFile] = []
    skipped = refused_names(store)
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
    damaged = damaged_copies(partial, files)
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


# -- reading -------------------------------------------------------------------------------

def list_snapshots(store: MemoryStore) -> SnapshotListing:
    """Every snapshot, oldest first; a leftover ``.partial`` is not one."""
    snapshots: list[Snapshot] = []
    unreadable: list[str] = []
    for snapshot_id in _snapshot_ids(store):
        try:
            snapshots.append(load_manifest(snapshots_folder(store) / snapshot_id, snapshot_id))
        except SnapshotDamaged:
            unreadable.append(snapshot_id)
    return SnapshotListing(tuple(snapshots), tuple(unreadable))


def load_snapshot(store: MemoryStore, snapshot_id: str) -> Snapshot:
    """The snapshot with this id, or with the one id that starts with it."""
    where = snapshots_folder(store)
    found = resolve_id(snapshot_id, _snapshot_ids(store), SnapshotNotFound, where)
    return load_manifest(where / found, found)


def _snapshot_ids(store: MemoryStore) -> list[str]:
    try:
        with os.scandir(snapshots_folder(store)) as entries:
            return sorted(e.name for e in entries
                          if _ID.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UnreadableFile(snapshots_folder(store), exc.strerror or str(exc)) from exc


# -- rotation ------------------------------------------------------------------------------

def rotate_snapshots(store: MemoryStore, keep: int, *, spare: str | None = None,
                     kinds: tuple[str, ...] = ROTATED_KINDS) -> tuple[str, ...]:
    """Remove the oldest manual/auto snapshots beyond the newest ``keep`` (0: none);
    protection snapshots, unreadable ones and ``spare`` are never removed. The caller
    holds the lock."""
    doomed = rotation_victims(store, keep, spare=spare, kinds=kinds)
    for snapshot_id in doomed:
        shutil.rmtree(snapshots_folder(store) / snapshot_id, ignore_errors=True)
    return tuple(doomed)


def rotation_victims(store: MemoryStore, keep: int, *, spare: str | None = None,
                     one_more: bool = False,
                     kinds: tuple[str, ...] = ROTATED_KINDS) -> tuple[str, ...]:
    """The ids ``rotate_snapshots`` would remove, oldest first (``one_more``: once one
    more snapshot is made, for a dry run); none when ``keep`` is 0 (keep all). A negative
    ``keep`` is a ValueError: it must never mean "remove them"."""
    _check_keep(keep)
    if keep == 0:
        return ()
    rotated = [s.id for s in list_snapshots(store).snapshots if s.kind in kinds]
    room = keep - 1 if one_more else keep
    return tuple(i for i in rotated[:max(0, len(rotated) - room)] if i != spare)


def _check_keep(keep: int) -> None:
    # Clamping keep to 1 once rotated six manual snapshots away (SAGE_MEM_SNAPSHOT_KEEP=0)
    if keep < 0:
        raise ValueError(f"keep must be 0 (keep all) or more, not {keep}")


