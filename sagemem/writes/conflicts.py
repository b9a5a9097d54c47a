"""The conflict queue: refused writes and contradictions, kept until the user decides.

Records live in ``<state>/conflicts/<id>.json``, one JSON object each, written atomically
by the store's ``atomic_write``. Record version 1 holds ``id``, ``version``, ``kind``
(``stale_version``, ``external_change``, ``unresolved_merge``, ``contradiction``),
``status`` (``open``/``resolved``), ``created``, ``writer``, ``reason``, then ``file``
with both sides of a refused write — ``disk`` ``{revision, text}`` and ``mine``
``{based_on, text}``, and ``key``/``count``/``lastSeen`` for repeats collapsed into it — or
``memories: [a, b]`` for a contradiction. Later versions only add keys and readers ignore
the ones they do not know. Ids sort by creation time.

Nothing here resolves anything by itself: ``delete``, ``delete_many`` and the ones in
``resolve.py`` (``resolve_keep``, ``resolve_invalidate``) run only when the user
asks. Each resolution adds ``decision``, ``decidedAt`` and ``appliedVersion``; one that
fails raises and leaves the record open. An open contradiction keeps both memories out
of the injected body (``inject/block.py``) while both are live memories: once one side
is archived or deleted the record is moot — kept as it is (the audit trail; a restore
brings the dispute back), but it keeps nothing out (``disputed``, ``moot_sides``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
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
WRITERS = ("cli", "library", "mcp", "consolidation", "memory-tool", "ui", "git")
_VOLATILE = ("id", "created")  # two contradictions differing only here are the same
COLLAPSE_WINDOW = timedelta(minutes=15)
"""A refusal identical to an open record last seen this recently (or with the same run
id) counts on that record instead of adding one: a retry loop of 99 refusals left 99
records. Long enough for a contention run or an agent's retries, short enough that the
same failure tomorrow is news."""
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
    def count(self) -> int:
        """How many identical refusals this record stands for (``COLLAPSE_WINDOW``)."""
        value = self.data.get("count")
        return value if isinstance(value, int) and value > 0 else 1

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
           now: datetime | None = None, run_id: str | None = None) -> Conflict:
    """Record a write conflict found outside ``MemoryStore.write`` (the MCP server or
    consolidation comparing versions themselves); takes the store lock."""
    with store.locked():
        conflict_id = record_write_conflict(store, kind, file, writer=writer, reason=reason,
                                            disk=disk, mine=mine, now=now, run_id=run_id)
    return load(store.state_dir, conflict_id)


def record_write_conflict(store: MemoryFolder, kind: str, file: str, *, writer: str,
                          reason: str | None, disk: tuple[str | None, str | None],
                          mine: Mapping[str, Any], now: datetime | None = None,
                          run_id: str | None = None) -> str:
    """Record a refused write (the caller holds the store lock); the id — of the open
    record an identical refusal of this run already made, counted once more, if any."""
    if kind not in WRITE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(WRITE_KINDS)}")
    from .redact import redact_memory, redact_reason  # a refusal must not keep a secret

    mine = dict(mine)
    if isinstance(mine.get("text"), str):
        mine["text"] = redact_memory(mine["text"]).text
    body = {"kind": kind, "status": "open", "writer": _writer(writer),
            "reason": redact_reason(reason), "file": file,
            "disk": {"revision": disk[0], "text": disk[1]}, "mine": mine}
    if run_id is not None:
        body["run_id"] = run_id
    stamp = _utc(now)
    key = _refusal_key(body)
    repeated = _repeat_of(store, key, stamp)
    if repeated is not None:
        return _count_again(store, repeated, stamp)
    return _new_record(store, body, key, stamp)


def _refusal_key(body: Mapping[str, Any]) -> str:
    """What makes two refusals identical: the file, kind and writer, the revision the
    writer expected and the one it met, the text (by hash) and fields it tried, and the
    run id (None outside a run). Not the reason, and not the disk text (its revision
    names it)."""
    mine = body["mine"]
    text = mine.get("text")
    key = {"kind": body["kind"], "file": body["file"], "writer": body["writer"],
           "expected": mine.get("based_on"), "actual": body["disk"]["revision"],
           "text": None if text is None else hashlib.sha256(
               str(text).encode("utf-8", "surrogatepass")).hexdigest(),
           "fields": mine.get("fields"), "run": body.get("run_id")}
    return hashlib.sha256(_canonical(key)).hexdigest()[:10]


def _repeat_of(store: MemoryFolder, key: str, stamp: datetime) -> Conflict | None:
    """The open record of this key seen last within the window (or of this run)."""
    directory = folder(store.state_dir)
    for path in sorted(directory.glob(f"*-{key}.json"), reverse=True) \
            if directory.is_dir() else ():
        same = _read(path)
        if same is None or same.status != "open" or same.data.get("key") != key:
            continue
        if same.data.get("run_id") is not None or _recent(same, stamp):
            return same
    return None


def _recent(record: Conflict, stamp: datetime) -> bool:
    seen = _str(record.data.get("lastSeen")) or record.created
    try:
        last = datetime.fromisoformat(seen)
    except ValueError:
        return False
    return last.tzinfo is not None and stamp - last <= COLLAPSE_WINDOW


def _count_again(store: MemoryFolder, record: Conflict, stamp: datetime) -> str:
    data = {**record.data, "count": record.count + 1,
            "lastSeen": stamp.isoformat(timespec="seconds")}
    save(store, data, create=False)
    return record.id


def contradict(store: MemoryFolder, a: str, b: str, note: str, *, writer: str = "library",
               now: datetime | None = None) -> Conflict:
    """Record that memories ``a`` and ``b`` contradict each other; both must exist.

    Until it is resolved, the injection composer keeps both out of the injected body
    (while both are live memories: see ``contradictions.disputed``).
    """
    first, second = store.get(a).file, store.get(b).file
    if name_key(first) == name_key(second):
        raise InvalidName(b, f"is {first} itself; a contradiction names two memories")
    from .redact import redact_reason

    body = {"kind": "contradiction", "status": "open", "writer": _writer(writer),
            "reason": redact_reason(note), "memories": sorted([first, second])}
    with store.locked():
        conflict_id = _create(store, body, now)
    return load(store.state_dir, conflict_id)


def _create(store: MemoryFolder, body: dict[str, Any], now: datetime | None) -> str:
    """Write a new contradiction, unless an open one is identical field for field but
    time and id."""
    _writer(body["writer"])
    fingerprint = hashlib.sha256(_canonical(body)).hexdigest()[:10]
    directory = folder(store.state_dir)
    for path in directory.glob(f"*-{fingerprint}.json") if directory.is_dir() else ():
        same = _read(path)
        if same is not None and same.status == "open" and _same_failure(same.data, body):
            return same.id
    return _new_record(store, body, None, _utc(now), fingerprint)


def _new_record(store: MemoryFolder, body: Mapping[str, Any], key: str | None,
                stamp: datetime, fingerprint: str | None = None) -> str:
    moment = stamp
    while (folder(store.state_dir) / f"{_id_at(moment, key or fingerprint)}.json").exists():
        moment += timedelta(microseconds=1)  # the same refusal at the same instant, resolved
    conflict_id = _id_at(moment, key or fingerprint)
    record = {"id": conflict_id, "version": RECORD_VERSION, **body,
              **({"key": key, "count": 1} if key else {}),
              "created": stamp.isoformat(timespec="seconds")}
    save(store, record, create=True)
    return conflict_id


def _id_at(moment: datetime, suffix: str | None) -> str:
    return f"{moment:%Y%m%dT%H%M%S%f}Z-{suffix}"


def _utc(now: datetime | None) -> datetime:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc)


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


def matching(state_dir: Path, *, status: str | None = None,
             older_than: timedelta | None = None, now: datetime | None = None
             ) -> list[Conflict]:
    """The records ``delete_many`` would remove: of ``status`` (if given) and created
    more than ``older_than`` before ``now`` (if given); at least one filter."""
    if status is None and older_than is None:
        raise ValueError("give a status, an age, or both: deleting every record unasked "
                         "is not a filter")
    if status not in (None, "open", "resolved"):
        raise ValueError("status must be open or resolved")
    cutoff = _utc(now) - older_than if older_than is not None else None
    return [r for r in list_conflicts(state_dir, status)
            if cutoff is None or _created_before(r, cutoff)]


def _created_before(record: Conflict, cutoff: datetime) -> bool:
    try:
        created = datetime.fromisoformat(record.created)
    except ValueError:
        return False  # no readable age: never old enough to delete in bulk
    return created.tzinfo is not None and created < cutoff


def delete_many(store: MemoryFolder, *, status: str | None = None,
                older_than: timedelta | None = None, now: datetime | None = None,
                only: Collection[str] | None = None) -> list[Conflict]:
    """Remove every record ``matching`` the filters, under the store lock; ``only``
    restricts it to the ids the user was shown, so a record that changed status since
    is spared. Returns what was removed."""
    gone = []
    with store.locked():
        for record in matching(store.state_dir, status=status, older_than=older_than,
                               now=now):
            if only is not None and record.id not in only:
                continue
            try:
                os.unlink(folder(store.state_dir) / f"{record.id}.json")
            except FileNotFoundError:
                continue
            gone.append(record)
    return gone
