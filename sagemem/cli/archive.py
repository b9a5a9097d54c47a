"""The archive commands: ``archive``, ``restore``, ``purge``, ``lock``, ``unlock``, ``locks``
and ``archive candidates``.

Confirmation: on a terminal every command that moves or deletes a file asks first
(``--yes`` skips the question, on stderr so ``--json`` stays clean). Off a terminal
nothing can be asked: a single reversible move (``archive NAME``, ``restore NAME``) goes
ahead, while the irreversible (``purge``) and the bulk (``archive candidates --apply``)
need ``--yes`` (``base.confirm``, the rule of every confirming command). ``--dry-run``
says what would happen and changes nothing. They register on the one ``app`` of
``base.py``; ``main.py`` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import JSON_VERSION
from ..errors import SagememError
from ..store import MemoryStore
from . import base as cli
from .base import GlobalOption, JsonOption, YesOption, app, echo, echo_json, echo_lines
from .output import wrap

if TYPE_CHECKING:  # the library is imported by the commands that use it: every other
    # command, the hook on each prompt included, would otherwise pay for loading it
    from ..history.archive import ArchiveResult
    from ..history.candidates import Candidate, CandidateReport
    from ..history.locks import Lock, LockChange

BY = "cli"
CANDIDATES = "candidates"
NameArgument = Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")]
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="Say what would happen; change nothing.")]
PAST = {"archive": "archived", "restore": "restored", "purge": "purged"}


def _run(action: Callable[[bool], ArchiveResult], question: str, *, yes: bool, dry_run: bool,
         as_json: bool, required: str | None = None) -> None:
    """Plan first (so a missing, locked or colliding memory fails before any question),
    then ask on a terminal, then act. ``required``: why --yes is needed off a terminal."""
    planned = action(True)
    if not dry_run:
        cli.confirm(question.format(file=planned.file), yes=yes, required=required)
        planned = action(False)
    _done(planned, as_json)


@app.command()
def archive(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(
        help="Memory file name, or `candidates` to list the idle ones (candidates.md for a "
             "memory of that name).")],
    reason: Annotated[str | None, typer.Option(
        "--reason", help="Why (required to archive NAME; kept in archive.jsonl).")] = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="With candidates: archive them (asks per memory unless --yes).")
    ] = False,
    yes: YesOption = False,
    dry_run: DryRunOption = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Move a memory into archive/ and drop its MEMORY.md line (restore brings it back);
    `archive candidates` lists the memories idle past their type's threshold, and why."""
    if name == CANDIDATES:
        if reason is not None:
            raise typer.BadParameter("`archive candidates` lists the idle memories; to archive "
                                     "a memory named candidates.md, write the .md",
                                     param_hint="--reason")
        raise typer.Exit(_candidates(ctx, apply=apply, yes=yes, dry_run=dry_run,
                                     as_json=as_json))
    if apply:
        raise typer.BadParameter("only with `archive candidates`", param_hint="--apply")
    if reason is None:
        raise cli.missing("--reason", "Say why: it is kept in archive.jsonl.")
    if not reason.strip():
        raise typer.BadParameter("say why: it is kept in archive.jsonl", param_hint="--reason")
    from ..history.archive import archive_memory

    store = ctx.obj.store(global_=global_)
    _run(lambda plan: archive_memory(store, name, reason, by=BY, dry_run=plan),
         f"archive {{file}} (reason: {reason.strip()})?", yes=yes, dry_run=dry_run,
         as_json=as_json)


@app.command()
def restore(ctx: typer.Context, name: NameArgument, yes: YesOption = False,
            dry_run: DryRunOption = False,
            global_: GlobalOption = False, as_json: JsonOption = False) -> None:
    """Bring an archived memory back, with its MEMORY.md line (refused if the name is
    taken at the top level)."""
    from ..history.archive import restore_memory

    store = ctx.obj.store(global_=global_)
    _run(lambda plan: restore_memory(store, name, by=BY, dry_run=plan),
         "restore {file} from archive/?", yes=yes, dry_run=dry_run, as_json=as_json)


@app.command()
def purge(
    ctx: typer.Context,
    name: NameArgument,
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in archive.jsonl).")] = "",
    yes: YesOption = False,
    dry_run: DryRunOption = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Delete an ARCHIVED memory for good (never a live or locked one). Irreversible:
    asks first unless --yes; only its line in archive.jsonl remains."""
    from ..history.archive import purge_memory

    store = ctx.obj.store(global_=global_)
    _run(lambda plan: purge_memory(store, name, reason=reason, by=BY, dry_run=plan),
         "permanently delete archive/{file}? This is irreversible.", yes=yes,
         dry_run=dry_run, as_json=as_json, required="to purge (it is irreversible)")


def _done(result: ArchiveResult, as_json: bool) -> None:
    if as_json:
        echo_json(result_json(result))
        return
    action = result.event.action
    verb = f"would {action}" if result.dry_run else PAST[action]
    line = {"archive": "index line removed", "restore": "index line added"}.get(action, "")
    note = f"  ({line})" if line and result.index_changed else ""
    echo(f"{verb}  {result.file}{note}")


def result_json(result: ArchiveResult) -> dict[str, Any]:
    """``archive``/``restore``/``purge --json``: the log line, plus what changed."""
    return {"version": JSON_VERSION, **asdict(result.event),
            "index_changed": result.index_changed, "dry_run": result.dry_run}


# -- candidates ---------------------------------------------------------------------------

def _candidates(ctx: typer.Context, *, apply: bool, yes: bool, dry_run: bool,
                as_json: bool) -> int:
    from ..history.candidates import archive_candidates, idle_thresholds

    settings = ctx.obj.settings()
    store = MemoryStore.from_settings(settings)
    thresholds = idle_thresholds(settings)
    report = archive_candidates(store, thresholds, datetime.now(timezone.utc))
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)
    applied: dict[str, list[Any]] | None = None
    if apply and not dry_run and report.candidates:
        cli.require_yes(yes, "to archive every candidate")
        applied = _apply(store, report.candidates, ask=not yes, as_json=as_json)
    if as_json:
        echo_json(candidates_json(report, thresholds, applied))
    elif applied is None:
        echo_lines(candidates_text(report, thresholds, would=apply))
    else:
        echo(applied_summary(applied))
    return 1 if applied and applied["failed"] else 0


def _apply(store: MemoryStore, candidates: tuple[Candidate, ...], *, ask: bool,
           as_json: bool) -> dict[str, list[Any]]:
    """Archive each candidate (its ``why`` is the reason), asking y/n/a(ll)/q(uit) on a
    terminal; one that fails is reported and costs no other."""
    from ..history.archive import archive_memory

    done: dict[str, list[Any]] = {"archived": [], "skipped": [], "failed": []}
    for candidate in candidates:
        answer = _ask(candidate) if ask else "y"
        if answer == "q":
            done["skipped"].extend(c.file for c in candidates[candidates.index(candidate):])
            break
        if answer == "n":
            done["skipped"].append(candidate.file)
            continue
        ask = ask and answer != "a"
        try:
            archive_memory(store, candidate.file, candidate.why, by=CANDIDATES)
        except SagememError as exc:
            done["failed"].append({"file": candidate.file, "error": str(exc)})
            echo(f"error: {candidate.file}: {exc}", err=True)
            continue
        done["archived"].append(candidate.file)
        if not as_json:
            echo(f"archived  {candidate.file}  ({candidate.why})")
    return done


def applied_summary(applied: dict[str, list[Any]]) -> str:
    """The last line of ``--apply`` in text mode: answering n or q to every question
    otherwise ended the run with no output at all."""
    line = f"{len(applied['archived'])} archived, {len(applied['skipped'])} skipped"
    return f"{line}, {len(applied['failed'])} failed" if applied["failed"] else line


def _ask(candidate: Candidate) -> str:
    while True:
        answer = str(typer.prompt(f"archive {candidate.file}? {candidate.why} "
                                  "[y/n/a(ll)/q(uit)]", default="n", show_default=False,
                                  err=True)).strip().lower()[:1]
        if answer in ("y", "n", "a", "q"):
            return answer


def candidates_json(report: CandidateReport, thresholds: dict[str, int],
                    applied: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """``archive candidates --json``; with ``--apply``, what became of each one."""
    data: dict[str, Any] = {
        "version": JSON_VERSION,
        "thresholds": thresholds,
        "candidates": [asdict(c) for c in report.candidates],
        "locked": [asdict(c) for c in report.locked],
        "warnings": list(report.warnings),
    }
    if applied is not None:
        data["applied"] = applied
    return data


def candidates_text(report: CandidateReport, thresholds: dict[str, int],
                    would: bool = False) -> list[str]:
    prefix = "would archive  " if would else ""
    lines = [f"{prefix}{c.file}  [{c.type}]  {c.why}" for c in report.candidates]
    if not report.candidates:
        lines.append("(no archive candidates)")
    lines.extend(f"kept, locked: {c.file}  ({c.why})" for c in report.locked)
    shown = ", ".join(f"{t} {d or 'never'}" for t, d in thresholds.items())
    lines.append(f"idle-days thresholds: {shown}")
    return [part for line in lines for part in wrap(line)]


# -- locks --------------------------------------------------------------------------------

@app.command()
def lock(ctx: typer.Context, name: NameArgument, dry_run: DryRunOption = False,
         global_: GlobalOption = False,
         as_json: JsonOption = False) -> None:
    """Lock a memory: it is never archived or purged, whoever asks (kept in the state
    directory's locked.json, not in the file)."""
    from ..history.locks import lock_memory

    _locked(lock_memory(ctx.obj.store(global_=global_), name, by=BY, dry_run=dry_run), as_json)


@app.command()
def unlock(ctx: typer.Context, name: NameArgument, dry_run: DryRunOption = False,
           global_: GlobalOption = False,
           as_json: JsonOption = False) -> None:
    """Remove a memory's lock (a memory that is not locked is left as it is)."""
    from ..history.locks import unlock_memory

    _locked(unlock_memory(ctx.obj.store(global_=global_), name, by=BY, dry_run=dry_run), as_json)


def _locked(change: LockChange, as_json: bool) -> None:
    if as_json:
        echo_json({"version": JSON_VERSION, **asdict(change)})
    elif not change.changed:
        state = "already locked" if change.locked else "not locked"
        echo(f"{state}  {change.file}  (nothing to do)")
    else:
        verb = "locked" if change.locked else "unlocked"
        echo(f"{'would be ' if change.dry_run else ''}{verb}  {change.file}")


@app.command()
def locks(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the locked memories, since when, and where each one is now."""
    from ..history.locks import list_locks

    store = ctx.obj.store()
    store.require_directory()  # like every other command: not "(no locked memories)"
    found = list_locks(store)
    if as_json:
        echo_json({"version": JSON_VERSION, "locks": [asdict(lk) for lk in found]})
    else:
        echo_lines(locks_text(found))


def locks_text(found: tuple[Lock, ...]) -> list[str]:
    where = {"memory": "", "archive": "  (archived)", "missing": "  (file missing)"}
    lines = [part for lk in found for part in wrap(
        f"{lk.file}  locked since {lk.since or '?'}{where[lk.where]}")]
    return lines or ["(no locked memories)"]
