"""``snapshot create|list|show|diff``, ``rollback`` and ``recover``: copies of the memory
directory to go back to, going back without deleting anything, and finishing what a
killed process left half done. They register on the one ``app`` of ``base.py``;
``main.py`` imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import JSON_VERSION
from ..files.plural import counted
from . import base as cli
from .base import (
    GlobalOption,
    JsonOption,
    YesOption,
    app,
    echo,
    echo_json,
    echo_lines,
    progress_bar,
)
from .output import wrap

if TYPE_CHECKING:  # the library is imported by the commands that use it: every other
    # command, the hook on each prompt included, would otherwise pay for loading it
    from ..history.rollback import RollbackReport
    from ..history.snapshot_diff import Comparison
    from ..history.snapshots import Snapshot

# Skips that leave the directory short of the snapshot against the user's wish (a write
# that met a newer edit, or an OS failure) make the exit code 1; locked, collision and the
# like are the rules working as documented.
INCOMPLETE_CODES = frozenset({"conflict", "failed", "damaged"})
snapshot_app = typer.Typer(no_args_is_help=True,
                           help="Snapshots of the memory directory, to roll back to.")
app.add_typer(snapshot_app, name="snapshot")
IdArgument = Annotated[str, typer.Argument(help="Snapshot id (a unique prefix is enough).")]


@snapshot_app.command("create")
def snapshot_create(
    ctx: typer.Context,
    label: Annotated[str | None, typer.Option("--label", help="A note to find it by.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Say what would be copied and rotated away; write nothing.")] = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Copy every memory file and MEMORY.md into <state>/snapshots/<id>/, then keep only
    the newest snapshot_keep manual and auto snapshots (protection snapshots are kept
    apart; snapshot_keep = 0 keeps them all); the ones rotated away are named."""
    from ..history.snapshots import (
        create_snapshot,
        memory_file_names,
        rotation_victims,
        snapshot_json,
    )

    store, keep = ctx.obj.store(global_=global_), ctx.obj.settings().snapshot_keep
    if dry_run:
        files = len(memory_file_names(store))
        rotated = rotation_victims(store, keep, one_more=True)
        if as_json:
            echo_json({"version": JSON_VERSION, "dry_run": True, "file_count": files,
                       "rotated": list(rotated)})
        else:
            echo(f"would copy {counted(files, 'file')}; would rotate away "
                 f"{counted(len(rotated), 'snapshot')}"
                       + "".join(f"\n  {i}" for i in rotated))
        return
    with progress_bar("snapshot") as progress:
        snapshot = create_snapshot(store, label=label, keep=keep, progress=progress)
    if as_json:
        echo_json({**snapshot_json(snapshot), "rotated": list(snapshot.rotated)})
    else:
        echo(f"created  {snapshot.id}  ({counted(len(snapshot.files), 'file')})")
        for line in rotated_text(snapshot.rotated, keep):
            echo(line)
    _warn_skipped(snapshot)


@snapshot_app.command("list")
def snapshot_list(ctx: typer.Context, global_: GlobalOption = False,
                  as_json: JsonOption = False) -> None:
    """Every snapshot, oldest first: id, kind, number of files, label (or reason).

    Files are not hashed here (20 snapshots of 10k files would take seconds): `snapshot
    show ID` says whether one is damaged."""
    from ..history.snapshots import list_snapshots, snapshot_json

    store = ctx.obj.store(global_=global_)
    store.require_directory()  # like every other command: no "no snapshots" for a typo
    listing = list_snapshots(store)
    if as_json:
        echo_json([snapshot_json(s) for s in listing.snapshots])
    else:
        echo_lines([_line(s) for s in listing.snapshots] or ["no snapshots"])
    for snapshot_id in listing.unreadable:
        echo(f"warning: snapshot {snapshot_id} has an unreadable manifest (damaged)",
                   err=True)


@snapshot_app.command("show")
def snapshot_show(ctx: typer.Context, snapshot_id: IdArgument,
                  as_json: JsonOption = False) -> None:
    """A snapshot's files, whether they still match its manifest, and what differs now:
    changed, added since, removed since."""
    from ..history.snapshot_diff import compare
    from ..history.snapshots import damaged_files, load_snapshot

    store = ctx.obj.store()
    store.require_directory()
    snapshot = load_snapshot(store, snapshot_id)
    damaged, comparison = damaged_files(snapshot), compare(store, snapshot)
    if as_json:
        echo_json(show_json(snapshot, damaged, comparison))
    else:
        echo_lines(show_text(snapshot, damaged, comparison))


@snapshot_app.command("diff")
def snapshot_diff_(
    ctx: typer.Context,
    snapshot_id: IdArgument,
    name: Annotated[str | None, typer.Argument(help="Only this file (.md may be left off).")
                    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Unified diff from the snapshot to now, of every file that differs (or of NAME)."""
    from ..history.snapshot_diff import snapshot_diff
    from ..history.snapshots import load_snapshot

    store = ctx.obj.store()
    store.require_directory()
    snapshot = load_snapshot(store, snapshot_id)
    diff = snapshot_diff(store, snapshot, name)
    if as_json:
        echo_json({"version": JSON_VERSION, "id": snapshot.id, "name": name, "diff": diff})
    else:  # an empty diff printed nothing, which read like a failure
        echo(diff or "no differences", nl=not diff)


@app.command("rollback")
def rollback_(
    ctx: typer.Context,
    snapshot_id: IdArgument,
    scope: Annotated[str, typer.Option(
        "--scope", help="touched: restore only files that differ (files added since are "
                        "left alone); all: also move files added since into archive/.")
    ] = "touched",
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the report; change nothing.")] = False,
    yes: YesOption = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Take the memory directory back to a snapshot. Nothing is deleted: files that
    should not exist are moved into archive/. A protection snapshot of now is taken
    first, so the rollback itself can be rolled back."""
    from ..history.rollback import SCOPES, apply_rollback, plan_rollback, preview, report_json

    if scope not in SCOPES:
        raise typer.BadParameter(f"must be one of {', '.join(SCOPES)}", param_hint="--scope")
    store = ctx.obj.store(global_=global_)
    plan = plan_rollback(store, snapshot_id, scope)
    if not dry_run:
        cli.confirm("roll back?", yes=yes, required="to roll back (it changes many files)",
                    preview=lambda: report_text(preview(plan)))
    report = preview(plan) if dry_run else apply_rollback(store, plan, writer="cli")
    if as_json:
        echo_json(report_json(report))
    else:
        echo_lines(report_text(report, ctx.obj.command()))
    if report.history_error:  # files did change: the report (and its undo id) is shown
        echo(f"error: {report.history_error}", err=True)
        raise typer.Exit(1)
    if incomplete := [s.file for s in report.skipped if s.code in INCOMPLETE_CODES]:
        shown = ", ".join(incomplete[:3]) + (", …" if len(incomplete) > 3 else "")
        echo(f"error: rollback incomplete: {counted(len(incomplete), 'file')} could not be "
                   f"restored or moved ({shown}); see the report above, then roll back again",
                   err=True)
        raise typer.Exit(1)


@app.command()
def recover(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Finish the operations a killed sagemem left half done (a rollback, an archive, a
    restore or a purge): each is completed and gets its log line; a consolidation run
    killed mid-way gets its manifest (`sagemem dream undo RUN` then takes it back).
    Safe to run any time."""
    from ..dream.recover import finish_interrupted
    from ..history.recover import recover as recover_pending
    from ..history.rollback import report_json

    store = ctx.obj.store(warn_pending=False)
    done = recover_pending(store)
    runs = finish_interrupted(store)
    if as_json:
        echo_json({"version": JSON_VERSION, "recovered": [
            {"operation": r.operation, "subject": r.subject, "outcome": r.outcome,
             "detail": r.detail, "intent": r.intent_id,
             "rollback": report_json(r.rollback) if r.rollback else None} for r in done],
            "dream_runs": [vars(r) for r in runs]})
    else:
        lines = [f"{r.outcome:<11} {r.operation} of {r.subject}: {r.detail}" for r in done]
        lines += [f"{'failed' if r.problem else 'reported':<11} dream run {r.run_id}: "
                  + (r.problem or f"interrupted after {r.applied} of {r.planned} operations; "
                                  f"its manifest is written "
                                  f"({ctx.obj.command('dream', 'undo', r.run_id)} takes it "
                                  "back)") for r in runs]
        echo_lines(lines or ["nothing to recover"])
    if any(r.outcome in ("needs_you", "failed") for r in done) or any(r.problem for r in runs):
        raise typer.Exit(1)


# -- rendering -----------------------------------------------------------------------------

def rotated_text(rotated: tuple[str, ...], keep: int) -> list[str]:
    """Rotation deletes snapshots: say which, never silently."""
    if not rotated:
        return []
    return [f"rotated away {len(rotated)} older snapshot(s) (snapshot_keep = {keep}): "
            + ", ".join(rotated)]

def show_json(snapshot: Snapshot, damaged: tuple[str, ...], comparison: Comparison
              ) -> dict[str, Any]:
    from ..history.snapshots import snapshot_json

    return {**snapshot_json(snapshot, files=True), "damaged": list(damaged),
            "changed": list(comparison.changed), "added": list(comparison.added),
            "removed": list(comparison.removed), "unchanged": comparison.unchanged,
            "unreadable": [vars(u) for u in comparison.unreadable],
            "ambiguous": list(comparison.ambiguous)}


def show_text(snapshot: Snapshot, damaged: tuple[str, ...], comparison: Comparison
              ) -> list[str]:
    head = snapshot.git.commit[:12] if snapshot.git and snapshot.git.commit else "none"
    lines = [_line(snapshot), f"created   {snapshot.created.isoformat()}",
             f"git HEAD  {head}" + (f" ({snapshot.git.ref})" if snapshot.git and
                                     snapshot.git.ref else "")]
    lines += [f"reason    {snapshot.reason}"] if snapshot.reason else []
    lines += [f"DAMAGED   {', '.join(damaged)} (never used to restore)"] if damaged else []
    lines += [f"file      {f.name}  {f.size} bytes  {f.sha256[:12]}" for f in snapshot.files]
    lines += [f"not copied {s.name}: {s.reason}" for s in snapshot.skipped]
    lines += [f"changed   {n}" for n in comparison.changed]
    lines += [f"added since   {n}" for n in comparison.added]
    lines += [f"removed since {n}" for n in comparison.removed]
    lines += [f"unreadable now {u.name}: {u.reason}" for u in comparison.unreadable]
    lines += [f"ambiguous {n} (another name differs only in case)" for n in comparison.ambiguous]
    return [*lines, f"{comparison.unchanged} unchanged"]


def report_text(report: RollbackReport, sagemem: str = "sagemem") -> list[str]:
    verb = "would roll back" if report.dry_run else "rolled back"
    lines = [f"{verb} to {report.snapshot_id} (scope {report.scope})"]
    lines += [f"restore  {n}" if report.dry_run else f"restored {n}" for n in report.restored]
    lines += [f"{'move ' if report.dry_run else 'moved'}    {n} -> archive/{n}"
              for n in report.moved]
    lines += [f"skipped  {s.file} ({s.code}: {s.reason})" for s in report.skipped]
    lines += [f"left     {n} (added since; --scope all moves it to archive/)"
              for n in report.left]
    would = "would be " if report.dry_run else ""
    lines.append(f"{len(report.restored)} {would}restored, {len(report.moved)} {would}moved, "
                 f"{len(report.skipped)} {would}skipped, {report.unchanged} unchanged")
    lines = [part for line in lines for part in wrap(line)]
    if report.protection_id:  # a command to paste: whole on its line, however long
        lines.append(f"undo: {sagemem} rollback {report.protection_id} --scope all")
    return lines


def _line(snapshot: Snapshot) -> str:
    # a protection snapshot has no label, only its reason ("before rollback to <id>")
    note = snapshot.label or snapshot.reason
    label = f"  {note}" if note else ""
    files = counted(len(snapshot.files), "file")
    return "\n".join(wrap(f"{snapshot.id}  {snapshot.kind:<10} {files:>11}{label}"))


def _warn_skipped(snapshot: Snapshot) -> None:
    for skipped in snapshot.skipped:
        echo(f"warning: not copied: {skipped.name}: {skipped.reason}", err=True)



