"""The Health screen: the audit grouped by category, the open conflicts as cards with
both sides, contradictions with both memories, and ``audit --fix`` behind its preview.

Every action is the library's own (``writes/resolve.py``, ``writes/conflicts.py``,
``audit/fix.py``), called as ``sagemem conflicts resolve`` and ``sagemem audit --fix``
call them, and takes two steps: a resolution posts first to a confirmation naming what
will change, and only the confirmation's own post applies it; the repairs are shown as
``fix(dry_run=True)`` plans them, and the post applies exactly that plan (a plan that
changed meanwhile is refused, so nothing unseen is written).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..audit.fix import FixReport, fix, fix_confirmed
from ..audit.scan import Finding
from ..errors import ConflictNotFound, SagememError
from ..files.memory import Memory
from ..store import MemoryStore
from ..writes import conflicts
from ..writes.conflicts import WRITE_KINDS, Conflict
from ..writes.contradictions import moot_sides
from ..writes.resolve import resolve_invalidate, resolve_keep
from .health import HealthCache
from .injection import settings_of

if TYPE_CHECKING:
    from .app import Panel

RESOLVED_SHOWN = 10  # resolved invalidations offered for undo, newest first
ACTIONS = ("keep_disk", "keep_mine", "invalidate", "undo", "delete")


@dataclass(frozen=True)
class Side:
    """One memory of a contradiction as it is now (``text`` None: no longer live)."""

    file: str
    text: str | None
    revision: str


@dataclass(frozen=True)
class Card:
    """One conflict record as a card: both sides of a write, or both memories."""

    layer: str
    record: Conflict
    disk: str | None
    mine: str | None
    sides: tuple[Side, ...]
    moot: tuple[str, ...]

    @property
    def is_write(self) -> bool:
        return self.record.kind in WRITE_KINDS


@dataclass(frozen=True)
class LayerHealth:
    layer: str
    memories: int
    groups: tuple[tuple[str, tuple[Finding, ...]], ...]
    cards: tuple[Card, ...]
    undoable: tuple[Card, ...]
    plan: FixReport
    plan_digest: str
    unreadable: tuple[str, ...]


@dataclass(frozen=True)
class CheckupPage:
    layers: tuple[LayerHealth, ...]
    problems: int
    conflicts: int


def routes(panel: Panel) -> list[Route]:
    cache = panel.health  # one audit per folder change for every screen

    async def show(request: Request, note: str = "", bad: bool = False,
                   status: int = 200, applied: FixReport | None = None) -> HTMLResponse:
        page = await panel.run(checkup_page, panel, cache)
        return panel.page(request, "checkup.html", status=status, page=page, screen="checkup",
                          problems=page.problems, conflicts=page.conflicts, note=note,
                          bad=bad, applied=applied)

    async def checkup(request: Request) -> HTMLResponse:
        return await show(request)

    async def conflict(request: Request) -> HTMLResponse:
        layer, conflict_id = request.path_params["layer"], request.path_params["id"]
        form = await request.form()
        action, name = str(form.get("action", "")), str(form.get("name", ""))
        successor = str(form.get("superseded_by", "")) or None
        try:
            store = _store(panel, layer)
            if form.get("confirm") != "yes":
                record = await panel.run(conflicts.load, store.state_dir, conflict_id)
                counts = await panel.run(badge_counts, panel, cache)
                return _confirmation(panel, request, layer, record, action, name, successor,
                                     counts)
            done = await panel.run(apply_action, store, conflict_id, action, name, successor)
        except (SagememError, KeyError, ValueError) as exc:
            code = 404 if isinstance(exc, (ConflictNotFound, KeyError)) else 409
            return await show(request, f"not done: {exc}", bad=True, status=code)
        return await show(request, done)

    async def repair(request: Request) -> HTMLResponse:
        layer = request.path_params["layer"]
        form = await request.form()
        try:
            store = _store(panel, layer)
            result = await panel.run(apply_fix, panel, cache, store, str(form.get("plan", "")))
        except (SagememError, KeyError) as exc:
            return await show(request, f"not repaired: {exc}", bad=True, status=409)
        if result.dry_run:
            return await show(request, "the repairs changed since the preview: nothing was "
                                       "written; look at the new preview", bad=True,
                              status=409)
        return await show(request, f"{len(result.changes)} repairs made in the {layer} layer",
                          applied=result)

    return [Route("/checkup", checkup),
            Route("/checkup/conflicts/{layer}/{id}", conflict, methods=["POST"]),
            Route("/checkup/fix/{layer}", repair, methods=["POST"])]


# -- the page (on the store thread) ---------------------------------------------------------

def checkup_page(panel: Panel, cache: HealthCache) -> CheckupPage:
    shown = []
    problems = open_conflicts = 0
    for layer, store in panel.layers.stores():
        health = cache.health(store)
        problems, open_conflicts = problems + health.problems, \
            open_conflicts + health.open_conflicts
        findings = health.report.findings if health.report else ()
        plan = fix(store, health.report, dry_run=True)
        records = conflicts.list_conflicts(store.state_dir)
        cards = tuple(card(layer, store, r) for r in records if r.status == "open")
        undoable = tuple(card(layer, store, r) for r in reversed(records)
                         if r.decision == "invalidate")[:RESOLVED_SHOWN]
        shown.append(LayerHealth(
            layer, health.report.memories if health.report else 0, grouped(findings), cards,
            undoable, plan, plan_digest(plan),
            tuple(str(p) for p in conflicts.unreadable_records(store.state_dir))))
    return CheckupPage(tuple(shown), problems, open_conflicts)


def badge_counts(panel: Panel, cache: HealthCache) -> tuple[int, int]:
    """The header's two numbers: audit problems and open conflicts, every layer."""
    healths = [cache.health(store) for _, store in panel.layers.stores()]
    return sum(h.problems for h in healths), sum(h.open_conflicts for h in healths)


def _store(panel: Panel, layer: str) -> MemoryStore:
    """The store of a layer named in a URL; KeyError for a layer there is none of."""
    return dict(panel.layers.stores())[layer]


def grouped(findings: tuple[Finding, ...]) -> tuple[tuple[str, tuple[Finding, ...]], ...]:
    """Findings by category: problems' categories first, then hints', each sorted."""
    groups: defaultdict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        groups[f.category].append(f)
    order = sorted(groups, key=lambda c: (all(f.severity != "problem" for f in groups[c]), c))
    return tuple((c, tuple(sorted(groups[c], key=lambda f: f.key))) for c in order)


def card(layer: str, store: MemoryStore, record: Conflict) -> Card:
    disk, mine = record.side("disk").get("text"), record.side("mine").get("text")
    sides = tuple(_side(store, name) for name in record.memories)
    return Card(layer, record, disk if isinstance(disk, str) else None,
                mine if isinstance(mine, str) else _fields_text(record), sides,
                moot_sides(store, record))


def _fields_text(record: Conflict) -> str | None:
    """A refused field edit has no text of its own: its fields, one per line."""
    fields = record.side("mine").get("fields")
    if not isinstance(fields, dict):
        return None
    return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items())


def _side(store: MemoryStore, name: str) -> Side:
    try:
        memory: Memory = store.get(name)
    except SagememError:
        return Side(name, None, "")
    return Side(memory.file, memory.text, memory.revision)


def plan_digest(plan: FixReport) -> str:
    """What the preview promised, so the post applies that plan or nothing."""
    rows = [(c.category, c.file, c.line, c.detail) for c in plan.changes]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:16]


# -- the actions (on the store thread) ------------------------------------------------------

def apply_action(store: MemoryStore, conflict_id: str, action: str, name: str,
                 successor: str | None) -> str:
    """One resolution, as ``sagemem conflicts resolve`` / ``delete`` make it; a line
    saying what was done."""
    if action == "delete":
        gone = conflicts.delete(store, conflict_id)
        return f"deleted {gone.id} ({gone.kind}, {gone.status}); nothing else changed"
    if action in ("keep_disk", "keep_mine"):
        record = resolve_keep(store, conflict_id, action.removeprefix("keep_"))
    elif action in ("invalidate", "undo"):
        record = resolve_invalidate(store, conflict_id, name, successor, undo=action == "undo")
    else:
        raise ValueError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    revision = str(record.applied_version or "")[:12]
    return f"{record.status} {record.id} ({record.decision}, revision {revision or '-'})"


def apply_fix(panel: Panel, cache: HealthCache, store: MemoryStore, digest: str) -> FixReport:
    """``audit --fix`` as previewed: the repairs are made only if the plan is the one
    shown (``plan_digest``); otherwise the new plan comes back as a dry run."""
    report = cache.health(store).report
    keep = settings_of(panel.layers).snapshot_keep  # a refused value stops the fix first
    return fix_confirmed(store, report, keep=keep, writer="library",
                         confirm=lambda plan: plan_digest(plan) == digest)


def _confirmation(panel: Panel, request: Request, layer: str, record: Conflict, action: str,
                  name: str, successor: str | None, counts: tuple[int, int]) -> HTMLResponse:
    """The first step: what the resolution will change, and the button that does it."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    return panel.page(request, "checkup_confirm.html", screen="checkup", layer=layer,
                      record=record, action=action, name=name, successor=successor or "",
                      change=_change(record, action, name, successor),
                      problems=counts[0], conflicts=counts[1])


def _change(record: Conflict, action: str, name: str, successor: str | None) -> str:
    file = record.file or ""
    return {
        "keep_disk": f"{file} stays as it is on disk; the record is closed",
        "keep_mine": f"{file} is overwritten with the refused version (a guarded write "
                     "against the disk revision the record holds)",
        "invalidate": f"{name} gets invalid_at = today"
                      + (f" and superseded_by = {successor}" if successor else "")
                      + " in its frontmatter (body untouched); the record is closed",
        "undo": f"the fields the invalidation added to {name} are taken back; the record "
                "opens again",
        "delete": "the record is removed without applying anything (irreversible); no "
                  "memory changes",
    }[action]
