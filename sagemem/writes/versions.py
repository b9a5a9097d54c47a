"""Kept versions: ``<state>/versions/<sha256>``, a copy of the bytes each sagemem write
replaced, so one bad rewrite can be undone (``sagemem revert``) without a recent
snapshot.

They belong to the snapshots' world, not a second hidden history: a kept version is
named by its revision (its sha256, as a snapshot manifest names each copy), is checked
against that name whenever it is read (a copy that no longer matches is never used),
holds plain bytes (mode 0600, never executed or parsed as anything but a memory's
text), and ``sagemem show NAME --history`` lists it beside the snapshots' copies. Being
named by content, a version kept twice is one file. The store is bounded — at most
MAX_VERSIONS files and about MAX_VERSIONS_BYTES (checked every sixteenth version, so it
can be passed by a few copies in between) — and the oldest (by when each was last
kept) go first. Copies are not fsync'd: after a power cut the worst is a copy that fails its
check, never a wrong one.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..files.atomic import remove_quietly, temp_name

VERSIONS_DIR = "versions"
MAX_VERSIONS = 200
"""Two hundred rewrites back: an agent's bad session is rarely further; with the
byte bound below, a folder of large memories keeps fewer."""
MAX_VERSIONS_BYTES = 32 * 1024 * 1024
_REVISION = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class KeptVersion:
    """One kept copy: its revision, size and when it was last kept (a POSIX time)."""

    revision: str
    size: int
    kept_at: float


def versions_dir(state_dir: Path) -> Path:
    return state_dir / VERSIONS_DIR


def keep(state_dir: Path, data: bytes) -> str | None:
    """Keep ``data`` (bytes a write is replacing); None when kept, else a warning — the
    write goes ahead either way. The caller holds the store lock."""
    revision = hashlib.sha256(data).hexdigest()
    folder = versions_dir(state_dir)
    path = folder / revision
    try:
        if os.path.islink(folder):
            return f"{folder} is a symlink; versions are not kept there"
        folder.mkdir(mode=0o700, exist_ok=True)
        if os.path.lexists(path):
            os.utime(path, follow_symlinks=False)  # kept again: it is young again
        else:
            _write(path, data)
        _prune_now_and_then(state_dir, revision)
    except OSError as exc:
        return f"the version replaced could not be kept in {folder} ({exc.strerror or exc})"
    return None


def _write(path: Path, data: bytes) -> None:
    """A temporary file renamed into place: a reader never sees half a copy."""
    tmp = path.with_name(temp_name(path.name))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    finally:
        remove_quietly(tmp)


def _prune_now_and_then(state_dir: Path, revision: str) -> None:
    """Prune once the count passes MAX_VERSIONS (down by a tenth, so the next prunes
    are writes away) and, for the byte bound, at one kept version in 16 (by its
    revision, so deterministic): a full pass stats every copy, and doing it on every
    write cost 0.7 ms of a 2.7 ms guarded write (benchmarks/bench_writes.py)."""
    count = len(os.listdir(versions_dir(state_dir)))
    if count > MAX_VERSIONS:
        prune(state_dir, max_count=MAX_VERSIONS - MAX_VERSIONS // 10)
    elif revision.endswith("0"):
        prune(state_dir)


def kept(state_dir: Path) -> dict[str, KeptVersion]:
    """Every kept version by revision (unchecked: ``load`` checks the one it reads)."""
    found: dict[str, KeptVersion] = {}
    try:
        with os.scandir(versions_dir(state_dir)) as entries:
            for e in entries:
                if _REVISION.fullmatch(e.name) and e.is_file(follow_symlinks=False):
                    info = e.stat(follow_symlinks=False)
                    found[e.name] = KeptVersion(e.name, info.st_size, info.st_mtime)
    except OSError:
        return {}
    return found


def load(state_dir: Path, revision: str) -> bytes | None:
    """The kept bytes of ``revision``, or None when none are kept or they no longer
    hash to it (damaged: never used)."""
    from ..errors import SagememError
    from ..files.paths import read_regular

    if not _REVISION.fullmatch(revision):
        return None
    try:
        data = read_regular(versions_dir(state_dir) / revision, MAX_VERSIONS_BYTES).data
    except SagememError:
        return None
    return data if hashlib.sha256(data).hexdigest() == revision else None


def prune(state_dir: Path, *, max_count: int = MAX_VERSIONS,
          max_bytes: int = MAX_VERSIONS_BYTES) -> list[str]:
    """Drop the oldest kept versions beyond the bounds; the revisions dropped."""
    ordered = sorted(kept(state_dir).values(), key=lambda v: v.kept_at, reverse=True)
    total, dropped = 0, []
    for number, version in enumerate(ordered):
        total += version.size
        if number >= max_count or total > max_bytes:
            remove_quietly(versions_dir(state_dir) / version.revision)
            dropped.append(version.revision)
    return dropped


def forget(state_dir: Path, revision: str) -> bool:
    """Remove the kept copy of ``revision`` (True if there was one): a writer that took
    a secret out of a memory must not leave it behind here."""
    path = versions_dir(state_dir) / revision
    if not _REVISION.fullmatch(revision) or not os.path.lexists(path):
        return False
    remove_quietly(path)
    return True
