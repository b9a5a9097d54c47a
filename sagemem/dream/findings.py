"""What a consolidation planner needs to know of a folder, read once, with no model.

``find`` reads every live memory once (the audit's scan; archived memories are not
looked at) and gathers, in file order so two runs over one folder agree byte for byte:

- duplicate groups: the audit's near-duplicates (``audit/duplicates.py``: name,
  description and the start of the body, rapidfuzz ``ratio`` ≥ 90, blocked so the work
  grows linearly). Not ``remember``'s title similarity (``writes/similar.py``): two
  memories may share a title and hold different facts (``when`` tells them apart), so a
  title alone is no ground to merge; the audit compares what they say;
- stale relative dates ("yesterday", 上周), each resolved from its memory's ``updated``
  (the day it was written down); a memory without ``updated`` is listed as having no
  anchor — the day it meant is unknown, and guessing it would write a wrong date;
- expired memories: ``invalid_at`` at least ``dream_expired_days`` days before today;
- idle archive candidates, by ``history/candidates.py``'s rule;
- open contradictions (``writes/conflicts``), whose memories are neither merged nor
  archived here: that would settle the dispute without the person who must settle it;
- what ``audit --fix`` would write (``audit/fix.repaired_texts``): index and links;
- skipped: what would have been archived but is locked (``history/locks``) or disputed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timezone

from ..audit.fix import is_fixable, repaired_texts
from ..audit.report import AuditReport, Finding, ReadCache, audit
from ..config import Settings
from ..files.memory import Memory
from ..files.paths import INDEX_FILE, name_key
from ..history.candidates import Candidate, archive_candidates, idle_thresholds
from ..history.locks import locked_names
from ..store import MemoryStore
from ..writes import conflicts
from .dates import find_relative_dates


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories that read almost the same, in file order; ``exact``: their fingerprints
    (``audit/duplicates.fingerprint``) are identical."""

    files: tuple[str, ...]
    score: float
    exact: bool


@dataclass(frozen=True)
class StaleDate:
    """One relative phrase: its file line, and what it becomes from the anchor."""

    line: int
    phrase: str
    replacement: str


@dataclass(frozen=True)
class StaleDates:
    """A memory's relative dates; ``anchor`` is its ``updated`` (None: no anchor, so the
    phrases are listed with no replacement and never rewritten)."""

    file: str
    anchor: date | None
    dates: tuple[StaleDate, ...]


@dataclass(frozen=True)
class Expired:
    """A memory whose ``invalid_at`` passed ``days`` days ago."""

    file: str
    invalid_at: date
    days: int


@dataclass(frozen=True)
class Contradiction:
    """An open contradiction record and the memories it holds apart."""

    id: str
    files: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Repair:
    """What ``audit --fix`` would write in one file, and the findings it answers."""

    file: str
    text: str
    problems: tuple[str, ...]
    kind: str  # "index" for MEMORY.md, "links" for a memory


@dataclass(frozen=True)
class Skipped:
    """A memory left as it is although a rule named it, and why."""

    file: str
    why: str


@dataclass(frozen=True)
class Findings:
    """Everything ``find`` saw: the memories read (by file) and the revisions planned
    against (MEMORY.md's included), then each kind of finding in file order."""

    today: date
    memories: Mapping[str, Memory]
    revisions: Mapping[str, str | None]
    report: AuditReport
    duplicates: tuple[DuplicateGroup, ...]
    stale_dates: tuple[StaleDates, ...]
    expired: tuple[Expired, ...]
    idle: tuple[Candidate, ...]
    contradictions: tuple[Contradiction, ...]
    repairs: tuple[Repair, ...]
    skipped: tuple[Skipped, ...]
    locked: frozenset[str]
    """The locked memories, as ``paths.name_key`` keys."""

    def is_locked(self, file: str) -> bool:
        return name_key(file) in self.locked

    def disputed(self) -> dict[str, str]:
        """Each memory in an open contradiction → the record's id (the first, by id)."""
        held: dict[str, str] = {}
        for record in self.contradictions:
            for file in record.files:
                held.setdefault(file, record.id)
        return held


def find(store: MemoryStore, settings: Settings, today: date) -> Findings:
    """Read the folder once and gather every finding (see the module docstring)."""
    cache: ReadCache = {}
    report = audit(store, cache=cache)
    memories = {m.file: m for _, m in sorted(cache.values(), key=_file_of)
                if isinstance(m, Memory)}
    locked = locked_names(store)
    contradictions = open_contradictions(store, memories)
    disputed = {file for record in contradictions for file in record.files}
    expired, expired_skips = _expired(memories, settings.guarded("dream_expired_days"),
                                      today, locked, disputed)
    idle, idle_skips = _idle(store, settings, today, disputed, list(memories.values()))
    return Findings(today, memories, dict(report.revisions), report,
                    duplicate_groups_of(report), tuple(stale_dates_of(memories.values())),
                    expired, idle, contradictions, tuple(repairs_of(store, report)),
                    (*expired_skips, *idle_skips), locked)


def _file_of(entry: tuple[object, Memory | Finding]) -> str:
    return entry[1].file


def duplicate_groups_of(report: AuditReport) -> tuple[DuplicateGroup, ...]:
    """The audit's near-duplicate hints joined into groups (a pair, or its ``group``)."""
    parent: dict[str, str] = {}

    def root(file: str) -> str:
        while parent.setdefault(file, file) != file:
            file = parent[file]
        return file

    scores: dict[str, list[tuple[float, bool]]] = {}
    for finding in report.findings:
        if finding.category != "near_duplicate":
            continue
        files = list(finding.data.get("group") or (finding.file, finding.data["other"]))
        for other in files[1:]:
            a, b = root(files[0]), root(other)
            parent[max(a, b)] = min(a, b)
        scores.setdefault(files[0], []).append(
            (float(finding.data["score"]), bool(finding.data.get("copies"))))
    members: dict[str, list[str]] = {}
    for file in sorted(parent):
        members.setdefault(root(file), []).append(file)
    marks: dict[str, list[tuple[float, bool]]] = {}
    for file, found in scores.items():
        marks.setdefault(root(file), []).extend(found)
    return tuple(DuplicateGroup(tuple(files), min(s for s, _ in marks[top]),
                                all(exact for _, exact in marks[top]))
                 for top, files in sorted(members.items()))


def stale_dates_of(memories: Iterable[Memory]) -> list[StaleDates]:
    """Each memory holding relative dates, resolved from its ``updated``; one without
    ``updated`` is listed with ``anchor`` None and its phrases' replacements empty."""
    found: list[StaleDates] = []
    for memory in memories:
        dates = _dates_in(memory)
        if dates:
            found.append(StaleDates(memory.file, memory.updated, dates))
    return found


def _dates_in(memory: Memory) -> tuple[StaleDate, ...]:
    # No anchor: the phrases are found from an arbitrary day only to be listed.
    anchor = memory.updated or _LISTING_ANCHOR
    return tuple(
        StaleDate(memory.body_line + memory.body.count("\n", 0, d.start), d.phrase,
                  d.replacement if memory.updated else "")
        for d in find_relative_dates(memory.body, anchor))


_LISTING_ANCHOR = date(2000, 1, 1)


def _expired(memories: Mapping[str, Memory], after_days: int, today: date,
             locked: frozenset[str], disputed: set[str]
             ) -> tuple[tuple[Expired, ...], tuple[Skipped, ...]]:
    found: list[Expired] = []
    skipped: list[Skipped] = []
    for memory in memories.values():
        if memory.invalid_at is None or memory.invalid_at > today:
            continue
        days = (today - memory.invalid_at).days
        if days < after_days:
            continue
        why = _kept_because(memory.file, locked, disputed)
        if why:
            skipped.append(Skipped(memory.file, f"expired {days} days ago, but {why}"))
        else:
            found.append(Expired(memory.file, memory.invalid_at, days))
    return tuple(found), tuple(skipped)


def _kept_because(file: str, locked: frozenset[str], disputed: set[str]) -> str:
    if name_key(file) in locked:
        return "locked: never archived (sagemem unlock to allow it)"
    if file in disputed:
        return "in an open contradiction: settle it first (sagemem conflicts)"
    return ""


def _idle(store: MemoryStore, settings: Settings, today: date, disputed: set[str],
          memories: list[Memory]) -> tuple[tuple[Candidate, ...], tuple[Skipped, ...]]:
    """The candidate rule at the end of ``today`` (UTC); locked ones come back apart."""
    now = datetime.combine(today, time(23, 59, 59), tzinfo=timezone.utc)
    report = archive_candidates(store, idle_thresholds(settings), now, memories)
    skipped = [Skipped(c.file, f"{c.why}, but locked: never archived "
                               "(sagemem unlock to allow it)") for c in report.locked]
    skipped += [Skipped(c.file, f"{c.why}, but in an open contradiction: settle it first "
                                "(sagemem conflicts)")
                for c in report.candidates if c.file in disputed]
    idle = tuple(sorted((c for c in report.candidates if c.file not in disputed),
                        key=lambda c: c.file))
    return idle, tuple(skipped)


def open_contradictions(store: MemoryStore, memories: Mapping[str, Memory]
                        ) -> tuple[Contradiction, ...]:
    """Open contradiction records between live memories (one side gone: moot)."""
    found = []
    for record in conflicts.list_conflicts(store.state_dir, "open"):
        if record.kind != "contradiction":
            continue
        files = tuple(f for f in record.memories if f in memories)
        if len(files) == len(record.memories) >= 2:
            found.append(Contradiction(record.id, files, record.reason or ""))
    return tuple(sorted(found, key=lambda c: c.id))


def repairs_of(store: MemoryStore, report: AuditReport,
               findings: Iterable[Finding] | None = None) -> list[Repair]:
    """What ``audit --fix`` would write, one ``Repair`` per file (MEMORY.md last)."""
    chosen = list(report.findings if findings is None else findings)
    texts = repaired_texts(store, report, chosen)
    repairs = []
    for file, text in texts.items():
        problems = tuple(f.message if f.file == file else f"{f.file}: {f.message}"
                         for f in chosen if is_fixable(f) and _repaired_in(f) == file)
        repairs.append(Repair(file, text, problems,
                              "index" if file == INDEX_FILE else "links"))
    return repairs


def _repaired_in(finding: Finding) -> str:
    """Where ``fix`` repairs a finding: an index line missing is MEMORY.md's repair."""
    return INDEX_FILE if finding.category == "not_in_index" else finding.file
