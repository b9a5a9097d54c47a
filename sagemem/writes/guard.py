"""The write guard behind ``MemoryStore.write``: replace a memory only if it is still at
the revision its writer read.

Under the store lock the memory is read again and its revision compared with the one the
writer expected; a mismatch, or a text still holding merge markers, is refused with a
``WriteRefused`` after both sides are recorded as a conflict, so a refused write never
loses its text. The check is made once more right before the rename, for an editor that
saved in between.
"""

from __future__ import annotations

import enum
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    FieldTooLong,
    FileChangedDuringRead,
    MemoryExists,
    MemoryNotFound,
    SagememError,
    StaleField,
    StaleRevision,
    UnresolvedMerge,
    WriteFailed,
)
from ..files import indexfile
from ..files.atomic import atomic_write, remove_quietly
from ..files.memory import Memory, parse
from ..files.paths import check_name, check_new_name, with_suffix
from ..files.revision import checked_revision
from . import changelog
from .conflicts import WRITE_KINDS, WRITERS

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder

REREAD_ATTEMPTS = 20
REAPPLY_ATTEMPTS = 5


class Required(enum.Enum):
    """The type of ``REQUIRED``: None already means "create", so a forgotten revision
    needs a default of its own to be caught."""

    TOKEN = 0


REQUIRED = Required.TOKEN


@dataclass(frozen=True)
class _Attempt:
    """A guarded write as asked for: what a refusal records."""

    file: str
    expected: str | None
    text: str | None
    fields: Mapping[str, object] | None
    reason: str | None
    writer: str
    conflict_kind: str | None
    run_id: str | None = None


def guarded_write(store: MemoryFolder, name: str, content: str | None,
                  expected_revision: str | Required | None, *,
                  fields: Mapping[str, object] | None = None,
                  expected_fields: Mapping[str, object] | None = None,
                  reason: str | None = None, writer: str = "library",
                  conflict_kind: str | None = "stale_version", op: str | None = None,
                  before_create: Callable[[str], None] | None = None,
                  run_id: str | None = None) -> Memory:
    """``MemoryStore.write``: write ``content`` (or set ``fields``) if ``name`` is still
    at ``expected_revision``; a refusal is recorded, then raised.

    Setting ``fields`` alone needs no revision: under the lock they are applied to the
    text as it is now, so two writers setting different fields both land. With
    ``expected_fields`` (the values the caller read), a field another writer changed
    meanwhile is refused as ``StaleField`` naming it. ``before_create`` is called with
    the file name, under the lock, before a create (the layer's count cap refuses there).
    A create gets its MEMORY.md line (``add_index_line``): an unreadable MEMORY.md is
    refused before the file is made, so every surface creates the same way. A landed
    write gets its line in the change log (``changelog``), as ``op`` (default:
    ``create``, ``set`` for fields alone, else ``write``), and the bytes it replaced are
    kept (``versions``). ``run_id``: the consolidation run writing, named in the log
    line and in a refusal's conflict record.
    """
    expected = _checked(content, expected_revision, fields, writer, conflict_kind)
    # Secrets never reach disk, the conflict queue or a log: redacted before the size
    # check and the revision compare (``redact.py``; ``redact: false`` opts a text out).
    # Imported here: its ~20 patterns cost 8 ms to compile, which a listing never needs.
    from .redact import redact_memory, redact_reason, refuse_secret_name

    content = None if content is None else redact_memory(content).text
    reason = redact_reason(reason)
    store.require_directory()
    checked = check_new_name if expected is None else check_name  # None: a create
    name = refuse_secret_name(checked(with_suffix(name), store.reserved))
    if content is not None:
        store.check_size(name, content.encode("utf-8"))
    with store.locked():
        for attempt in range(REAPPLY_ATTEMPTS):
            try:
                data, file, replaced = _write_locked(
                    store, name, content, expected, fields, expected_fields, _Why(
                        reason, writer, conflict_kind, _index_readable(store, before_create),
                        run_id))
                break
            except _MovedOn:  # an editor saved meanwhile: apply the fields to its text
                if attempt == REAPPLY_ATTEMPTS - 1:
                    raise
        # What was written, not a re-read: once the lock is released, another writer (or
        # an editor) may already have moved the file on. Parsed once: a create's
        # MEMORY.md line is made from it too.
        written = parse(data, file, mtime=_mtime(store.directory / file))
        if replaced is None:
            add_index_line(store, file, indexfile.format_entry(
                written.title, file, written.description))
        changelog.record_write(store.state_dir, file, op or _op(expected, content),
                               writer=writer, reason=reason, replaced=replaced, written=data,
                               run=run_id)
    store.notice_change()
    return written


def _index_readable(store: MemoryFolder, before_create: Callable[[str], None] | None
                    ) -> Callable[[str], None]:
    """``before_create``, then a read of MEMORY.md: one that cannot be read or written (a
    symlink, too large) refuses the create before the file is made, rather than after
    the memory was written and logged without its line."""
    def check(file: str) -> None:
        if before_create is not None:
            before_create(file)
        store.read_index()
    return check


def add_index_line(store: MemoryFolder, file: str, line: str) -> None:
    """Give ``file``, just created, its MEMORY.md ``line`` (unless a line points at it
    already); when MEMORY.md cannot take it, the file is removed again and the error
    raised: no memory without its index line (the audit's ``not_in_index``). The caller
    holds ``store.locked()``."""
    try:
        store.update_index(lambda text: text if indexfile.has_entry(text, file)
                           else indexfile.add_entry(text, line))
    except SagememError as exc:
        remove_quietly(store.directory / file)
        if isinstance(exc, WriteFailed):
            raise WriteFailed(exc.path, f"{exc.reason}; {file} was not kept") from exc
        raise


def _op(expected: str | Required | None, content: str | None) -> str:
    return "create" if expected is None else "set" if content is None else "write"


@dataclass(frozen=True)
class _Why:
    reason: str | None
    writer: str
    conflict_kind: str | None
    before_create: Callable[[str], None] | None = None
    run_id: str | None = None


class _MovedOn(Exception):
    """A field write met a file changed outside the lock right before the rename."""


def _write_locked(store: MemoryFolder, name: str, content: str | None,
                  expected: str | Required | None, fields: Mapping[str, object] | None,
                  expected_fields: Mapping[str, object] | None, why: _Why
                  ) -> tuple[bytes, str, bytes | None]:
    """One guarded write under the lock: the bytes written, the file's name and the
    bytes replaced (None: created)."""
    current = current_memory(store, name)
    file = current.file if current else name
    on_current = isinstance(expected, Required)  # fields with no revision: the text now
    if on_current and current is None:
        raise MemoryNotFound(name, store.directory)
    if isinstance(expected, str) and current is not None and \
            current.revision.startswith(expected):
        expected = current.revision  # a prefix of the current revision names it
    fields_only = content is None
    if fields_only and current is not None and expected_fields is not None:
        expected = current.revision  # the fields decide, not the whole file
    base = current.revision if on_current and current is not None else expected
    assert not isinstance(base, Required)
    if fields:
        from .former_names import with_former_name

        fields = with_former_name(_redacted_fields(fields, current), current)
    text = content
    if text is None and current is not None and current.revision == base:
        text = current.text
    if text is not None and fields:
        from ..files.edit import set_fields

        if (line := merge_marker_line(text)) is not None:  # not "does not parse": why
            raise UnresolvedMerge(file, line)
        text = set_fields(text, fields, file)
    if text is not None:
        written = parse(text.encode("utf-8"), file)
        refuse_long_fields(file, written.name, written.description, current)
    attempt = _Attempt(file, base, text, fields, why.reason, why.writer, why.conflict_kind,
                       why.run_id)
    if expected_fields is not None and current is not None:
        _refuse_changed_fields(store, attempt, current, expected_fields)
    _refuse_if_needed(store, attempt, current)
    if base is None and why.before_create is not None:  # a create: the name is free
        why.before_create(file)
    assert text is not None  # a missing text is a revision mismatch, refused above
    data = text.encode("utf-8")
    store.check_size(file, data)

    def still_at() -> None:
        if fields_only and (on_current or expected_fields is not None):
            now = current_memory(store, file)
            if (now.revision if now else None) != (current.revision if current else None):
                raise _MovedOn
        _still_at(store, attempt, current)

    atomic_write(store.directory / file, data, create=base is None, before_replace=still_at)
    return data, file, None if current is None else current.text.encode("utf-8")


def refuse_create(store: MemoryFolder, file: str, text: str, current: Memory | None, *,
                  reason: str | None, writer: str) -> Memory:
    """What a create of ``text`` as ``file`` meets under the lock, given the memory that
    already has its name (``current``, read with ``current_memory``): a field too long,
    merge markers, the name taken — each refused as ``guarded_write`` refuses it (the
    refusal recorded as a conflict first). The memory ``text`` makes when it may be
    created (``history/create_batch.py`` checks many creates so)."""
    file = current.file if current else file
    written = parse(text.encode("utf-8"), file)
    refuse_long_fields(file, written.name, written.description, current)
    _refuse_if_needed(store, _Attempt(file, None, text, None, reason, writer,
                                      "stale_version"), current)
    return written


def refuse_long_fields(file: str, name: str | None, description: str | None,
                       current: Memory | None = None) -> None:
    """Refuse (``FieldTooLong``) a title or description over its bound
    (``fields.over_bound``) before anything is written, archived or recorded — nothing
    is lost, so there is nothing to merge. Values ``current`` already holds pass: a long
    description written by hand is read whole and stays editable. Every write path calls
    this: the guard for each text it writes, ``MemoryStore.new`` for the fields it
    renders."""
    from ..files.fields import over_bound

    for field, value, before in (("name", name, current.name if current else None),
                                 ("description", description,
                                  current.description if current else None)):
        over = over_bound(field, value, before)
        if over is not None:
            raise FieldTooLong(file, field, *over)


def _redacted_fields(fields: Mapping[str, object], current: Memory | None
                     ) -> Mapping[str, object]:
    """New field values redacted, unless the memory opted out (``redact: false``)."""
    from .redact import opted_out, redact_field

    if current is not None and opted_out(current.text):
        return fields
    return {key: redact_field(key, value) for key, value in fields.items()}


def _refuse_changed_fields(store: MemoryFolder, attempt: _Attempt, current: Memory,
                           expected_fields: Mapping[str, object]) -> None:
    """Refuse (after recording it) a field another writer changed since it was read."""
    from ..files.edit import field_value

    for key, was in expected_fields.items():
        now = field_value(current.text, key, current.file)
        if _same_value(now, was):
            continue
        conflict_id = None
        if attempt.conflict_kind is not None:
            conflict_id = _record(store, attempt.conflict_kind, attempt, current)
        raise StaleField(attempt.file, key, was, now, expected=None,
                         actual=current.revision, conflict_id=conflict_id)


def _same_value(a: object, b: object) -> bool:
    """Values as YAML read them: ``1`` and ``true`` differ although Python says equal."""
    return type(a) is type(b) and a == b


def _checked(content: str | None, expected_revision: str | Required | None,
             fields: Mapping[str, object] | None, writer: str, conflict_kind: str | None
             ) -> str | Required | None:
    """The expected revision, once programming mistakes are refused — before the lock
    is taken or anything is read. REQUIRED stays only for a write of fields alone."""
    if isinstance(expected_revision, Required) and not (content is None and fields):
        raise TypeError("write() needs expected_revision (None to create a memory)")
    if content is None and fields is None:
        raise TypeError("write() needs content or fields")
    if content is None and expected_revision is None:
        raise TypeError("creating a memory needs its content, not only fields")
    if writer not in WRITERS or conflict_kind not in (*WRITE_KINDS, None):
        raise ValueError(f"writer must be one of {', '.join(WRITERS)}; conflict_kind one "
                         f"of {', '.join(WRITE_KINDS)} or None")
    if isinstance(expected_revision, str):
        return checked_revision(expected_revision)
    return expected_revision


def _still_at(store: MemoryFolder, attempt: _Attempt, seen: Memory | None) -> None:
    """Check again right before the rename: an editor saving while the temporary file
    was written and fsync'd (milliseconds) would otherwise be overwritten."""
    now = current_memory(store, attempt.file)
    if (now.revision if now else None) != (seen.revision if seen else None):
        _refuse_if_needed(store, attempt, now)


def current_memory(store: MemoryFolder, name: str) -> Memory | None:
    """The memory as it is now. A file caught mid-change by a writer outside the guard
    (an editor saving in place) is read again: it has moved on, and the refusal
    should record where it moved to rather than fail without a record."""
    for attempt in range(REREAD_ATTEMPTS):
        try:
            return store.get(name)
        except MemoryNotFound:
            return None
        except FileChangedDuringRead:
            if attempt == REREAD_ATTEMPTS - 1:
                raise
            time.sleep(0.001 * (attempt + 1))
    return None  # not reached: the last attempt returns or raises


def _refuse_if_needed(store: MemoryFolder, attempt: _Attempt, current: Memory | None) -> None:
    """Raise the refusal this write meets, after recording it as a conflict."""
    marker = merge_marker_line(attempt.text) if attempt.text is not None else None
    actual = current.revision if current else None
    if marker is None and actual == attempt.expected:
        return
    kind = "unresolved_merge" if marker is not None else attempt.conflict_kind
    conflict_id = None
    if kind is not None:
        conflict_id = _record(store, kind, attempt, current)
    if marker is not None:
        raise UnresolvedMerge(attempt.file, marker, conflict_id)
    if attempt.expected is None:
        raise MemoryExists(attempt.file, conflict_id)
    raise StaleRevision(attempt.file, attempt.expected, actual, conflict_id)


def _record(store: MemoryFolder, kind: str, attempt: _Attempt, current: Memory | None) -> str:
    from .conflicts import record_write_conflict

    mine: dict[str, object] = {"based_on": attempt.expected, "text": attempt.text}
    if attempt.fields:
        mine["fields"] = {k: v.isoformat() if isinstance(v, date) else v
                          for k, v in attempt.fields.items()}
    return record_write_conflict(
        store, kind, attempt.file, writer=attempt.writer, reason=attempt.reason,
        disk=(current.revision, current.text) if current else (None, None), mine=mine,
        run_id=attempt.run_id)


_MERGE_MARKER = re.compile(r"^(?:<{7}|>{7})(?:[ \t].*)?$", re.MULTILINE)


def merge_marker_line(text: str) -> int | None:
    """The 1-based line of the first ``<<<<<<<`` or ``>>>>>>>`` at a line start, or None.
    A ``=======`` line alone does not count: it is also a Markdown heading underline, and
    no unresolved merge lacks the other two markers."""
    found = _MERGE_MARKER.search(text)
    return None if found is None else text.count("\n", 0, found.start()) + 1


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
