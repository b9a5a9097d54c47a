"""``dream run``: a plan reported, or applied after a rollback point, with its manifest.

Without ``apply`` nothing in the folder changes: the forecast is the report, kept in
the state directory. An applying run is refused whole, before any write, when its
rewrites would leave more than the ceiling's share of their prior lines absent from
every active memory (``allow_loss`` lifts it). Otherwise, holding the run lock, it takes
a snapshot bound to its run id (the rollback point ``dream undo`` returns to), records
that it is applying, applies each operation as a guarded write, appending each to the
run's progress as it lands, then diffs the folder against the rollback point: the
manifest's "Facts no longer present" is that diff, never the planner's account. The
Markdown manifest also lands in the memory folder's ``dream/`` — outside every search,
injection and audit, which read only the folder's top level — where a person reviewing
the folder in git sees it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..audit.report import AuditReport, audit
from ..config import Settings
from ..errors import RunIncomplete, SagememError
from ..files.atomic import atomic_write, make_folder
from ..files.memory import decode
from ..files.paths import INDEX_FILE, name_key, safe_read
from ..history import journal
from ..history.locks import locked_names
from ..history.manifest import Snapshot, read_copy
from ..history.snapshots import create_snapshot, rotate_snapshots
from ..search.progress import Progress, named
from ..store import MemoryStore
from . import manifest as manifests
from . import runs
from .apply import Outcome, apply_archives, apply_operation
from .forecast import Check, Forecast, forecast
from .lines import lost_lines, prior_line_count, unindexed
from .plan import Operation, Plan

FOLDER_REPORTS = "dream"
"""The memory folder's subfolder for the Markdown manifests of applied runs."""
SNAPSHOT_KIND = "dream"


@dataclass(frozen=True)
class RunReport:
    """A finished run: its manifest (the JSON ``dream show`` prints) and its report."""

    manifest: Mapping[str, Any]
    text: str

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    @property
    def status(self) -> str:
        return str(self.manifest["status"])


def read_texts(store: MemoryStore) -> tuple[dict[str, str], list[str]]:
    """Every live memory's text by file name, and a note for each that cannot be read
    (it is neither planned over nor counted: never guessed at)."""
    texts: dict[str, str] = {}
    notes: list[str] = []
    for name in store.files():
        try:
            texts[name] = decode(safe_read(store.directory, name,
                                           max_bytes=store.max_bytes).data, name)
        except SagememError as exc:
            notes.append(f"{name} left out: {exc}")
    return texts, notes


def dream_run(store: MemoryStore, settings: Settings, plan: Plan, *, apply: bool = False,
              allow_loss: bool = False, now: datetime | None = None,
              notes: Sequence[str] = (), cut_short: str | None = None,
              audit_before: AuditReport | None = None,
              progress: Progress | None = None) -> RunReport:
    """Report on ``plan`` or, with ``apply``, carry it out (see the module doc).
    ``cut_short``: why the plan itself is incomplete (a truncated planner), said first;
    ``audit_before``: the folder's audit if the planner just ran it; ``progress``: told
    of the rollback point's copies (``"snapshot"``) and the operations (``"applying"``)."""
    from .recover import finish_interrupted

    store.require_directory()
    finish_interrupted(store)
    plan = redacted(on_disk_names(plan, store))
    started = _utc(now)
    run_id = runs.new_run_id(started)
    before, unread = read_texts(store)
    predicted = forecast(plan, before, store.read_index(), locked_names(store),
                         unreadable=frozenset(store.files()) - set(before),
                         archived=frozenset(name_key(f) for f in _archive_names(store)))
    ceiling = settings.dream_max_loss_percent / 100
    summary = manifests.audit_summary(audit_before if audit_before is not None
                                      else audit(store))
    run = runs.create_run(store.state_dir, run_id)
    runs.write_text(run, runs.PLAN_FILE, plan.dumps())
    common: dict[str, Any] = dict(run_id=run_id, planner=plan.planner, started=started.isoformat(),
                                  ceiling=ceiling, audit_before=summary,
                                  notes=[*plan.notes, *notes, *unread], cut_short=cut_short)
    if not apply:
        return finish_run(store, run, _forecast_manifest(predicted, "report", "report", common),
                       in_folder=False)
    if max(predicted.loss_share, predicted.archive_share) > ceiling and not allow_loss:
        return finish_run(store, run, _refused(predicted, common), in_folder=False)
    if all(check.final for check in predicted.checks):  # nothing to write: no rollback
        item = _forecast_manifest(predicted, "apply", "applied", common)  # point, no report
        item["notes"].append("Nothing to apply: the folder is unchanged.")  # in the folder
        return finish_run(store, run, item, in_folder=False)
    with runs.run_lock(store.state_dir):
        return _apply(store, settings, run, plan, predicted, common, progress)


def redacted(plan: Plan) -> Plan:
    """The plan with its secrets taken out first, as every write would take them out: so
    neither the run's plan.json, nor its forecast, nor a report ever holds one."""
    from dataclasses import replace

    from ..writes.redact import redact, redact_memory, redact_reason

    return Plan(tuple(replace(o, reason=redact_reason(o.reason) or "",
                              text=None if o.text is None else redact_memory(o.text).text)
                      for o in plan.operations), plan.planner,
                tuple(redact(n).text for n in plan.notes))


def on_disk_names(plan: Plan, store: MemoryStore) -> Plan:
    """Each operation on a memory named as it is spelt on disk (``User_Pets.md`` is
    ``user_pets.md``): the store writes the one on disk, so the forecast, the manifest and
    the undo must speak of that one too."""
    from dataclasses import replace

    def spelt(op: Operation) -> Operation:
        if op.file == INDEX_FILE:
            return op
        try:
            on_disk = store.existing_name(op.file)
        except SagememError:  # several files are that name: the guard refuses it, said so
            return op
        return op if on_disk is None or on_disk == op.file else replace(op, file=on_disk)

    return Plan(tuple(spelt(o) for o in plan.operations), plan.planner, plan.notes)


def _archive_names(store: MemoryStore) -> list[str]:
    try:
        return store.files(archived=True)
    except SagememError:  # a symlinked archive/: every archive is refused there anyway
        return []


def _forecast_manifest(predicted: Forecast, mode: str, status: str,
                       common: Mapping[str, Any]) -> dict[str, Any]:
    return manifests.build(**common, mode=mode, status=status, finished=_utc(None).isoformat(),
                           outcomes=[c.outcome for c in predicted.checks],
                           lost=predicted.lost, loss_share=predicted.loss_share,
                           prior_lines=predicted.prior_lines, snapshot=None,
                           audit_after=None, worst=predicted.worst,
                           archive_share=predicted.archive_share,
                           folder_lines=predicted.folder_lines)


def _refused(predicted: Forecast, common: Mapping[str, Any]) -> dict[str, Any]:
    item = _forecast_manifest(predicted, "apply", "refused", common)
    ceiling = item["loss_ceiling"]
    if predicted.loss_share > ceiling:
        worst = ", ".join(f"operation {n} ({f}: {c} lines)" for n, f, c in predicted.worst[:3])
        why = (f"the rewrites would leave {predicted.loss_share:.1%} of their "
               f"{predicted.prior_lines} prior lines absent from every active memory, over "
               f"the {ceiling:.0%} ceiling; worst: {worst}")
    else:
        why = (f"the archives would take {predicted.archive_share:.1%} of the folder's "
               f"{predicted.folder_lines} lines out of the active memories, over the "
               f"{ceiling:.0%} ceiling")
    item["notes"].insert(0, f"Refused: {why}. Nothing was written. Review the facts below; "
                            "run again with --allow-loss to apply anyway.")
    return item


def _apply(store: MemoryStore, settings: Settings, run: runs.RunFolder, plan: Plan,
           predicted: Forecast, common: Mapping[str, Any], progress: Progress | None
           ) -> RunReport:
    journal.require_none_pending(store.state_dir)  # a half-done archive must be finished
    snapshot = _rollback_point(store, run, plan, common, progress)
    try:
        before, index_before = texts_of(snapshot)
        outcomes = _apply_all(store, run, predicted, {**before, INDEX_FILE: index_before},
                              progress)
        item = settle(store, run, outcomes, before, index_before, snapshot.id, common,
                      status="applied")
        _rotate(store, settings.dream_keep_runs, snapshot.id)
        return finish_run(store, run, item, in_folder=True)
    except SagememError as exc:  # a full disk, a read-only state directory, mid-way
        raise RunIncomplete(run.run_id, snapshot.id, str(exc)) from exc


def _rollback_point(store: MemoryStore, run: runs.RunFolder, plan: Plan,
                    common: Mapping[str, Any], progress: Progress | None) -> Snapshot:
    """The snapshot bound to the run, the run marked ``applying`` before it is taken (a
    kill from then on is recovered: ``recover.py``)."""
    status = {"status": "applying", "snapshot": None, "started": common["started"],
              "operations": len(plan.operations), "audit_before": common["audit_before"],
              "ceiling": common["ceiling"], "notes": common["notes"]}
    runs.write_json(run, runs.STATUS_FILE, status)
    snapshot = create_snapshot(store, kind=SNAPSHOT_KIND, run_id=run.run_id,
                               label=f"before dream run {run.run_id}",
                               reason=f"rollback point of consolidation run {run.run_id}",
                               progress=named(progress, "snapshot"))
    runs.write_json(run, runs.STATUS_FILE, {**status, "snapshot": snapshot.id})
    return snapshot


def texts_of(snapshot: Snapshot) -> tuple[dict[str, str], str]:
    """The memories' texts and MEMORY.md's as the rollback point holds them: what the run
    is diffed against, whatever an editor saved while it was being taken."""
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
    return before, index_before


def _apply_all(store: MemoryStore, run: runs.RunFolder, predicted: Forecast,
               texts: Mapping[str, str], progress: Progress | None) -> list[Outcome]:
    """Every operation not refused outright, MEMORY.md's first, archives in batches; each
    applied one appended to the run's progress as it lands."""
    outcomes: list[Outcome] = []
    for group in _groups(sorted(predicted.checks, key=_index_first)):
        if progress is not None:
            progress(len(outcomes), len(predicted.checks), "applying")
        if group[0].final:
            outcomes += [check.outcome for check in group]
            continue
        ops = [(c.outcome.number, c.outcome.operation) for c in group]
        done = apply_archives(store, ops, run_id=run.run_id, before=texts) \
            if ops[0][1].op == "archive" else \
            [apply_operation(store, n, op, run_id=run.run_id, before=texts) for n, op in ops]
        for outcome in done:
            if outcome.status == "applied":
                runs.append_progress(run, outcome.to_json())
        outcomes += done
    if progress is not None:
        progress(len(outcomes), len(predicted.checks), "applying")
    return sorted(outcomes, key=lambda o: o.number)



def _groups(checks: Sequence[Check]) -> list[list[Check]]:
    """Consecutive archives to apply together (one MEMORY.md edit for them all); every
    other operation alone; final refusals as they are."""
    groups: list[list[Check]] = []
    for check in checks:
        archive = not check.final and check.outcome.operation.op == "archive"
        last = groups[-1] if groups else None
        if archive and last and not last[0].final and last[0].outcome.operation.op == "archive":
            last.append(check)
        else:
            groups.append([check])
    return groups


def _index_first(check: Check) -> tuple[bool, int]:
    """MEMORY.md's rewrite goes first: every archive and create of the run edits
    MEMORY.md too, and would leave the rewrite's planned revision behind."""
    return check.outcome.operation.file != INDEX_FILE, check.outcome.number


def settle(store: MemoryStore, run: runs.RunFolder, outcomes: Sequence[Outcome],
           before: Mapping[str, str], index_before: str, snapshot_id: str,
           common: Mapping[str, Any], *, status: str) -> dict[str, Any]:
    """The manifest of applied operations, from the diff of ``before`` and the folder now."""
    after, _ = read_texts(store)
    applied = [o for o in outcomes if o.status == "applied"]
    touched = [o.operation.file for o in applied if o.operation.file != INDEX_FILE]
    archived = [o.operation.file for o in applied if o.operation.op == "archive"]
    rewritten = [o.operation.file for o in applied if o.operation.op == "rewrite"
                 and o.operation.file != INDEX_FILE]
    lost = lost_lines(before, after, touched, archived=archived)
    prior = prior_line_count(before, rewritten)
    folder = prior_line_count(before, before)
    dropped = sum(1 for line in lost if line.dropped)
    archived_lines = sum(1 for line in lost if line.archived)
    changed = _changed(store, before, after, index_before, touched)
    lost += unindexed(index_before, store.read_index()[0], after)
    return manifests.build(**common, mode="apply", status=status,
                           finished=_utc(None).isoformat(), outcomes=outcomes, lost=lost,
                           loss_share=dropped / prior if prior else 0.0, prior_lines=prior,
                           snapshot=snapshot_id,
                           audit_after=manifests.audit_summary(audit(store)),
                           changed=changed,
                           archive_share=archived_lines / folder if folder else 0.0,
                           folder_lines=folder)


def _changed(store: MemoryStore, before: Mapping[str, str], after: Mapping[str, str],
             index_before: str, touched: Sequence[str]) -> dict[str, str | None]:
    """Each file the run changed and its revision after (None: no longer in the folder):
    what ``dream undo`` checks a file against before it puts the old bytes back."""
    from ..files.revision import revision_of

    def rev(text: str | None) -> str | None:
        return None if text is None else revision_of(text.encode("utf-8"))

    changed = {f: rev(after.get(f)) for f in sorted(set(touched))
               if rev(before.get(f)) != rev(after.get(f))}
    index_now, index_revision = store.read_index()
    if index_now != index_before:
        changed[INDEX_FILE] = index_revision
    return changed


def _rotate(store: MemoryStore, keep: int, spare: str) -> None:
    with store.locked():
        rotate_snapshots(store, keep, spare=spare, kinds=(SNAPSHOT_KIND,))


def finish_run(store: MemoryStore, run: runs.RunFolder, item: dict[str, Any], *,
            in_folder: bool) -> RunReport:
    """Write the manifest (JSON and Markdown) to the run's folder and, for a run that
    changed the folder, the Markdown to the memory folder's ``dream/``."""
    text = manifests.render(item)
    if in_folder:
        problem = write_folder_report(store.directory, run.run_id, text)
        if problem:
            item["notes"].append(problem)
            text = manifests.render(item)
    runs.write_json(run, runs.MANIFEST_FILE, item)
    runs.write_text(run, runs.REPORT_FILE, text)
    runs.write_json(run, runs.STATUS_FILE, {"status": item["status"],
                                            "snapshot": item.get("snapshot")})
    return RunReport(item, text)


def write_folder_report(directory: Path, run_id: str, text: str) -> str | None:
    """``dream/<run id>.md`` in the memory folder; a note (not an error) when it cannot
    be written there — the run's own copy is in the state directory."""
    folder = directory / FOLDER_REPORTS
    try:
        make_folder(folder, parents=False)
        atomic_write(folder / f"{run_id}.md", text.encode("utf-8"), create=False)
    except SagememError as exc:
        return f"the report could not be written to the folder's {FOLDER_REPORTS}/ ({exc}); " \
               "it is kept in the state directory"
    return None


def _utc(now: datetime | None) -> datetime:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
