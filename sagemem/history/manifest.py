"""A snapshot as its manifest describes it: the values, reading a manifest back (a broken
one is ``SnapshotDamaged`` with the reason in words), checking the copies against it, and
the stable JSON shape.

``manifest.json`` names each file with its size and sha256; a name that is not a plain
top-level file (``../x.md``, an absolute path) makes the whole manifest unreadable, since
a rollback writes to the names it finds there.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import JSON_VERSION
from ..errors import MemoryNotFound, SagememError, SnapshotDamaged, WrongFolder
from ..files.paths import check_name, file_sha256, name_key, read_regular
from ..files.state import same_folder
from .githead import GitHead

MANIFEST_FILE = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024


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
    folder: Path | None = None
    """The memory folder it was taken of; None in a manifest from before it was kept."""

    def file(self, name: str) -> SnapshotFile | None:
        """The entry for ``name``, compared ignoring case and Unicode form."""
        key = name_key(name)
        return next((f for f in self.files if name_key(f.name) == key), None)


def load_manifest(path: Path, snapshot_id: str) -> Snapshot:
    """The snapshot in folder ``path`` as its manifest says; SnapshotDamaged saying why."""
    try:
        raw = read_regular(path / MANIFEST_FILE, MAX_MANIFEST_BYTES).data
        manifest = json.loads(raw.decode("utf-8"))
        snapshot = from_manifest(manifest, path)
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


def from_manifest(manifest: dict[str, Any], path: Path) -> Snapshot:
    """The Snapshot a parsed manifest describes; raises on any field it cannot trust."""
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
        skipped=tuple(SkippedFile(_reported_name(s["name"]), str(s["reason"]))
                      for s in manifest.get("skipped", [])),
        path=path, folder=_folder(manifest.get("folder")))


def _folder(value: object) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not os.path.isabs(value):
        raise ValueError("its folder must be an absolute path")
    return Path(value)


def check_taken_of(snapshot: Snapshot, directory: Path) -> Snapshot:
    """``snapshot`` itself if it was taken of the memory folder ``directory`` (or names
    none: older manifests), else WrongFolder naming both — a rollback to another
    folder's snapshot once copied work's files into personal."""
    if snapshot.folder is not None and not same_folder(snapshot.folder, directory):
        raise WrongFolder(snapshot.path, snapshot.folder, directory, snapshot=snapshot.id)
    return snapshot


def _reported_name(name: object) -> str:
    """A skipped file's name is only shown and compared, never written to; it may be a
    refused name made visible (``bad\\x1bname.md``), but never a path."""
    if not isinstance(name, str) or not name or "/" in name or "\x00" in name:
        raise ValueError("a skipped file's name must be a file name")
    return name


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
    return tuple(damaged_copies(snapshot.path, list(snapshot.files)))


def verify_snapshot(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` itself if every file matches its manifest, else SnapshotDamaged."""
    damaged = damaged_files(snapshot)
    if damaged:
        raise SnapshotDamaged(snapshot.id, list(damaged))
    return snapshot


def damaged_copies(folder: Path, files: list[SnapshotFile]) -> list[str]:
    return [entry.name for entry in files if not _matches(folder / entry.name, entry)]


def _matches(path: Path, entry: SnapshotFile) -> bool:
    """Whether the copy at ``path`` is exactly ``entry``: hashed in chunks, any size."""
    try:
        return os.lstat(path).st_size == entry.size and file_sha256(path) == entry.sha256
    except (OSError, SagememError):
        return False


def snapshot_json(snapshot: Snapshot, *, files: bool = False) -> dict[str, Any]:
    """The stable JSON shape of a snapshot (``files`` adds each file and the skipped)."""
    data: dict[str, Any] = {
        "version": JSON_VERSION,
        "id": snapshot.id, "created": snapshot.created.isoformat(), "kind": snapshot.kind,
        "label": snapshot.label, "reason": snapshot.reason, "run_id": snapshot.run_id,
        "git": git_json(snapshot.git), "file_count": len(snapshot.files),
        "folder": None if snapshot.folder is None else str(snapshot.folder),
        "bytes": sum(f.size for f in snapshot.files)}
    if files:
        data["files"] = [vars(f) for f in snapshot.files]
        data["skipped"] = [vars(s) for s in snapshot.skipped]
    return data


def git_json(head: GitHead | None) -> dict[str, str | None] | None:
    return None if head is None else {"head": head.commit, "ref": head.ref}
