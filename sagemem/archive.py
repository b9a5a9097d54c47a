"""The archive: ``archive/`` inside the memory directory, where memories go instead of
being deleted.

Moving never overwrites: a memory whose name is already taken at the destination is
skipped (and reported by the caller), because the file already there may be the only
copy of something.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .errors import SettingsError, UnsafeFile, WriteFailed
from .paths import lstat_regular, name_key, read_state_file
from .store import MemoryStore

LOCKS_FILE = "locked.json"
"""``<state>/locked.json``: ``{"version": 1, "locked": {"<file>.md": {"since": ISO-8601}}}``.
Locks live in the state directory, not in frontmatter, so no rewrite can drop them."""


def locked_names(store: MemoryStore) -> frozenset[str]:
    """The locked memories, as name keys (compare with ``paths.name_key(file)``)."""
    return frozenset(name_key(name) for name in read_locks(store))


def read_locks(store: MemoryStore) -> dict[str, dict[str, object]]:
    """Every lock by file name; a missing file means no locks, a malformed one is an error
    (silently unlocking everything would let a locked memory be archived)."""
    path = store.state_dir / LOCKS_FILE
    raw = read_state_file(path)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8-sig") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(path, f"not valid JSON ({exc})") from exc
    locked = data.get("locked", {}) if isinstance(data, dict) else None
    if not isinstance(locked, dict):
        raise SettingsError(path, 'must hold {"locked": {"<file>.md": {...}}}')
    return {str(k): v if isinstance(v, dict) else {} for k, v in locked.items()}


def move_file(store: MemoryStore, file: str, *, into_archive: bool) -> bool:
    """Move ``file`` (its on-disk spelling) into ``archive/`` or back out of it.

    Returns False, moving nothing, when the destination already holds that name
    (compared ignoring case and Unicode form). The caller holds ``store.locked()``.
    """
    source_dir = store.folder(archived=not into_archive)
    target_dir = store.folder(archived=into_archive)
    source = source_dir / file
    lstat_regular(source)  # never move a symlink or a device
    if into_archive:
        _ensure_folder(target_dir)
    if _taken(target_dir, file):
        return False
    target = target_dir / file
    try:
        _move_without_overwrite(source, target)
    except FileExistsError:
        return False
    except OSError as exc:
        raise WriteFailed(target, exc.strerror or str(exc)) from exc
    return True


def _taken(folder: Path, file: str) -> bool:
    key = name_key(file)
    try:
        with os.scandir(folder) as entries:
            return any(name_key(e.name) == key for e in entries)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise WriteFailed(folder, exc.strerror or str(exc)) from exc


def _ensure_folder(folder: Path) -> None:
    if os.path.islink(folder):
        raise UnsafeFile(folder, "it is a symlink; sagemem never follows links")
    try:
        folder.mkdir(exist_ok=True)
    except FileExistsError:
        raise WriteFailed(folder, "exists and is not a directory") from None
    except OSError as exc:
        raise WriteFailed(folder, exc.strerror or str(exc)) from exc


def _move_without_overwrite(source: Path, target: Path) -> None:
    """A hard link then an unlink: the link fails if the name exists, where a rename
    would silently replace it. Without hard links, the store lock serialises us."""
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(str(target)) from None
        os.rename(source, target)
        return
    os.unlink(source)
