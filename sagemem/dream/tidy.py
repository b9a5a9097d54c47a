"""``tidy``: the deterministic planner — the findings made into a plan, no model.

Archives are decided first, so no line is merged into a memory that is then archived:
expired memories, then idle ones, then the copies in each duplicate group. What stays is
rewritten at most once: a duplicate group's keeper takes in every line the others hold
that it lacks (their own relative dates made absolute from their own ``updated``
first), its tags and aliases unioned; a memory with relative dates gets them made
absolute from its ``updated``; a memory or MEMORY.md the audit can repair gets exactly
what ``audit --fix`` would write. These fold into one rewrite per file. Every rewrite
keeps the frontmatter byte for byte (save a merge's tags and aliases), and ``updated``
never changes: tidying is not news about the memory.

Order in the plan: MEMORY.md first (an archive edits its lines, so a rewrite after one
would meet a newer revision), then the rewrites, then the archives, each by file name.
The same folder gives the same plan, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ..config import Settings
from ..errors import SagememError
from ..files.body import head_of, newline_of
from ..files.edit import set_fields
from ..files.memory import Memory, parse
from ..files.paths import INDEX_FILE
from ..files.plural import counted
from ..store import MemoryStore
from .dates import absolute_dates, find_relative_dates
from .findings import DuplicateGroup, Findings, Skipped, find, repairs_of
from .plan import Operation, Plan

PLANNER = "tidy"
KIND_ORDER = ("duplicate", "dates", "links")
"""A rewrite that folds several tidyings takes the first kind of these it holds."""


@dataclass
class _Draft:
    """A memory's rewrite being built: its text so far, what changed and why."""

    text: str
    kinds: set[str] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    dated: bool = False  # relative dates made absolute once: replacements are never re-read


def _draft(found: Findings, drafts: dict[str, _Draft], file: str) -> _Draft:
    """The file's draft, begun from what ``audit --fix`` would write when it repairs the
    file (that text is the base every other edit goes on), else from the file."""
    if file not in drafts:
        repair = next((r for r in found.repairs if r.file == file), None)
        drafts[file] = (_Draft(found.memories[file].text) if repair is None else
                        _Draft(repair.text, {"links"},
                               [f"audit --fix: {'; '.join(repair.problems)}"]))
    return drafts[file]


def plan(store: MemoryStore, settings: Settings, today: date,
         findings: Findings | None = None) -> Plan:
    """The tidy plan for the folder as ``findings`` (default: read now) saw it."""
    found = findings or find(store, settings, today)
    archives: dict[str, Operation] = {}
    skipped: list[Skipped] = list(found.skipped)
    after = settings.guarded("dream_expired_days")
    for expired in found.expired:
        archives[expired.file] = _archive(found, expired.file, "expired", (
            f"invalid_at {expired.invalid_at.isoformat()} passed "
            f"{counted(expired.days, 'day')} ago (dream_expired_days {after})"))
    for candidate in found.idle:
        archives.setdefault(candidate.file, _archive(found, candidate.file, "idle",
                                                     candidate.why))
    drafts: dict[str, _Draft] = {}
    for group in found.duplicates:
        skipped += _plan_group(found, group, archives, drafts)
    _fold_dates(found, archives, drafts)
    for repair in found.repairs:
        if repair.file != INDEX_FILE and repair.file not in archives:
            _draft(found, drafts, repair.file)
    rewrites = [_rewrite(found, file, draft) for file, draft in sorted(drafts.items())
                if draft.text != found.memories[file].text]
    index = _index_rewrite(store, found, archives)
    operations = (*index, *rewrites, *(archives[file] for file in sorted(archives)))
    return Plan(operations, PLANNER, tuple(_notes(found, skipped)))


def _archive(found: Findings, file: str, kind: str, reason: str) -> Operation:
    return Operation("archive", file, reason, found.revisions[file], None, kind)


# -- duplicates ---------------------------------------------------------------------------

def _plan_group(found: Findings, group: DuplicateGroup, archives: dict[str, Operation],
                drafts: dict[str, _Draft]) -> list[Skipped]:
    """Keep one memory of the group and archive the rest, merging what they add."""
    disputed = found.disputed()
    members = [f for f in group.files if f not in archives and f in found.memories]
    skipped = [Skipped(f, f"a duplicate in {group.files[0]}'s group, but in an open "
                          "contradiction: settle it first (sagemem conflicts)")
               for f in members if f in disputed]
    members = [f for f in members if f not in disputed]
    if len(members) < 2:
        return skipped
    keeper = keeper_of([found.memories[f] for f in members], found)
    for other in (f for f in members if f != keeper.file):
        why = _not_archivable(found, other, keeper.file)
        if why:
            skipped.append(Skipped(other, why))
            continue
        draft = _draft(found, drafts, keeper.file)
        try:
            added = _merge(draft, keeper, found.memories[other])
        except SagememError as exc:  # a frontmatter the editor will not touch
            skipped.append(Skipped(other, f"not merged into {keeper.file}: {exc}"))
            continue
        archives[other] = _archive(found, other, "duplicate", (
            f"merged into {keeper.file}" if added else
            f"a copy of {keeper.file}, which is kept") + _likeness(group))
    return skipped


def _likeness(group: DuplicateGroup) -> str:
    return " (identical)" if group.exact else f" (near-duplicate, score {group.score:.0f})"


def keeper_of(memories: list[Memory], found: Findings) -> Memory:
    """The memory a group keeps: a locked one first (it cannot be archived), then the
    most recently ``updated``, then the longer body, then the first file name."""
    def rank(m: Memory) -> tuple[bool, date, int, str]:
        return (not found.is_locked(m.file), _negated(m.updated), -len(m.body), m.file)
    return min(memories, key=rank)


def _negated(day: date | None) -> date:
    """Sorts later days first (None last) under ``min``."""
    return date.max if day is None else date.fromordinal(date.max.toordinal() - day.toordinal())


def _not_archivable(found: Findings, other: str, keeper: str) -> str:
    memory = found.memories[other]
    if found.is_locked(other):
        return f"a duplicate of {keeper}, but locked: never archived (sagemem unlock)"
    if memory.updated is None and find_relative_dates(memory.body, found.today):
        return (f"a duplicate of {keeper}, but its relative dates have no updated to "
                "anchor them: merged, they would read as the keeper's")
    return ""


def _merge(draft: _Draft, keeper: Memory, other: Memory) -> int:
    """Append ``other``'s body lines ``draft`` lacks, union tags and aliases; the count
    of lines and fields added. The keeper's own dates are made absolute first, so the
    lines it takes in (made absolute from their own anchor) are never re-anchored."""
    _date_draft(draft, keeper)
    current = parse(draft.text.encode("utf-8"), keeper.file)
    lines = lines_lacking(current.body, other)
    gained = _gained(current, other)
    text = _with_lines(draft.text, current.body, lines)
    if gained:
        text = set_fields(text, {key: [*_of(current, key), *values]
                                 for key, values in gained.items()}, keeper.file)
    draft.text = text
    draft.kinds.add("duplicate")
    draft.source.append(other.file)
    extra = "; ".join(f"{key} + {', '.join(values)}" for key, values in gained.items())
    draft.reasons.append(f"merged {counted(len(lines), 'line')} from {other.file}"
                         + (f" ({extra})" if extra else ""))
    return len(lines) + len(gained)


def lines_lacking(body: str, other: Memory) -> list[str]:
    """``other``'s non-blank body lines that ``body`` has no line equal to (leading and
    trailing spaces aside), in order, once each; relative dates made absolute from
    ``other``'s own ``updated``."""
    have = {line.strip() for line in body.splitlines()}
    theirs = absolute_dates(other.body, other.updated) if other.updated else other.body
    return [line for line in dict.fromkeys(theirs.splitlines())
            if line.strip() and line.strip() not in have]


def _with_lines(text: str, body: str, lines: list[str]) -> str:
    if not lines:
        return text
    newline = newline_of(text)
    ending = "" if not body or body.endswith(("\n", "\r")) else newline
    return text + ending + newline.join(lines) + newline


def _of(memory: Memory, key: str) -> tuple[str, ...]:
    return memory.tags if key == "tags" else memory.aliases


def _gained(keeper: Memory, other: Memory) -> dict[str, list[str]]:
    """The tags and aliases ``other`` has that the keeper lacks."""
    gained = {key: [v for v in _of(other, key) if v not in _of(keeper, key)]
              for key in ("tags", "aliases")}
    return {key: values for key, values in gained.items() if values}


# -- dates and repairs --------------------------------------------------------------------

def _fold_dates(found: Findings, archives: dict[str, Operation],
                drafts: dict[str, _Draft]) -> None:
    for stale in found.stale_dates:
        if stale.anchor is None or stale.file in archives:
            continue
        _date_draft(_draft(found, drafts, stale.file), found.memories[stale.file])


def _date_draft(draft: _Draft, memory: Memory) -> None:
    """Make ``draft``'s relative dates absolute from ``memory.updated``, frontmatter kept."""
    if memory.updated is None or draft.dated:
        return
    draft.dated = True
    current = parse(draft.text.encode("utf-8"), memory.file)
    dates = find_relative_dates(current.body, memory.updated)
    if not dates:
        return
    draft.text = head_of(current) + absolute_dates(current.body, memory.updated)
    draft.kinds.add("dates")
    shown = "; ".join(f"{d.phrase} → {d.replacement}" for d in dates)
    draft.reasons.append(f"{counted(len(dates), 'relative date')} made absolute from "
                         f"updated {memory.updated.isoformat()}: {shown}")


def _index_rewrite(store: MemoryStore, found: Findings,
                   archives: dict[str, Operation]) -> list[Operation]:
    """MEMORY.md as ``audit --fix`` would write it, without lines for what is archived."""
    revision = found.revisions.get(INDEX_FILE)
    if revision is None:
        return []
    chosen = [f for f in found.report.findings
              if not (f.category == "not_in_index" and f.file in archives)]
    repairs = [r for r in repairs_of(store, found.report, chosen) if r.file == INDEX_FILE]
    return [Operation("rewrite", INDEX_FILE, f"audit --fix: {'; '.join(r.problems)}",
                      revision, r.text, "index") for r in repairs]


def _rewrite(found: Findings, file: str, draft: _Draft) -> Operation:
    kind = next(k for k in KIND_ORDER if k in draft.kinds)
    return Operation("rewrite", file, "; ".join(draft.reasons), found.revisions[file],
                     draft.text, kind, tuple(draft.source))


def _notes(found: Findings, skipped: list[Skipped]) -> list[str]:
    """What a reviewer should know was left alone, and why."""
    notes = [f"{s.file}: {counted(len(s.dates), 'relative date')} left as written "
             f"({', '.join(d.phrase for d in s.dates)}): no updated to anchor them"
             for s in found.stale_dates if s.anchor is None]
    notes += [f"{s.file}: {s.why}" for s in sorted(skipped, key=lambda s: (s.file, s.why))]
    return notes
