"""The conflict queue: refused writes and contradictions, kept until the user decides.

Records live in ``<state>/conflicts/<id>.json``, one JSON object each, written atomically
by the store's ``atomic_write``. Record version 1 holds ``id``, ``version``, ``kind``
(``stale_version``, ``external_change``, ``unresolved_merge``, ``contradiction``),
``status`` (``open``/``resolved``), ``created``, ``writer``, ``reason``, then ``file``
with both sides of a refused write — ``disk`` ``{revision, text}`` and ``mine``
``{based_on, text}`` — or ``memories: [a, b]`` for a contradiction. Later versions only
add keys and readers ignore the ones they do not know. Ids sort by creation time.

Nothing here resolves anything by itself: ``delete`` and the resolutions in
``resolve.py`` (``resolve_keep``, ``resolve_invalidate``) run only when the user
asks. Each resolution adds ``decision``, ``decidedAt`` and ``appliedVersion``; one that
fails raises and leaves the record open. An open contradiction keeps both memories out
of the injected body (``inject/block.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    ConflictNotFound,
    InvalidName,
    SagememError,
    WriteFailed,
)
from ..files.ids import resolve_id
from ..files.paths import MAX_FILE_BYTES, name_key, read_regular

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder

CONFLICTS_DIR = "conflicts"
MAX_RECORDS = 10_000
RECORD_VERSION = 1
KINDS = ("stale_version", "external_change", "unresolved_merge", "contradiction")
WRITE_KINDS = KINDS[:3]
WRITERS = ("cli", "library", "mcp", "consolidation")
_VOLATILE = ("id", "created")  # two failures differing only here are the same failure
_ID = re.compile(r"[0-9A-Za-z_-]{1,80}")
_MAX_RECORD_BYTES = 4 * MAX_FILE_BYTES  # both sides of a memory at the size limit, escaped


@dataclass(frozen=True)
class Conflict:
    """One conflict record as read; ``data`` is the whole record, unknown keys included."""

    id: str
    kind: str
    status: str
    created: str
    writer: str | None
    reason: str | None
    file: str | None
    memories: tuple[str, ...]
    data: Mapping[str, Any]

    def side(self, which: str) -> Mapping[str, Any]:
        """``disk`` or ``mine``: ``{revision|based_on, text, …}`` (empty when absent)."""
        value = self.data.get(which)
        return value if isinstance(value, dict) else {}

    @property
    def decision(self) -> str | None:
        value = self.data.get("decision")
        return value if isinstance(value, str) else None

    @property
    def applied_version(self) -> str | None:
        value = self.data.get("appliedVersion")
        return value if isinstance(value, str) else None


# -- reading ------------------------------------------------------------------------------

def folder(state_dir: Path) -> Path:
    return state_dir / CONFLICTS_DIR


def list_conflicts(state_dir: Path, status: str | None = None) -> list[Conflict]:
    """Every readable record, oldest first (optionally only one status)."""
    records = (_read(p) for p in _record_paths(folder(state_dir)))
    return [r for r in records if r is not None and (status is None or r.status == status)]


def unreadable_records(state_dir: Path) -> list[Path]:
    """Record files that are not a readable record (damaged JSON, a symlink, …): they are
    reported, never silently skipped — a damaged contradiction no longer suppresses."""
    return [p for p in _record_paths(folder(state_dir)) if _read(p) is None]


def load(state_dir: Path, conflict_id: str) -> Conflict:
    """One record by id, or by a prefix of its id that names only one record."""
    path = _path_of(state_dir, conflict_id)
    record = _read(path)
    if record is None:
        raise ConflictNotFound(conflict_id, folder(state_dir))
    return record


def _record_paths(directory: Path) -> list[Path]:
    if not directory.is_dir() or directory.is_symlink():
        return []
    return sorted(directory.glob("*.json"))[:MAX_RECORDS]


def _path_of(state_dir: Path, conflict_id: str) -> Path:
    directory = folder(state_dir)
    if not _ID.fullmatch(conflict_id):  # never a path: `../x` names no record
        raise ConflictNotFound(conflict_id, directory)
    ids = [p.stem for p in _record_paths(directory)]
    return directory / f"{resolve_id(conflict_id, ids, ConflictNotFound, directory)}.json"


def _read(path: Path) -> Conflict | None:
    try:
        data = json.loads(read_regular(path, _MAX_RECORD_BYTES).data.decode("utf-8"))
    except (SagememError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") not in KINDS:
        return None
    memories = data.get("memories")
    return Conflict(
        id=path.stem, kind=data["kind"], status=_str(data.get("status")) or "open",
        created=_str(data.get("created")) or "", writer=_str(data.get("writer")),
        reason=_str(data.get("reason")), file=_str(data.get("file")),
        memories=tuple(m for m in memories if isinstance(m, str))
        if isinstance(memories, list) else (),
        data=data)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


# -- creating -----------------------------------------------------------------------------

def create(store: MemoryFolder, kind: str, file: str, *, writer: str, reason: str | None,
           disk: tuple[str | None, str | None], mine: Mapping[str, Any],
           now: datetime | None = None) -> Conflict:
    """Record a write conflict found outside ``MemoryStore.write`` (the MCP server or
    consolidation comparing versions themselves); takes the store lock."""
    with store.locked():
        conflict_id = record_write_conflict(store, kind, file, writer=writer, reason=reason,
                                            disk=disk, mine=mine, now=now)
    return load(store.state_dir, conflict_id)


def record_write_conflict(store: MemoryFolder, kind: str, file: str, *, writer: str,
                          reason: str | None, disk: tuple[str | None, str | None],
                          mine: Mapping[str, Any], now: datetime | None = None) -> str:
    """Record a refused write (the caller holds the store lock); the id, maybe of an
    identical open record already there."""
    if kind not in WRITE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(WRITE_KINDS)}")
    body = {"kind": kind, "status": "open", "writer": writer, "reason": reason, "file": file,
            "disk": {"revision": disk[0], "text": disk[1]}, "mine": dict(mine)}
    return _create(store, body, now)


def contradict(store: MemoryFolder, a: str, b: str, note: str, *, writer: str = "library",
               now: datetime | None = None) -> Conflict:
    """Record that memories ``a`` and ``b`` contradict each other; both must exist.

    Until it is resolved, the injection composer keeps both out of the injected body.
    """
    first, second = store.get(a).file, store.get(b).file
    if name_key(first) == name_key(second):
        raise InvalidName(b, f"is {first} itself; a contradiction names two memories")
    body = {"kind": "contradiction", "status": "open", "writer": _writer(writer),
            "reason": note, "memories": sorted([first, second])}
    with store.locked():
        conflict_id = _create(store, body, now)
    return load(store.state_dir, conflict_id)


def _create(store: MemoryFolder, body: dict[str, Any], now: datetime | None) -> str:
    """Write a new record, unless an open one is identical field for field but time and id."""
    _writer(body["writer"])
    fingerprint = hashlib.sha256(_canonical(body)).hexdigest()[:10]
    directory = folder(store.state_dir)
    for path in directory.glob(f"*-{fingerprint}.json") if directory.is_dir() else ():
        same = _read(path)
        if same is not None and same.status == "open" and _same_failure(same.data, body):
            return same.id
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    conflict_id = f"{stamp:%Y%m%dT%H%M%S%f}Z-{fingerprint}"
    record = {"id": conflict_id, "version": RECORD_VERSION, **body,
              "created": stamp.isoformat(timespec="seconds")}
    save(store, record, create=True)
    return conflict_id


def _canonical(record: Mapping[str, Any]) -> bytes:
    kept = {k: v for k, v in record.items() if k not in _VOLATILE}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")


def _same_failure(stored: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    known = {k: stored.get(k) for k in body}
    return _canonical(known) == _canonical(body)


def _writer(writer: str) -> str:
    if writer not in WRITERS:
        raise ValueError(f"writer must be one of {', '.join(WRITERS)}")
    return writer


def save(store: MemoryFolder, record: Mapping[str, Any], *, create: bool) -> None:
    """Write a record whole (atomically); ``create`` refuses to replace one."""
    from ..files.atomic import atomic_write

    directory = folder(store.state_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(directory, exc.strerror or "exists and is not a directory") from exc
    data = json.dumps(record, ensure_ascii=False, indent=2, default=str) + "\n"
    atomic_write(directory / f"{record['id']}.json", data.encode("utf-8"), create=create)


# -- removing ------------------------------------------------------------------------------

def delete(store: MemoryFolder, conflict_id: str) -> Conflict:
    """Remove a record (whatever its status); returns what it held."""
    record = load(store.state_dir, conflict_id)
    with store.locked():
        try:
            os.unlink(folder(store.state_dir) / f"{record.id}.json")
        except FileNotFoundError:
            raise ConflictNotFound(conflict_id, folder(store.state_dir)) from None
    return record


# -- what injection needs -----------------------------------------------------------------

def open_contradictions(state_dir: Path) -> list[tuple[str, str]]:
    """Pairs of memory files in open contradiction records; unreadable records are skipped."""
    directory = state_dir / CONFLICTS_DIR
    if not directory.is_dir() or directory.is_symlink():
        return []
    pairs = []
    for path in sorted(directory.glob("*.json"))[:MAX_RECORDS]:
        pair = _contradiction(path)
        if pair is not None:
            pairs.append(pair)
    return pairs


def _contradiction(path: Path) -> tuple[str, str] | None:
    try:
        record = json.loads(read_regular(path).data.decode("utf-8"))
    except (SagememError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != "contradiction":
        return None
    if record.get("status", "open") != "open":
        return None
    names = record.get("memories") or record.get("files")
    if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names):
        return names[0], names[1]
    return None
