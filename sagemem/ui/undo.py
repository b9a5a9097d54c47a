"""The Undo screen: snapshots with their diff against now and rollback, recover for an
interrupted operation, consolidation runs with their manifest and undo.

Every change takes two steps, as every mutating action of the panel does: a GET renders
a confirmation naming what will change (a rollback's own ``preview``), and only its form
POSTs. A rollback's confirmation carries a digest of the plan it showed; the POST plans
again and refuses when the folder moved on meanwhile — the person confirmed one list of
files, and a different one must be shown before it is applied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..dream import runs
from ..dream.manifest import group_of
from ..dream.recover import Finished, finish_interrupted
from ..dream.undo import UNDOABLE, UndoReport, undo_run
from ..errors import SagememError
from ..history import journal
from ..history.recover import Recovery, recover
from ..history.rollback import SCOPES, RollbackPlan, apply_rollback, plan_rollback, preview
from ..history.rollback_log import RollbackReport
from ..history.snapshot_diff import Comparison, compare, current_files, snapshot_diff
from ..history.snapshots import Snapshot, list_snapshots, load_snapshot
from ..store import MemoryStore
from ..writes import changelog
from .timeline import MAX_DIFF_LINES, DiffLine, badges, diff_line, store_of

if TYPE_CHECKING:
    from .app import Panel

WRITER = "ui" if "ui" in changelog.WRITERS else "library"
"""The name a rollback's journal lines carry: the panel's own once the library knows it
as a writer, "library" until then (an unknown name would read as no caller at all)."""
MAX_SNAPSHOTS = 50
"""The newest snapshots listed, each compared with the folder (one stat and hash pass
of the folder shared by all); older ones stay reachable by id (``/undo/snapshot``)."""
FACT_GROUPS = (("gone", "Gone", "no active memory holds these; read them first"),
               ("reworded", "Reworded", "a new line took each one's place"),
               ("archived", "Archived whole", "still in archive/"),
               ("unlisted", "Unlisted from MEMORY.md", "no index line names the memory now"))
"""The manifest's groups of lost lines (``dream.manifest._GROUPS``), in reading order."""


@dataclass(frozen=True)
class SnapshotRow:
    layer: str
    snapshot: Snapshot
    comparison: Comparison


@dataclass(frozen=True)
class RunRow:
    layer: str
    run_id: str
    manifest: dict[str, Any] | None
    problem: str | None

    @property
    def undoable(self) -> bool:
        m = self.manifest
        return m is not None and m.get("status") in UNDOABLE and bool(m.get("snapshot"))


@dataclass(frozen=True)
class Pending:
    """What ``recover`` would finish in one layer."""

    layer: str
    intents: tuple[str, ...]
    runs: tuple[str, ...]  # consolidation runs a kill left ``applying``


@dataclass(frozen=True)
class UndoPage:
    snapshots: tuple[SnapshotRow, ...]
    unreadable: tuple[str, ...]
    runs: tuple[RunRow, ...]
    pending: tuple[Pending, ...]
    layers: tuple[str, ...]


def routes(panel: Panel) -> list[Route]:
    cache = panel.health  # one audit per folder change for every screen

    def screen(template: str, compute: Callable[..., Any]
               ) -> Callable[[Request], Awaitable[HTMLResponse]]:
        """A handler: ``compute(store_or_panel, request, form)`` on the store thread, its
        value rendered with ``template``; a library refusal becomes a page saying it."""
        async def handle(request: Request) -> HTMLResponse:
            form = dict(parse_qsl((await request.body()).decode("utf-8", "replace"))) \
                if request.method == "POST" else {}
            problems, conflicts = await panel.run(badges, panel, cache)
            shared: dict[str, Any] = dict(screen="undo", problems=problems,
                                          conflicts=conflicts)
            try:
                page = await panel.run(compute, panel, request, form)
            except SagememError as exc:
                return panel.page(request, "undo_problem.html", status=409, why=str(exc),
                                  **shared)
            if page is None:
                return panel.page(request, "undo_problem.html", status=404,
                                  why="There is no such layer here.", **shared)
            return panel.page(request, template, page=page, **shared)
        return handle

    return [
        Route("/undo", screen("undo.html", undo_page)),
        Route("/undo/snapshot/{layer}/{snapshot_id}", screen("undo_snapshot.html",
                                                             snapshot_page)),
        Route("/undo/rollback", screen("undo_rollback.html", rollback_confirmation)),
        Route("/undo/rollback", screen("undo_rolled_back.html", rollback_applied),
              methods=["POST"]),
        Route("/undo/recover", screen("undo_recover.html", recover_confirmation)),
        Route("/undo/recover", screen("undo_recovered.html", recovered), methods=["POST"]),
        Route("/undo/run/{layer}/{run_id}", screen("undo_run.html", run_page)),
        Route("/undo/run/{layer}/{run_id}/undo", screen("undo_run_confirm.html", run_page)),
        Route("/undo/run/{layer}/{run_id}/undo", screen("undo_run_undone.html", run_undone),
              methods=["POST"]),
    ]


# -- reading -------------------------------------------------------------------------------

def undo_page(panel: Panel, _request: Request, _form: dict[str, str]) -> UndoPage:
    """Snapshots newest first with what differs now, runs newest first, and what an
    interrupted operation left for ``recover`` — over every layer."""
    snapshots: list[SnapshotRow] = []
    unreadable: list[str] = []
    found: list[RunRow] = []
    pending: list[Pending] = []
    for layer, store in panel.layers.stores():
        listing = list_snapshots(store)
        unreadable += [f"{layer}: snapshot {i}" for i in listing.unreadable]
        now = current_files(store)
        snapshots += [SnapshotRow(layer, s, compare(store, s, now))
                      for s in reversed(listing.snapshots[-MAX_SNAPSHOTS:])]
        found += [RunRow(layer, *item) for item in runs.readable_manifests(store.state_dir)]
        waiting = pending_of(layer, store)
        if waiting.intents or waiting.runs:
            pending.append(waiting)
    found.sort(key=lambda r: r.run_id, reverse=True)
    return UndoPage(tuple(snapshots), tuple(unreadable), tuple(found), tuple(pending),
                    tuple(n for n, _ in panel.layers.stores()))


def pending_of(layer: str, store: MemoryStore) -> Pending:
    intents, damaged = journal.pending(store.state_dir)
    said = [journal.describe(i) for i in intents] + \
        [f"a damaged journal entry {d.path.name}: {d.problem}" for d in damaged]
    applying = []
    for run_id in runs.run_ids(store.state_dir):
        try:
            status = runs.read_json(runs.folder_of(store.state_dir, run_id), runs.STATUS_FILE)
        except SagememError:
            continue
        if status and status.get("status") == "applying":
            applying.append(run_id)
    return Pending(layer, tuple(said), tuple(applying))


@dataclass(frozen=True)
class SnapshotPage:
    layer: str
    snapshot: Snapshot
    comparison: Comparison
    diff: tuple[DiffLine, ...]
    cut: bool
    scopes: tuple[str, ...] = SCOPES


def snapshot_page(panel: Panel, request: Request, _form: dict[str, str]) -> SnapshotPage | None:
    """One snapshot: what differs from now, as a unified diff of every such file."""
    layer = request.path_params["layer"]
    store = store_of(panel, layer)
    if store is None:
        return None
    snapshot = load_snapshot(store, request.path_params["snapshot_id"])
    lines = snapshot_diff(store, snapshot).splitlines(keepends=True)
    return SnapshotPage(layer, snapshot, compare(store, snapshot),
                        tuple(diff_line(line) for line in lines[:MAX_DIFF_LINES]),
                        len(lines) > MAX_DIFF_LINES)


# -- rollback ------------------------------------------------------------------------------

@dataclass(frozen=True)
class RollbackConfirmation:
    layer: str
    plan: RollbackPlan
    preview: RollbackReport
    digest: str
    moved_on: bool = False
    """The POST found a different plan than the one confirmed: shown again, nothing done."""


@dataclass(frozen=True)
class RolledBack:
    layer: str
    report: RollbackReport
    writer: str = WRITER


def plan_digest(plan: RollbackPlan) -> str:
    """What the confirmation showed, as one value: each restore and move with the bytes
    it replaces and restores."""
    parts = [f"r\0{r.file}\0{r.entry.sha256}\0{r.seen}" for r in plan.restores]
    parts += [f"m\0{m.file}\0{m.seen}" for m in plan.moves]
    return hashlib.sha256("\n".join([plan.snapshot.id, plan.scope, *parts]).encode()
                          ).hexdigest()[:32]


def _planned(panel: Panel, given: dict[str, str]
             ) -> tuple[str, MemoryStore, RollbackPlan] | None:
    layer = given.get("layer", "") or "project"
    store = store_of(panel, layer)
    if store is None:
        return None
    scope = given.get("scope", "touched")
    plan = plan_rollback(store, given.get("snapshot", ""),
                         scope if scope in SCOPES else "touched")
    return layer, store, plan


def rollback_confirmation(panel: Panel, request: Request, _form: dict[str, str]
                          ) -> RollbackConfirmation | None:
    """What a rollback would do (its dry run); changes nothing."""
    planned = _planned(panel, dict(request.query_params))
    if planned is None:
        return None
    layer, _, plan = planned
    return RollbackConfirmation(layer, plan, preview(plan), plan_digest(plan))


def rollback_applied(panel: Panel, _request: Request, form: dict[str, str]
                     ) -> RolledBack | RollbackConfirmation | None:
    """The rollback confirmed — if the plan is still the one shown, else shown again."""
    planned = _planned(panel, form)
    if planned is None:
        return None
    layer, store, plan = planned
    if plan_digest(plan) != form.get("digest"):
        return RollbackConfirmation(layer, plan, preview(plan), plan_digest(plan), True)
    return RolledBack(layer, apply_rollback(store, plan, writer=WRITER))


# -- recover -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Recovered:
    layer: str
    recoveries: tuple[Recovery, ...]
    finished: tuple[Finished, ...]


def recover_confirmation(panel: Panel, _request: Request, _form: dict[str, str]
                         ) -> tuple[Pending, ...]:
    return tuple(pending_of(layer, store) for layer, store in panel.layers.stores())


def recovered(panel: Panel, _request: Request, _form: dict[str, str]) -> tuple[Recovered, ...]:
    """``sagemem recover`` in every layer: interrupted operations finished forward,
    then the manifest of every consolidation run a kill cut short."""
    return tuple(Recovered(layer, tuple(recover(store)), tuple(finish_interrupted(store)))
                 for layer, store in panel.layers.stores())


# -- consolidation runs --------------------------------------------------------------------

@dataclass(frozen=True)
class RunPage:
    layer: str
    run_id: str
    manifest: dict[str, Any] | None
    """None: a run killed before it wrote one (``recover`` writes it)."""
    facts: tuple[tuple[str, str, tuple[dict[str, Any], ...]], ...]
    """(title, meaning, lost lines) per group of "Facts no longer present"."""
    undoable: bool
    created: tuple[str, ...]
    restored: tuple[str, ...]
    """What an undo would bring back: the files it changed, apart from those it created."""


def run_page(panel: Panel, request: Request, _form: dict[str, str]) -> RunPage | None:
    """One run's manifest, its lost lines grouped as the Markdown report groups them."""
    layer = request.path_params["layer"]
    store = store_of(panel, layer)
    if store is None:
        return None
    run = runs.find_run(store.state_dir, request.path_params["run_id"])
    manifest = runs.load_manifest(run)
    lost = list((manifest or {}).get("deleted_facts") or [])
    facts = tuple((title, meaning, tuple(f for f in lost if group_of(f) == group))
                  for group, title, meaning in FACT_GROUPS)
    created = tuple(str(o["file"]) for o in (manifest or {}).get("applied") or []
                    if o.get("op") == "create")
    changed = tuple(str(f) for f in (manifest or {}).get("changed") or {})
    return RunPage(layer, run.run_id, manifest, facts,
                   RunRow(layer, run.run_id, manifest, None).undoable, created,
                   tuple(f for f in changed if f not in created))


@dataclass(frozen=True)
class RunUndone:
    layer: str
    report: UndoReport


def run_undone(panel: Panel, request: Request, _form: dict[str, str]) -> RunUndone | None:
    """``dream undo RUN``: the files the run changed back at its rollback point."""
    layer = request.path_params["layer"]
    store = store_of(panel, layer)
    if store is None:
        return None
    return RunUndone(layer, undo_run(store, request.path_params["run_id"]))
