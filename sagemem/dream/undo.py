"""``dream undo RUN``: the folder back at the run's rollback point, byte for byte.

Only what the run changed goes back, and only where it is still as the run left it:
the manifest holds each changed file's revision after the run, and a file edited since
(by a person, an agent, a later run) is reported and left, as ``rollback`` leaves it.
The restoring is the snapshot machinery's own (``plan_rollback``/``apply_rollback``:
a protection snapshot first, every restore guarded, the change journal written); a file
the run created goes to ``archive/``, as a rollback moves a file added since — nothing
is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..errors import RunNotUndoable
from ..history.rollback import Move, apply_rollback, plan_rollback
from ..history.rollback_log import RollbackReport, Skip
from ..store import MemoryStore
from . import runs
from .run import write_folder_report

UNDOABLE = ("applied", "interrupted")


@dataclass(frozen=True)
class UndoReport:
    run_id: str
    rollback: RollbackReport
    left: tuple[Skip, ...]
    """Files the run changed that were changed again since: left as they are."""

    def to_json(self) -> dict[str, Any]:
        from ..history.rollback_log import report_json

        return {"run_id": self.run_id, "rollback": report_json(self.rollback),
                "left": [vars(s) for s in self.left]}


def undo_run(store: MemoryStore, given: str, *, now: datetime | None = None) -> UndoReport:
    """Undo the run ``given`` names (a prefix will do); RunNotFound, RunNotUndoable."""
    from .recover import finish_interrupted

    store.require_directory()  # else a mistyped folder reads as "no such run"
    finish_interrupted(store)
    run = runs.find_run(store.state_dir, given)
    item = runs.load_manifest(run)
    status = "unknown" if item is None else str(item.get("status"))
    if item is None or status not in UNDOABLE:
        raise RunNotUndoable(run.run_id, status)
    if not item.get("snapshot"):
        raise RunNotUndoable(run.run_id, "empty")
    changed: dict[str, str | None] = dict(item.get("changed") or {})
    created = {o["file"]: o.get("after_revision") for o in item["applied"]
               if o["op"] == "create"}
    with runs.run_lock(store.state_dir):
        plan = plan_rollback(store, str(item["snapshot"]), "all")
        restores, left = [], []
        for restore in plan.restores:
            if restore.file not in changed:
                continue  # not the run's change: somebody else's since, left alone
            if restore.seen != changed[restore.file]:
                left.append(Skip(restore.file, "changed_since",
                                 "changed after the run; left as it is"))
                continue
            restores.append(restore)
        moves = [Move(m.file, m.seen) for m in plan.moves
                 if m.file in created and created[m.file] == m.seen]
        left += [Skip(f, "changed_since", "created by the run and changed since; left")
                 for f in created if f not in {m.file for m in moves}]
        mine = replace(plan, restores=tuple(restores), moves=tuple(moves), skips=(),
                       left=())
        report = apply_rollback(store, mine, now=now, writer="consolidation")
        _mark_undone(store, run, item, report, left)
    return UndoReport(run.run_id, report, tuple(left))


def _mark_undone(store: MemoryStore, run: runs.RunFolder, item: dict[str, Any],
                 report: RollbackReport, left: list[Skip]) -> None:
    from . import manifest as manifests

    when = datetime.now(timezone.utc).isoformat()
    item["status"] = "undone"
    item["undone"] = {"time": when, "restored": list(report.restored),
                      "moved": list(report.moved), "left": [vars(s) for s in left],
                      "protection": report.protection_id}
    kept = f"; left (changed since): {', '.join(s.file for s in left)}" if left else ""
    item["notes"].append(f"Undone {when}: {len(report.restored)} files restored, "
                         f"{len(report.moved)} created files moved to archive/{kept}.")
    text = manifests.render(item)
    runs.write_json(run, runs.MANIFEST_FILE, item)
    runs.write_text(run, runs.REPORT_FILE, text)
    runs.write_json(run, runs.STATUS_FILE, {"status": "undone",
                                            "snapshot": item.get("snapshot")})
    write_folder_report(store.directory, run.run_id, text)
