"""Finishing the account of a run a kill -9 cut short.

Each operation is one guarded write, whole or not at all, and each is appended to the
run's progress as it lands; the rollback point was taken before the first. So what a
killed run leaves is a folder with some operations applied and a run still marked
``applying`` whose lock died with its process. ``finish_interrupted`` (called by every
``dream`` command and by ``sagemem recover``) writes that run's manifest from the diff
against its rollback point — status ``interrupted``, cut short on its first line — so
the lost-facts account is never skipped, and ``dream undo`` can return to the point.
``dream run``, ``dream undo`` and ``sagemem recover`` call it; ``dream history`` lists
such a run as interrupted-without-a-manifest until one of them has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..errors import RunInProgress, SagememError
from ..files.paths import INDEX_FILE
from ..history.snapshots import load_snapshot
from ..store import MemoryStore
from . import runs
from .apply import Outcome, change_of
from .plan import Operation, Plan, loads
from .run import read_texts, texts_of


@dataclass(frozen=True)
class Finished:
    """An interrupted run whose manifest was written now (or why it could not be)."""

    run_id: str
    applied: int
    planned: int
    problem: str | None = None


def finish_interrupted(store: MemoryStore) -> list[Finished]:
    """Write the manifest of every run a killed process left ``applying``."""
    done: list[Finished] = []
    for run_id in runs.run_ids(store.state_dir):
        run = runs.folder_of(store.state_dir, run_id)
        try:
            status = runs.read_json(run, runs.STATUS_FILE)
        except SagememError:
            continue
        if not status or status.get("status") != "applying":
            continue
        try:
            with runs.run_lock(store.state_dir):
                from ..history.recover import recover

                recover(store)  # a batch of archives it was moving: finished first
                done.append(_finish(store, run, status))
        except RunInProgress:
            continue  # its process is alive and applying: not ours to finish
        except SagememError as exc:
            done.append(Finished(run_id, 0, 0, str(exc)))
    return done


def _finish(store: MemoryStore, run: runs.RunFolder, status: dict[str, Any]) -> Finished:
    from .run import finish_run, settle

    plan = loads(run.file(runs.PLAN_FILE).read_bytes(), planner="file")
    notes = status.get("notes")
    common = dict(run_id=run.run_id, planner=plan.planner, started=str(status["started"]),
                  ceiling=status.get("ceiling", 0.25), audit_before=status["audit_before"],
                  notes=list(notes) if isinstance(notes, list) else [])
    if not status.get("snapshot"):  # killed while its rollback point was being taken
        return _before_any_write(store, run, plan, common)
    snapshot = load_snapshot(store, str(status["snapshot"]))
    before, index_before = texts_of(snapshot)
    now, _ = read_texts(store)
    outcomes = [_outcome(store, number, op, before, now, index_before)
                for number, op in enumerate(plan.operations, 1)]
    applied = sum(1 for o in outcomes if o.status == "applied")
    common["cut_short"] = (f"this run was interrupted after {applied} of {len(outcomes)} "
                           f"operations; `sagemem dream undo {run.run_id}` returns the folder "
                           "to its rollback point")
    item = settle(store, run, outcomes, before, index_before, snapshot.id, common,
                  status="interrupted")
    finish_run(store, run, item, in_folder=True)
    return Finished(run.run_id, applied, len(outcomes))


def _before_any_write(store: MemoryStore, run: runs.RunFolder, plan: Plan,
                      common: dict[str, Any]) -> Finished:
    """A run killed before its rollback point existed wrote nothing: its manifest says so."""
    from . import manifest as manifests
    from .run import finish_run

    outcomes = [Outcome(n, op, "refused", "not applied: the run was interrupted first")
                for n, op in enumerate(plan.operations, 1)]
    item = manifests.build(**common, mode="apply", status="interrupted",
                           cut_short="this run was interrupted before its rollback point was "
                                     "taken; nothing in the folder changed",
                           finished=datetime.now(timezone.utc).isoformat(), outcomes=outcomes,
                           lost=(), loss_share=0.0, prior_lines=0, snapshot=None,
                           audit_after=None)
    finish_run(store, run, item, in_folder=False)
    return Finished(run.run_id, 0, len(outcomes))


def _outcome(store: MemoryStore, number: int, op: Operation, before: Mapping[str, str],
             now: Mapping[str, str], index_before: str) -> Outcome:
    """Applied if the folder shows it (its file differs from the rollback point): the
    progress a run appends after each write can miss the last one a kill cut short."""
    if op.file == INDEX_FILE:
        changed = store.read_index()[0] != index_before
    elif op.op == "archive":
        changed = op.file in before and op.file not in now and _archived_now(store, op.file)
    else:
        changed = now.get(op.file) is not None and now.get(op.file) != before.get(op.file)
    if not changed:
        return Outcome(number, op, "refused", "not applied: the run was interrupted first")
    size, lines = change_of(index_before if op.file == INDEX_FILE else before.get(op.file),
                            None if op.op == "archive" else
                            store.read_index()[0] if op.file == INDEX_FILE else now.get(op.file))
    return Outcome(number, op, "applied", bytes=size, lines=lines)


def _archived_now(store: MemoryStore, file: str) -> bool:
    try:
        return store.existing_name(file) is None and \
            store.existing_name(file, archived=True) is not None
    except SagememError:
        return False
