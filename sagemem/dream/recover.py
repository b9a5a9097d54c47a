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

from dataclasses import dataclass

from ..errors import RunInProgress, SagememError
from ..files.memory import decode
from ..files.paths import INDEX_FILE
from ..history.manifest import read_copy
from ..history.snapshots import load_snapshot
from ..store import MemoryStore
from . import runs
from .apply import Outcome
from .plan import loads


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


def _finish(store: MemoryStore, run: runs.RunFolder, status: dict[str, object]) -> Finished:
    from .run import _finish as write_manifest
    from .run import settle

    plan = loads(run.file(runs.PLAN_FILE).read_bytes(), planner="file")
    snapshot = load_snapshot(store, str(status["snapshot"]))
    before: dict[str, str] = {}
    index_before = ""
    for entry in snapshot.files:
        data = read_copy(snapshot, entry)
        if data is None:
            continue
        if entry.name == INDEX_FILE:
            index_before = decode(data, entry.name)
        else:
            before[entry.name] = decode(data, entry.name)
    landed = {int(item["number"]): item for item in runs.read_progress(run)
              if isinstance(item.get("number"), int)}
    outcomes = [_outcome(store, number, op, landed.get(number))
                for number, op in enumerate(plan.operations, 1)]
    applied = sum(1 for o in outcomes if o.status == "applied")
    cut = (f"this run was interrupted after {applied} of {len(outcomes)} operations; "
           f"`sagemem dream undo {run.run_id}` returns the folder to its rollback point")
    notes = status.get("notes")
    common = dict(run_id=run.run_id, planner=plan.planner, started=str(status["started"]),
                  ceiling=status.get("ceiling", 0.25), audit_before=status["audit_before"],
                  notes=list(notes) if isinstance(notes, list) else [], cut_short=cut)
    item = settle(store, run, outcomes, before, index_before, snapshot.id, common,
                  status="interrupted")
    write_manifest(store, run, item, in_folder=True)
    return Finished(run.run_id, applied, len(outcomes))


def _archived_now(store: MemoryStore, file: str) -> bool:
    try:
        return store.existing_name(file) is None and \
            store.existing_name(file, archived=True) is not None
    except SagememError:
        return False


def _outcome(store: MemoryStore, number: int, op: object, landed: dict[str, object] | None
             ) -> Outcome:
    from .plan import Operation

    assert isinstance(op, Operation)
    if landed is None and op.op == "archive" and _archived_now(store, op.file):
        return Outcome(number, op, "applied")  # its batch moved it; the kill came first
    if landed is None:
        return Outcome(number, op, "refused", "not applied: the run was interrupted first")
    return Outcome(number, op, "applied", bytes=int(str(landed.get("bytes", 0))),
                   lines=int(str(landed.get("lines", 0))),
                   after_revision=landed.get("after_revision")  # type: ignore[arg-type]
                   )

