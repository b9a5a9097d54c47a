"""The conflict queue: refused writes and contradictions, kept until the user decides.

Records live in ``<state>/conflicts/<id>.json``, one JSON object each, written atomically
by the store's ``atomic_write``. Record version 1 holds ``id``, ``version``, ``kind``
(``stale_version``, ``external_change``, ``unresolved_merge``, ``contradiction``),
``status`` (``open``/``resolved``), ``created``, ``writer``, ``reason``, then ``file``
with both sides of a refused write — ``disk`` ``{revision, text}`` and ``mine``
``{based_on, text}`` — or ``memories: [a, b]`` for a contradiction. Later versions only
add keys and readers ignore the ones they do not know. Ids sort by creation time.

Nothing here resolves anything by itself: ``resolve_keep``, ``resolve_invalidate`` and
``delete`` run only when the user asks. Each resolution adds ``decision``,
``decidedAt`` and ``appliedVersion``; one that fails raises and leaves the record open.
An open contradiction keeps both memories out of the injected body (``inject.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import (
    ConflictNotFound,
    InvalidName,
    MemoryNotFound,
    ResolutionRefused,
    SagememError,
    WriteFailed,
    WriteRefused,
)
from .paths import MAX_FILE_BYTES, name_key, read_regular, with_suffix

if TYPE_CHECKING:
    from .store import MemoryStore

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
    if not _ID.fullmatch(conflict_id):
        raise ConflictNotFound(conflict_id, directory)
    exact = directory / f"{conflict_id}.json"
    if exact.is_file():
        return exact
    matches = [p for p in _record_paths(directory) if p.name.startswith(conflict_id)]
    if len(matches) != 1:
        raise ConflictNotFound(conflict_id, directory)
    return matches[0]


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

def create(store: MemoryStore, kind: str, file: str, *, writer: str, reason: str | None,
           disk: tuple[str | None, str | None], mine: Mapping[str, Any],
           now: datetime | None = None) -> Conflict:
    """Record a write conflict found outside ``MemoryStore.write`` (the MCP server or
    consolidation comparing versions themselves); takes the store lock."""
    with store.locked():
        conflict_id = record_write_conflict(store, kind, file, writer=writer, reason=reason,
                                            disk=disk, mine=mine, now=now)
    return load(store.state_dir, conflict_id)


def record_write_conflict(store: MemoryStore, kind: str, file: str, *, writer: str,
                          reason: str | None, disk: tuple[str | None, str | None],
                          mine: Mapping[str, Any], now: datetime | None = None) -> str:
    """Record a refused write (the caller holds the store lock); the id, maybe of an
    identical open record already there."""
    if kind not in WRITE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(WRITE_KINDS)}")
    body = {"kind": kind, "status": "open", "writer": writer, "reason": reason, "file": file,
            "disk": {"revision": disk[0], "text": disk[1]}, "mine": dict(mine)}
    return _create(store, body, now)


def contradict(store: MemoryStore, a: str, b: str, note: str, *, writer: str = "library",
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


def _create(store: MemoryStore, body: dict[str, Any], now: datetime | None) -> str:
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
    _save(store, record, create=True)
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


def _save(store: MemoryStore, record: Mapping[str, Any], *, create: bool) -> None:
    from .atomic import atomic_write

    directory = folder(store.state_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(directory, exc.strerror or "exists and is not a directory") from exc
    data = json.dumps(record, ensure_ascii=False, indent=2, default=str) + "\n"
    atomic_write(directory / f"{record['id']}.json", data.encode("utf-8"), create=create)


# -- resolving ----------------------------------------------------------------------------

def resolve_keep(store: MemoryStore, conflict_id: str, side: str,
                 now: datetime | None = None) -> Conflict:
    """Resolve a write conflict: keep the ``disk`` version, or write ``mine`` over it —
    itself a guarded write based on the disk revision the record holds. Making the same
    decision again changes nothing."""
    record = load(store.state_dir, conflict_id)
    if record.status != "open" and record.decision == f"keep_{side}":
        return record
    record = _open_record(store, conflict_id)
    if record.kind not in WRITE_KINDS:
        raise ResolutionRefused(record.id, "a contradiction is resolved with --invalidate NAME")
    if side not in ("disk", "mine"):
        raise ResolutionRefused(record.id, "keep either 'disk' or 'mine'")
    file = record.file or ""
    applied = store.revision(file) if side == "disk" else _write_mine(store, record)
    return _decide(store, record, f"keep_{side}", applied, "resolved", {}, now)


def _write_mine(store: MemoryStore, record: Conflict) -> str:
    disk, mine = record.side("disk"), record.side("mine")
    text, fields = mine.get("text"), mine.get("fields")
    try:
        if isinstance(fields, dict) and not isinstance(text, str):
            written = store.write(record.file or "", None, disk.get("revision"),
                                  fields=_fields_back(fields), reason=f"resolve {record.id}",
                                  conflict_kind=None)
        else:
            written = store.write(record.file or "", text if isinstance(text, str) else "",
                                  disk.get("revision"), reason=f"resolve {record.id}",
                                  conflict_kind=None)
    except (WriteRefused, MemoryNotFound) as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc
    return written.revision


def _fields_back(fields: Mapping[str, Any]) -> dict[str, object]:
    """Field values as ``set`` meant them: dates went into JSON as ISO text."""
    out: dict[str, object] = {}
    for key, value in fields.items():
        try:
            out[key] = date.fromisoformat(value) if isinstance(value, str) else value
        except ValueError:
            out[key] = value
    return out


def resolve_invalidate(store: MemoryStore, conflict_id: str, name: str,
                       superseded_by: str | None = None, undo: bool = False,
                       today: date | None = None, now: datetime | None = None) -> Conflict:
    """Resolve a contradiction by marking one side invalid: adds only ``invalid_at``
    (today) and ``superseded_by`` to its frontmatter — the body and ``updated`` are not
    touched, a second call changes nothing, and ``undo`` removes exactly those fields."""
    record = load(store.state_dir, conflict_id)
    if record.kind != "contradiction":
        raise ResolutionRefused(record.id, "only a contradiction is resolved with --invalidate; "
                                           "use --keep disk|mine")
    memory = _side_of(store, record, name)
    if undo:
        return _undo(store, record, memory.file, now)
    successor = _successor(store, record, superseded_by)
    if record.status != "open":
        if record.data.get("invalidated") == memory.file and \
                record.data.get("supersededBy") == successor:
            return record  # invalidating twice changes nothing
        raise ResolutionRefused(record.id, f"already resolved ({record.decision})")
    today = today or date.today()
    changes: dict[str, object] = {}
    if memory.invalid_at is None or memory.invalid_at > today:
        changes["invalid_at"] = today
    if successor is not None and memory.superseded_by != successor:
        changes["superseded_by"] = successor
    applied = _apply_fields(store, record, memory.file, changes)
    extra = {"invalidated": memory.file, "supersededBy": successor,
             "addedFields": sorted(changes), "previousRevision": memory.revision,
             "previousText": memory.text}
    return _decide(store, record, "invalidate", applied, "resolved", extra, now)


def _undo(store: MemoryStore, record: Conflict, file: str, now: datetime | None) -> Conflict:
    if record.decision == "undo_invalidate" and record.status == "open":
        return record  # undoing twice changes nothing
    if record.decision != "invalidate" or record.data.get("invalidated") != file:
        raise ResolutionRefused(record.id, f"{file} was not invalidated by this record")
    applied = _restore(store, record, file)
    if applied is None:  # the file moved on since: take back only the fields we added
        added = record.data.get("addedFields")
        removed = [k for k in ("invalid_at", "superseded_by")
                   if not isinstance(added, list) or k in added]
        if any(k in _raw_fields(store, file) for k in removed if k in _previous(record)):
            raise ResolutionRefused(record.id, f"{file} changed since it was invalidated and "
                                    "held its own validity fields before; edit it by hand")
        applied = _apply_fields(store, record, file, dict.fromkeys(removed))
    return _decide(store, record, "undo_invalidate", applied, "open", {}, now)


def _restore(store: MemoryStore, record: Conflict, file: str) -> str | None:
    """Put back the exact text from before the invalidation, if the file is still as the
    invalidation left it; the revision after, or None when it has changed since."""
    previous = record.data.get("previousText")
    current = store.get(file)
    if not isinstance(previous, str) or current.revision != record.applied_version:
        return None
    try:
        return store.write(file, previous, current.revision, reason=f"undo {record.id}",
                           conflict_kind=None).revision
    except SagememError as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def _previous(record: Conflict) -> dict[str, Any]:
    """The validity fields the memory held before it was invalidated (from its old text)."""
    text = record.data.get("previousText")
    return _fields_of(text) if isinstance(text, str) else {}


def _raw_fields(store: MemoryStore, file: str) -> dict[str, Any]:
    return _fields_of(store.get(file).text)


def _fields_of(text: str) -> dict[str, Any]:
    from .memory import load_frontmatter, split

    block = split(text).frontmatter
    return load_frontmatter(block, 1, []) if block else {}


def _side_of(store: MemoryStore, record: Conflict, name: str) -> Any:
    key = name_key(with_suffix(name))
    if key not in {name_key(m) for m in record.memories}:
        raise ResolutionRefused(record.id, f"{name} is not one of {', '.join(record.memories)}")
    try:
        return store.get(name)
    except MemoryNotFound as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def _successor(store: MemoryStore, record: Conflict, name: str | None) -> str | None:
    if name is None:
        return None
    try:
        return store.get(name).file
    except MemoryNotFound as exc:
        raise ResolutionRefused(record.id, f"--superseded-by: {exc}") from exc


def _apply_fields(store: MemoryStore, record: Conflict, file: str,
                  changes: Mapping[str, object]) -> str:
    """A guarded field edit; the revision the memory is at afterwards."""
    from .edit import set_fields

    memory = store.get(file)
    try:
        text = set_fields(memory.text, changes, memory.file)
        if text == memory.text:
            return memory.revision
        return store.write(memory.file, text, memory.revision, reason=f"resolve {record.id}",
                           conflict_kind=None).revision
    except SagememError as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def _open_record(store: MemoryStore, conflict_id: str) -> Conflict:
    record = load(store.state_dir, conflict_id)
    if record.status != "open":
        raise ResolutionRefused(record.id, f"already resolved ({record.decision})")
    return record


def _decide(store: MemoryStore, record: Conflict, decision: str, applied: str | None,
            status: str, extra: Mapping[str, Any], now: datetime | None) -> Conflict:
    """Add the decision to the record (earlier decisions move to ``history``). The record
    is read again under the lock, so a decision made meanwhile is kept in the history."""
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    with store.locked():
        data = dict(load(store.state_dir, record.id).data)
        if "decision" in data:
            past = {k: data.get(k) for k in ("decision", "decidedAt", "appliedVersion")}
            data["history"] = [*data.get("history", []), past]
        data.update(extra, status=status, decision=decision,
                    decidedAt=stamp.isoformat(timespec="seconds"), appliedVersion=applied)
        data["id"] = record.id
        _save(store, data, create=False)
    return load(store.state_dir, record.id)


def delete(store: MemoryStore, conflict_id: str) -> Conflict:
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
