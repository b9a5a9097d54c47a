"""Making room under a layer's caps: before a create at ``hard_cap_memories``, archive
the least recently read memory of that layer — never delete it.

The store (``writes/caps.py``) measures and refuses; archiving sits here, above it.
``enforce_caps`` is the one call every creating path makes before it writes (the CLI's
``new``/``write``/``edit``, and whatever else creates: ``remember``, MCP tools);
``new_memory`` and ``write_memory`` are that call plus the store's write.

Least recently read: the access ledger's last ``read`` or ``use`` (being injected does
not count, as for archive candidates), else the file's mtime. Never a locked memory, a
``baseline: true`` one (it is injected every session on purpose), or the one being
written. Everything that would refuse the write is checked first, so a memory is never
archived for a write that then fails for another reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import chain, islice
from typing import TYPE_CHECKING, TypeVar

from ..errors import LayerFull, MemoryLocked, MemoryNotFound, NameCollision, SagememError
from ..files.memory import Memory
from ..files.paths import check_name, name_key, with_suffix
from ..store import MemoryStore
from ..writes.caps import (
    HARD_MEMORIES,
    body_bytes,
    check_body,
    count_memories,
    count_warning,
    room_needed,
)
from ..writes.guard import REQUIRED, Required, merge_marker_line, refuse_long_fields

if TYPE_CHECKING:  # the archive, ledger and locks are loaded only when room is made
    from .archive import ArchiveResult
    from .ledger import MemoryAccess

ATTEMPTS = 3  # another process may take the room made between the archive and the create


@dataclass(frozen=True)
class CapReport:
    """What a layer's caps did around one write: the soft caps' warnings, and the
    memories archived to make room (their ``ArchiveResult``, never a deletion)."""

    warnings: tuple[str, ...] = ()
    archived: tuple[ArchiveResult, ...] = ()

    @property
    def archived_files(self) -> tuple[str, ...]:
        return tuple(result.file for result in self.archived)

    def then(self, later: CapReport) -> CapReport:
        """Both reports, for a write retried after another writer took the room."""
        return CapReport(later.warnings, self.archived + later.archived)


def enforce_caps(store: MemoryStore, file: str, *, body: int | None, creating: bool,
                 by: str = "library", now: datetime | None = None) -> CapReport:
    """Apply ``store``'s caps before writing ``file``: refuse a body of ``body`` bytes over
    the hard cap (None: no body is written), and for a create (``creating``) at the hard
    count archive the least recently read memories to make room for one — unless
    ``file`` exists, which the write will refuse (looked up only then: a scan of names).

    Raises BodyTooLarge, IllegalSetting (a refused count cap, for a create only) or
    LayerFull (nothing can be archived) before anything changes."""
    warnings = [w for w in [check_body(store.caps, file, body)] if w] if body is not None else []
    archived: tuple[ArchiveResult, ...] = ()
    if creating:
        count = count_memories(store)
        if (needed := room_needed(store.caps, count)) and store.existing_name(file):
            return CapReport(tuple(warnings))  # MemoryExists, from the write itself
        if needed:
            archived = _make_room(store, file, needed, count, by, now)
        if warning := count_warning(store.caps, count - len(archived) + 1):
            warnings.append(warning)
    return CapReport(tuple(warnings), archived)


T = TypeVar("T")


def with_room(store: MemoryStore, create: Callable[[], T], *, by: str = "library"
              ) -> tuple[T, CapReport]:
    """Run ``create`` (a write that may create a memory: ``remember``, an MCP tool, the
    memory tool), and when the layer is at its hard cap (``LayerFull``), make room as
    ``enforce_caps`` does and run it again. For callers that cannot know the file name
    before writing; the soft caps' warnings come only with a room made."""
    report = CapReport()
    for attempt in range(ATTEMPTS):
        try:
            return create(), report
        except LayerFull as full:
            if attempt == ATTEMPTS - 1:
                raise
            report = report.then(enforce_caps(store, full.name, body=None, creating=True,
                                              by=by))
    raise AssertionError("not reached")


def new_memory(store: MemoryStore, *, type: str, name: str, description: str,
               tags: Sequence[str] = (), aliases: Sequence[str] = (), body: str = "",
               file: str | None = None, today: date | None = None, by: str = "library",
               now: datetime | None = None, distinct: bool = False
               ) -> tuple[Memory, CapReport]:
    """``store.new`` within the layer's caps: the memory, and what the caps did. A title
    another memory has, or one close to it, is refused (``NearDuplicate``) unless
    ``distinct``, before anything is archived or written."""
    from ..writes.redact import redact  # the file name is made from the redacted name

    name = redact(name).text
    target = store.new_file_name(type, name, file)
    store.check_size(target, body.encode("utf-8"))  # refused whole before any archiving
    refuse_long_fields(target, name, description)
    if not distinct and store.existing_name(target) is None:  # else MemoryExists says it
        from ..writes.remember import refuse_near_duplicate

        refuse_near_duplicate(store, name, description=description, today=today)
    report = CapReport()
    for attempt in range(ATTEMPTS):
        report = report.then(enforce_caps(store, target, body=len(body.encode("utf-8")),
                                          creating=True, by=by, now=now))
        try:
            return store.new(type=type, name=name, description=description, tags=tags,
                             aliases=aliases, body=body, file=target, today=today,
                             writer=by), report
        except LayerFull:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("not reached")


def write_memory(store: MemoryStore, name: str, content: str | None = None,
                 expected_revision: str | Required | None = REQUIRED, *,
                 fields: Mapping[str, object] | None = None,
                 expected_fields: Mapping[str, object] | None = None,
                 reason: str | None = None, writer: str = "library",
                 conflict_kind: str | None = "stale_version", by: str = "library",
                 now: datetime | None = None) -> tuple[Memory, CapReport]:
    """``store.write`` within the layer's caps: the memory, and what the caps did. Only
    a body written is measured; only a create may archive (``by`` says who asked)."""
    file = check_name(with_suffix(name), store.reserved)
    creating = expected_revision is None
    if creating and content is not None:  # what the guard would refuse, refused first
        store.check_size(file, content.encode("utf-8"))
        if merge_marker_line(content) is not None:
            creating = False  # refused and recorded by the guard; never archive for it
    report = CapReport()
    size = None if content is None else body_bytes(content)
    for attempt in range(ATTEMPTS):
        report = report.then(enforce_caps(store, file, body=size, creating=creating,
                                          by=by, now=now))
        try:
            return store.write(file, content, expected_revision, fields=fields,
                               expected_fields=expected_fields, reason=reason,
                               writer=writer, conflict_kind=conflict_kind), report
        except LayerFull:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("not reached")


def _make_room(store: MemoryStore, file: str, needed: int, count: int, by: str,
               now: datetime | None) -> tuple[ArchiveResult, ...]:
    """Archive ``needed`` memories, least recently read first; LayerFull when fewer can
    go. Enough candidates are found before the first move, so that refusal changes
    nothing; only a race (one locked or archived meanwhile, with no other left) can
    leave some archived, and the error names them."""
    from .archive import archive_memory

    hard = store.caps.hard_memories
    reason = f"hard cap of {hard} memories reached ({HARD_MEMORIES})"
    candidates = least_recently_read(store, exclude=file)
    first = list(islice(candidates, needed))
    if len(first) < needed:
        raise LayerFull(file, count, hard, HARD_MEMORIES, _NO_ROOM + "; archive or unlock "
                        "one, or raise the cap")
    done: list[ArchiveResult] = []
    for victim in chain(first, candidates):
        try:
            done.append(archive_memory(store, victim, reason, by=by, now=now))
        except (MemoryLocked, NameCollision, MemoryNotFound):
            continue  # locked or gone meanwhile, or archive/ holds that name: the next one
        if len(done) == needed:
            return tuple(done)
    moved = ", ".join(r.file for r in done)
    raise LayerFull(file, count - len(done), hard, HARD_MEMORIES,
                    f"{_NO_ROOM} (archived {moved} first; `sagemem restore` brings them back)")


_NO_ROOM = "no other memory can be archived to make room: each is locked or baseline: true"


def least_recently_read(store: MemoryStore, *, exclude: str = "") -> Iterator[str]:
    """The layer's memories that may be archived for room, least recently read first:
    never locked, never ``baseline: true``, never ``exclude``; one that cannot be read
    is passed over (whether it is baseline is unknown)."""
    from .locks import locked_names

    locked = locked_names(store) | {name_key(exclude)}
    for name in _by_last_read(store):
        if name_key(name) in locked:
            continue
        try:
            if store.get(name).baseline:
                continue
        except SagememError:
            continue
        yield name


def _by_last_read(store: MemoryStore) -> list[str]:
    """Top-level memories by last read (the ledger, else mtime), oldest first. Only the
    files are stat'ed; parsing waits for the few ``least_recently_read`` looks at."""
    from . import ledger

    entries, _ = ledger.load(store.state_dir)  # a damaged ledger: mtimes decide
    access = {name_key(file): entry for file, entry in entries.items()}
    keyed: list[tuple[float, str]] = []
    for name in store.files():
        seen = _last_read(access.get(name_key(name)))
        if seen is None:
            try:
                seen = os.lstat(store.directory / name).st_mtime
            except OSError:
                continue
        keyed.append((seen, name))
    return [name for _, name in sorted(keyed)]


def _last_read(entry: MemoryAccess | None) -> float | None:
    """The later of the ledger's last ``read`` and ``use``, in seconds, or None."""
    if entry is None:
        return None
    times = [_seconds(access.last) for access in (entry.read, entry.use)]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _seconds(stamp: str | None) -> float | None:
    from .ledger import parse_stamp

    moment = parse_stamp(stamp)
    return None if moment is None else moment.timestamp()
