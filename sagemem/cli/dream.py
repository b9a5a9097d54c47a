"""``sagemem dream plan|run|history|show|undo|auto``: consolidation from the terminal.

Thin over ``sagemem.dream``: each command makes one library call and prints its answer —
the run's Markdown report (``--json``: its manifest). A run refused whole (over the loss
ceiling) exits 1; refused operations inside a run are reported, the run goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import JSON_VERSION
from . import base as cli
from .base import GlobalOption, JsonOption, YesOption, app, echo, echo_json, echo_lines
from .progress import progress_bar

if TYPE_CHECKING:  # the library is imported by the commands that use it
    from ..store import MemoryStore

dream_app = typer.Typer(no_args_is_help=True, help=(
    "Consolidation: tidy the folder (duplicates, stale dates, expired memories, links) "
    "with a manifest of every line that went, and undo."))
app.add_typer(dream_app, name="dream")
RunArgument = Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")]
REFUSED = 1


@dream_app.command("plan")
def dream_plan(ctx: typer.Context, global_: GlobalOption = False,
               as_json: JsonOption = False) -> None:
    """Print what an agent needs to write a plan: duplicates, stale relative dates,
    contradictions, expired and idle memories, link and index repairs, and the plan
    format. Changes nothing."""
    from ..dream.brief import build_brief

    store = ctx.obj.store(global_=global_)
    brief = build_brief(store, ctx.obj.settings(), date.today())
    if as_json:
        echo_json(brief.to_json())
    else:
        echo(brief.as_text(), nl=False)


@dream_app.command("run")
def dream_run(
    ctx: typer.Context,
    planner: Annotated[str, typer.Option(
        "--planner", help="tidy (deterministic), llm (the endpoint in settings), or a plan "
                          "file (- for stdin).")] = "tidy",
    apply: Annotated[bool, typer.Option(
        "--apply", help="Apply the plan (after a rollback point); without it nothing in "
                        "the folder changes and the run only writes its report.")] = False,
    allow_loss: Annotated[bool, typer.Option(
        "--allow-loss", help="Apply even if the rewrites would drop more than "
                             "dream_max_loss_percent of their lines.")] = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Make a plan and report on it or, with --apply, carry it out: each operation a
    guarded write (a memory changed since the plan becomes a conflict record), then the
    manifest — "Facts no longer present" lists every line no active memory holds any
    more. `sagemem dream undo RUN` takes the folder back."""
    import os

    from ..dream.plan import loads
    from ..dream.planners import make_plan
    from ..dream.run import dream_run as run

    store = ctx.obj.store(global_=global_)
    settings = ctx.obj.settings()
    if planner == "-":
        planned_plan = loads(cli.stdin_text("--planner"), planner="stdin")
        cut, checked = None, None
    else:
        planned = make_plan(store, settings, planner, apply=apply, today=date.today(),
                            env=os.environ)
        planned_plan, cut, checked = planned.plan, planned.cut_short, planned.audit
    with progress_bar() as progress:
        report = run(store, settings, planned_plan, apply=apply, allow_loss=allow_loss,
                     cut_short=cut, audit_before=checked, progress=progress)
    _print_run(report.manifest, _shown(ctx, store, report.manifest), as_json)
    if report.status == "report" and not as_json:  # --apply would plan again: offer this
        from ..dream.runs import PLAN_FILE, folder_of

        saved = folder_of(store.state_dir, report.run_id).file(PLAN_FILE)
        echo(f"To apply exactly this plan: "
             f"{ctx.obj.command('dream', 'run', '--planner', str(saved), '--apply')}")
    if report.status == "refused":
        echo(f"error: {report.manifest['notes'][0]}", err=True)
        raise typer.Exit(REFUSED)


@dream_app.command("history")
def dream_history(ctx: typer.Context, global_: GlobalOption = False,
                  as_json: JsonOption = False) -> None:
    """List the runs, newest first: status, planner, operations, lines no longer present."""
    from ..dream.runs import readable_manifests

    store = ctx.obj.store(global_=global_)
    store.require_directory()  # a mistyped --dir is no "folder never tidied"
    rows = [_history_row(run_id, item, problem)
            for run_id, item, problem in reversed(list(readable_manifests(store.state_dir)))]
    if as_json:
        echo_json({"version": JSON_VERSION, "runs": rows})
        return
    if not rows:
        echo("no consolidation runs yet (sagemem dream run)")
        return
    for row in rows:
        if row.get("problem"):
            echo(f"{row['run_id']}  unreadable: {row['problem']}")
            continue
        lost = row["lost"]
        echo(f"{row['run_id']}  {row['status']:<11} {row['planner']:<12} "
             f"{row['applied']} applied, {row['planned']} planned, {row['refused']} refused; "
             f"lines no longer present: {lost['gone']} gone, {lost['reworded']} reworded, "
             f"{lost['archived']} archived whole")


def _history_row(run_id: str, item: dict[str, Any] | None, problem: str | None
                 ) -> dict[str, Any]:
    if item is None:
        return {"run_id": run_id, "problem": problem or "no manifest (killed before it "
                                                        "wrote one; sagemem recover)"}
    return {"run_id": run_id, "status": item["status"], "planner": item["planner"],
            "started": item["started"], "applied": len(item["applied"]),
            "planned": len(item["planned"]), "refused": len(item["refused"]),
            "deleted_facts": len(item["deleted_facts"]), "lost": _lost_counts(item),
            "loss_share": item["loss_share"],
            "cut_short": item.get("cut_short")}


def _lost_counts(item: Mapping[str, Any]) -> dict[str, int]:
    from ..dream.manifest import group_of

    counts = {"gone": 0, "reworded": 0, "archived": 0, "unlisted": 0}
    for fact in item["deleted_facts"]:
        counts[group_of(fact)] += 1
    return counts


@dream_app.command("show")
def dream_show(ctx: typer.Context, run_id: RunArgument, global_: GlobalOption = False,
               as_json: JsonOption = False) -> None:
    """Print a run's report (--json: its manifest)."""
    from ..dream.runs import find_run, load_manifest

    store = ctx.obj.store(global_=global_)
    store.require_directory()
    run = find_run(store.state_dir, run_id)
    item = load_manifest(run)
    if item is None:
        raise typer.BadParameter(f"run {run.run_id} has no manifest yet (it was killed "
                                 "before writing one: sagemem recover)", param_hint="RUN")
    _print_run(item, _shown(ctx, store, item), as_json)


@dream_app.command("undo")
def dream_undo(ctx: typer.Context, run_id: RunArgument, yes: YesOption = False,
               global_: GlobalOption = False, as_json: JsonOption = False) -> None:
    """Take the folder back to the run's rollback point, byte for byte; files changed
    after the run are reported and left as they are."""
    from ..dream.undo import undo_run

    store = ctx.obj.store(global_=global_)
    cli.confirm(f"undo consolidation run {run_id}?", yes=yes,
                required="to undo a run (it changes many files)")
    report = undo_run(store, run_id)
    if as_json:
        echo_json({"version": JSON_VERSION, **report.to_json()})
        return
    rollback = report.rollback
    lines = [f"undid run {report.run_id}: {len(rollback.restored)} files restored, "
             f"{len(rollback.moved)} created files moved to archive/"]
    lines += [f"  left {s.file}: {s.reason}" for s in report.left]
    lines += [f"  skipped {s.file}: {s.reason}" for s in rollback.skipped]
    if rollback.protection_id:
        lines.append(f"the folder before this undo is snapshot {rollback.protection_id} "
                     f"({ctx.obj.command('rollback', rollback.protection_id)})")
    echo_lines(lines)


@dream_app.command("auto")
def dream_auto(ctx: typer.Context, global_: GlobalOption = False,
               as_json: JsonOption = False) -> None:
    """For cron or a session hook: run the tidy planner's safe operations when enough
    time has passed and enough memories changed (dream_auto_* settings); otherwise
    return at once."""
    from ..dream.auto import dream_auto as auto

    store = ctx.obj.store(global_=global_)
    outcome = auto(store, ctx.obj.settings())
    if as_json:
        echo_json({"version": JSON_VERSION, **outcome.to_json()})
    else:
        echo(("ran: " if outcome.ran else "skipped: ") + outcome.why)


TERMINAL_FACTS = 50
"""Lost lines a terminal shows before pointing at the whole report (a first run over a
large folder can archive thousands of lines)."""


def _shown(ctx: typer.Context, store: MemoryStore, item: Mapping[str, Any]) -> str:
    """The report for this terminal: the undo command with this run's directory options,
    at most ``TERMINAL_FACTS`` lost lines a group."""
    from ..dream import manifest as manifests
    from ..dream.run import FOLDER_REPORTS
    from ..dream.runs import REPORT_FILE, folder_of

    run_id = str(item["run_id"])
    in_folder = store.directory / FOLDER_REPORTS / f"{run_id}.md"
    whole = in_folder if in_folder.is_file() else \
        folder_of(store.state_dir, run_id).file(REPORT_FILE)
    return manifests.render(item, max_facts=TERMINAL_FACTS, whole=str(whole),
                            undo=ctx.obj.command("dream", "undo", run_id))


def _print_run(item: Mapping[str, Any], text: str, as_json: bool) -> None:
    if as_json:
        echo_json(dict(item))
    else:
        echo(text, nl=False)
