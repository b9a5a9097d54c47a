"""Locks: memories that are never archived or purged, whoever asks.

They live in ``<state>/locked.json``, not in the memory's frontmatter: an automatic
rewrite (a guarded write, a merge, an editor) would drop a field it did not expect.
``{"version": 1, "locked": {"<file>.md": {"since": ISO-8601}}}`` — files are keyed by
their on-disk spelling and compared ignoring case and Unicode form.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import MemoryNotFound, SagememError, SettingsError, WriteFailed
from ..files.atomic import atomic_write
from ..files.paths import check_name, name_key, read_state_file, with_suffix
from ..store import MemoryStore
from . import archive_log
from .archive_log import ArchiveEvent

LOCKS_FILE = "locked.json"
LOCKS_VERSION = 1


@dataclass(frozen=True)
class Lock:
    """A locked memory: since when, and where it is now (``missing`` once deleted by hand)."""

    file: str
    since: str | None
    where: str  # "memory", "archive" or "missing"


@dataclass(frozen=True)
class LockChange:
    """What ``lock_memory``/``unlock_memory`` did: ``changed`` is False for a no-op."""

    file: str
    locked: bool
    changed: bool
    dry_run: bool = False


def locked_names(store: MemoryStore) -> frozenset[str]:
    """The locked memories, as name keys (compare with ``paths.name_key(file)``)."""
    return frozenset(name_key(name) for name in read_locks(store))


def read_locks(store: MemoryStore) -> dict[str, dict[str, object]]:
    """Every lock by file name; a missing file means no locks, a malformed one is an error
    (silently unlocking everything would let a locked memory be archived)."""
    locked = _load(store)["locked"]
    return {str(k): v if isinstance(v, dict) else {} for k, v in locked.items()}


def list_locks(store: MemoryStore) -> tuple[Lock, ...]:
    """Every lock, by file name, with where its memory is now."""
    return tuple(Lock(file, _since(value), _where(store, file))
                 for file, value in sorted(read_locks(store).items()))


def lock_memory(store: MemoryStore, name: str, *, by: str = "library",
                now: datetime | None = None, dry_run: bool = False) -> LockChange:
    """Lock a memory (top level or archived); locking a locked one changes nothing."""
    now = now or datetime.now(timezone.utc)
    store.require_directory()
    wanted = check_name(with_suffix(name), store.reserved)
    with store.locked(dry_run=dry_run):
        file = _existing(store, wanted)
        data = _load(store)
        if _key_in(data["locked"], file) is not None:
            return LockChange(file, locked=True, changed=False, dry_run=dry_run)
        if not dry_run:
            data["locked"][file] = {"since": archive_log.stamp(now)}
            _save_logged(store, data, archive_log.event("lock", file, "", by, now))
    return LockChange(file, locked=True, changed=True, dry_run=dry_run)


def unlock_memory(store: MemoryStore, name: str, *, by: str = "library",
                  now: datetime | None = None, dry_run: bool = False) -> LockChange:
    """Unlock a memory; one that is not locked is a no-op (``changed=False``). A lock
    whose memory was deleted by hand can still be removed."""
    now = now or datetime.now(timezone.utc)
    store.require_directory()
    wanted = check_name(with_suffix(name), store.reserved)
    with store.locked(dry_run=dry_run):
        data = _load(store)
        key = _key_in(data["locked"], wanted)
        if key is None:
            return LockChange(_existing(store, wanted), locked=False, changed=False,
                              dry_run=dry_run)
        if not dry_run:
            del data["locked"][key]
            _save_logged(store, data, archive_log.event("unlock", key, "", by, now))
    return LockChange(key, locked=False, changed=True, dry_run=dry_run)


def _load(store: MemoryStore) -> dict[str, Any]:
    """The whole file, keeping keys this version does not know, with ``locked`` checked."""
    path = store.state_dir / LOCKS_FILE
    raw = read_state_file(path)
    if raw is None:
        return {"version": LOCKS_VERSION, "locked": {}}
    try:
        data = json.loads(raw.decode("utf-8-sig") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(path, f"not valid JSON ({exc})") from exc
    locked = data.setdefault("locked", {}) if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(locked, dict):
        raise SettingsError(path, 'must hold {"locked": {"<file>.md": {...}}}')
    return data


def _save_logged(store: MemoryStore, data: dict[str, Any], record: ArchiveEvent) -> None:
    """Save, then log; a log line that cannot be written puts the old locked.json back,
    so the error's "nothing was changed" is true. The caller holds the store lock."""
    path = store.state_dir / LOCKS_FILE
    before = read_state_file(path)
    _save(store, data)
    try:
        archive_log.append(store.state_dir, record)
    except SagememError as exc:
        _put_back(path, before, exc)
        raise


def _put_back(path: Path, before: bytes | None, cause: SagememError) -> None:
    try:
        if before is None:
            os.unlink(path)
        else:
            atomic_write(path, before, create=False)
    except (OSError, SagememError) as exc:
        outcome = (f"the lock change is saved in {LOCKS_FILE} but not logged in "
                   f"{archive_log.LOG_FILE}")
        why = getattr(cause, "reason", str(cause))
        raise WriteFailed(path, f"the log line failed ({why}) and putting the old file back "
                                f"failed too ({exc})", outcome=outcome) from cause


def _save(store: MemoryStore, data: dict[str, Any]) -> None:
    data["locked"] = dict(sorted(data["locked"].items()))
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    atomic_write(store.state_dir / LOCKS_FILE, text.encode("utf-8"), create=False)


def _key_in(locked: dict[str, Any], file: str) -> str | None:
    key = name_key(file)
    return next((k for k in locked if name_key(k) == key), None)


def _existing(store: MemoryStore, name: str) -> str:
    """The on-disk spelling of ``name`` at the top level or in the archive."""
    for archived in (False, True):
        file = store.existing_name(name, archived=archived)
        if file is not None:
            return file
    raise MemoryNotFound(name, store.directory)


def _where(store: MemoryStore, file: str) -> str:
    if store.existing_name(file) is not None:
        return "memory"
    return "archive" if store.existing_name(file, archived=True) is not None else "missing"


def _since(value: dict[str, object]) -> str | None:
    since = value.get("since")
    return since if isinstance(since, str) else None
