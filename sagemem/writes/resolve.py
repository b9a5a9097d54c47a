"""Resolving the conflict queue's records: keep a side, invalidate one, or undo that.

Nothing runs unless the user asks. Each resolution adds ``decision``, ``decidedAt`` and
``appliedVersion`` to the record (``conflicts.py`` keeps the records); an earlier
decision moves to ``history``. One that fails raises ``ResolutionRefused`` and leaves the
record as it was. Every change to a memory is a guarded write through the store, based
on the revision the record or the memory holds, so a resolution never overwrites an
edit it has not seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import MemoryNotFound, ResolutionRefused, SagememError, WriteRefused
from ..files.paths import name_key, with_suffix
from .conflicts import WRITE_KINDS, Conflict, load, save
from .guard import guarded_write

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder


def resolve_keep(store: MemoryFolder, conflict_id: str, side: str,
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


def resolve_applied(store: MemoryFolder, conflict_id: str, decision: str,
                    applied: str | None, now: datetime | None = None) -> Conflict:
    """Close an open record whose question another write has answered (``import
    --replace`` wrote the imported text over the name): ``decision`` and the revision
    that write left."""
    return _decide(store, _open_record(store, conflict_id), decision, applied, "resolved",
                   {}, now)


def _write_mine(store: MemoryFolder, record: Conflict) -> str:
    disk, mine = record.side("disk"), record.side("mine")
    text, fields = mine.get("text"), mine.get("fields")
    if isinstance(fields, dict) and not isinstance(text, str) and disk.get("revision") is None:
        raise ResolutionRefused(record.id, "the memory was deleted since, so there is no "
                                           "text to set its fields in; keep disk, or write "
                                           "the memory anew")
    file, reason = record.file or "", f"resolve {record.id}"
    try:
        if isinstance(fields, dict) and not isinstance(text, str):
            written = guarded_write(store, file, None, disk.get("revision"),
                                    fields=_fields_back(fields), reason=reason,
                                    conflict_kind=None)
        else:
            written = guarded_write(store, file, text if isinstance(text, str) else "",
                                    disk.get("revision"), reason=reason, conflict_kind=None)
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


def resolve_invalidate(store: MemoryFolder, conflict_id: str, name: str,
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


def _undo(store: MemoryFolder, record: Conflict, file: str, now: datetime | None) -> Conflict:
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


def _restore(store: MemoryFolder, record: Conflict, file: str) -> str | None:
    """Put back the exact text from before the invalidation, if the file is still as the
    invalidation left it; the revision after, or None when it has changed since."""
    previous = record.data.get("previousText")
    current = store.get(file)
    if not isinstance(previous, str) or current.revision != record.applied_version:
        return None
    try:
        return guarded_write(store, file, previous, current.revision, reason=f"undo {record.id}",
                           conflict_kind=None).revision
    except SagememError as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def _previous(record: Conflict) -> dict[str, Any]:
    """The validity fields the memory held before it was invalidated (from its old text)."""
    text = record.data.get("previousText")
    return _fields_of(text) if isinstance(text, str) else {}


def _raw_fields(store: MemoryFolder, file: str) -> dict[str, Any]:
    return _fields_of(store.get(file).text)


def _fields_of(text: str) -> dict[str, Any]:
    from ..files.memory import load_frontmatter, split

    block = split(text).frontmatter
    return load_frontmatter(block, 1, []) if block else {}


def _side_of(store: MemoryFolder, record: Conflict, name: str) -> Any:
    key = name_key(with_suffix(name))
    if key not in {name_key(m) for m in record.memories}:
        raise ResolutionRefused(record.id, f"{name} is not one of {', '.join(record.memories)}")
    try:
        return store.get(name)
    except MemoryNotFound as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def _successor(store: MemoryFolder, record: Conflict, name: str | None) -> str | None:
    if name is None:
        return None
    try:
        return store.get(name).file
    except MemoryNotFound as exc:
        raise ResolutionRefused(record.id, f"--superseded-by: {exc}") from exc


def _apply_fields(store: MemoryFolder, record: Conflict, file: str,
                  changes: Mapping[str, object]) -> str:
    """A guarded field edit; the revision the memory is at afterwards."""
    from ..files.edit import set_fields

    memory = store.get(file)
    try:
        text = set_fields(memory.text, changes, memory.file)
        if text == memory.text:
            return memory.revision
        return guarded_write(store, memory.file, text, memory.revision,
                             reason=f"resolve {record.id}", conflict_kind=None).revision
    except SagememError as exc:
        raise ResolutionRefused(record.id, str(exc)) from exc


def settle(store: MemoryFolder, conflict_id: str, decision: str,
           now: datetime | None = None) -> Conflict:
    """Close an open record that was settled outside sagemem — git resolved the file,
    or the rebase it came from was aborted — with ``decision``; nothing is written."""
    return _decide(store, _open_record(store, conflict_id), decision, None, "resolved", {},
                   now)


def _open_record(store: MemoryFolder, conflict_id: str) -> Conflict:
    record = load(store.state_dir, conflict_id)
    if record.status != "open":
        raise ResolutionRefused(record.id, f"already resolved ({record.decision})")
    return record


def _decide(store: MemoryFolder, record: Conflict, decision: str, applied: str | None,
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
        save(store, data, create=False)
    return load(store.state_dir, record.id)
