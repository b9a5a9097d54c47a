"""Auto-archive candidates: a deterministic rule, no model.

A memory is a candidate when it has been idle at least its type's threshold in days
(``idle_days_<type>`` in settings; 0 means never). Idle time runs from its last sign of
life: the access ledger's last ``read`` or ``use``, or its frontmatter ``updated`` when
that is later (an edit is a sign somebody cares), and the file's mtime only when there
is neither. Being injected does not count: it is not evidence the memory mattered.
A locked memory is never a candidate. Each candidate says why, with the source used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone

from ..config import Settings
from ..files.fields import TYPES
from ..files.memory import Memory
from ..files.paths import name_key
from ..store import MemoryStore
from . import ledger
from .locks import locked_names

SOURCES = {"read": "last read", "use": "last use", "updated": "updated",
           "mtime": "file modified"}


@dataclass(frozen=True)
class Candidate:
    """A memory idle past its type's threshold, and why (``source``: read, use, updated
    or mtime — where ``last_active`` came from)."""

    file: str
    type: str
    idle_days: int
    threshold: int
    last_active: str
    source: str
    why: str


@dataclass(frozen=True)
class CandidateReport:
    """The candidates (longest idle first), the memories that would be but are locked,
    and warnings (an unreadable ledger or memory)."""

    candidates: tuple[Candidate, ...]
    locked: tuple[Candidate, ...]
    warnings: tuple[str, ...]


def idle_thresholds(settings: Settings) -> dict[str, int]:
    """Days per type from settings, for ``archive_candidates`` (0 = never)."""
    return {type_: settings.idle_days(type_) for type_ in TYPES}


def archive_candidates(store: MemoryStore, thresholds: Mapping[str, int], now: datetime,
                       memories: Sequence[Memory] | None = None) -> CandidateReport:
    """Every top-level memory idle at least its type's threshold at ``now`` (aware);
    ``memories``: the live memories when the caller has read them already (consolidation
    has: reading 10,000 files again cost 3 s)."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware, e.g. datetime.now(timezone.utc)")
    today = now.astimezone(timezone.utc).date()
    listing = store.list(include_archived=False) if memories is None else None
    live = listing.memories if listing is not None else memories or ()
    entries, warnings = ledger.load(store.state_dir)
    access = {name_key(file): entry for file, entry in entries.items()}
    locked = locked_names(store)
    found: list[Candidate] = []
    for memory in live:
        candidate = _candidate(memory, access.get(name_key(memory.file)),
                               thresholds.get(memory.type, 0), today)
        if candidate is not None:
            found.append(candidate)
    found.sort(key=lambda c: (-c.idle_days, c.file))
    if listing is not None:
        warnings += [f"{error.file}: {error.error}" for error in listing.errors]
    return CandidateReport(tuple(c for c in found if name_key(c.file) not in locked),
                           tuple(c for c in found if name_key(c.file) in locked),
                           tuple(warnings))


def _candidate(memory: Memory, access: ledger.MemoryAccess | None, threshold: int,
               today: date) -> Candidate | None:
    if threshold <= 0:
        return None
    last, source = last_active(memory, access)
    if last is None:
        return None
    idle = (today - last).days
    if idle < threshold:
        return None
    never = "" if access and (access.read.count or access.use.count) else "; never read or used"
    why = (f"idle {idle} days ({SOURCES[source]} {last.isoformat()}{never}) ≥ "
           f"{memory.type} threshold {threshold}")
    return Candidate(memory.file, memory.type, idle, threshold, last.isoformat(), source, why)


def last_active(memory: Memory, access: ledger.MemoryAccess | None
                ) -> tuple[date | None, str]:
    """The last sign of life of a memory, as a UTC date, and where it came from."""
    seen: list[tuple[date, int, str]] = []  # the middle number breaks ties: ledger first
    if access is not None:
        for rank, kind in ((0, "use"), (1, "read")):
            day = _day(getattr(access, kind).last)
            if day is not None:
                seen.append((day, -rank, kind))
    if memory.updated is not None:
        seen.append((memory.updated, -2, "updated"))
    if seen:
        day, _, source = max(seen)
        return day, source
    if memory.mtime is None:
        return None, "mtime"
    return datetime.fromtimestamp(memory.mtime, tz=timezone.utc).date(), "mtime"


def _day(stamp: str | None) -> date | None:
    """The UTC date of a ledger time (``2026-08-02T10:00:00Z``); None if malformed."""
    moment = ledger.parse_stamp(stamp)
    return None if moment is None else moment.astimezone(timezone.utc).date()
