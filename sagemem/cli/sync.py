"""``sync``: the memory folder committed, pulled with rebase and pushed through the
user's git (``gitsync/sync.py``; ``--continue``/``--abort``: ``gitsync/resume.py``). It
registers on the one ``app`` of ``base.py``; ``main.py`` imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from ..config import JSON_VERSION
from ..files.plural import counted
from .base import JsonOption, app, echo, echo_json, echo_lines

if TYPE_CHECKING:  # the library is imported by the command that uses it
    from ..gitsync.sync import SyncReport


@app.command("sync")
def sync_command(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Say what would be committed, pulled and pushed; change nothing "
                          "(the remote is fetched, to count what would come in).")] = False,
    no_push: Annotated[bool, typer.Option(
        "--no-push", help="Commit and pull, but do not push.")] = False,
    message: Annotated[str | None, typer.Option(
        "--message", "-m", help="The commit's subject line, instead of the counted one.")
                       ] = None,
    continue_: Annotated[bool, typer.Option(
        "--continue", help="Carry on a sync stopped on a conflict, once its files are "
                           "resolved and staged (`git add`).")] = False,
    abort: Annotated[bool, typer.Option(
        "--abort", help="Go back to where a stopped sync began.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Commit what changed in the memory folder (a message from the change journal),
    pull with rebase (a rollback snapshot first; the merge driver when installed), and
    push — never forced. Only the folder's paths are committed, and only commits of the
    folder are pushed; the state directory is kept out of git. A conflict stops with the
    files named: resolve them and `git add` them, then `sagemem sync --continue` (or
    `--abort`)."""
    from ..gitsync.resume import abort_sync, continue_sync
    from ..gitsync.sync import sync

    if continue_ and abort:
        raise click.UsageError("give --continue or --abort, not both")
    store = ctx.obj.store()
    if abort:
        reached = abort_sync(store)
        _show_abort(reached, as_json)
        return
    if continue_:
        report = continue_sync(store, push=not no_push, writer="cli")
    else:
        report = sync(store, message=message, push=not no_push, dry_run=dry_run,
                      keep=ctx.obj.settings().snapshot_keep, writer="cli")
    for notice in report.notices:
        echo(f"note: {notice}", err=True)
    if as_json:
        echo_json(report_json(report))
    else:
        echo_lines(report_text(report))
    for name in report.markers:
        echo(f"warning: {name} still holds merge markers (<<<<<<<); resolve it and run "
             "`sagemem sync` again", err=True)
    for line in refusals(report):
        echo(f"warning: {line}", err=True)


def refusals(report: SyncReport) -> list[str]:
    """What a dry run found the sync would refuse: commits to push, merges to rebase."""
    lines = [f"would not push {counted(len(report.held), 'commit')} changing files "
             f"outside the memory folder: {', '.join(report.held[:3])}"
             f"{', …' if len(report.held) > 3 else ''} (push them yourself with `git push`, "
             "or sync with `--no-push`)"] if report.held else []
    if report.merges:
        lines.append(f"would not rebase the local merge {', '.join(report.merges[:3])}: a "
                     "rebase would flatten it (pull yourself with `git pull "
                     "--rebase=merges`, then sync)")
    return lines


def report_text(report: SyncReport) -> list[str]:
    """The lines a sync prints: what was (or would be) committed, pulled, pushed."""
    would = "would " if report.dry_run else ""
    if report.dry_run and report.markers:
        lines = [f"would refuse to commit: {counted(len(report.markers), 'file')} with "
                 "merge markers"]
    elif report.files and (report.committed or report.dry_run):
        subject = (report.message or "").splitlines()[0] if report.message else ""
        made = f" {report.committed[:12]}" if report.committed else ""
        lines = [f"{would}commit{made}  {counted(len(report.files), 'file')}  {subject}"]
    else:  # a --continue commits nothing of its own: the rebase carries the fix
        lines = [] if report.resumed else ["nothing to commit"]
    if report.pulled:
        lines.append(f"{'would pull' if report.dry_run else 'pulled'} "
                     f"{counted(report.pulled, 'commit')} from {report.upstream}"
                     + (f" ({counted(len(report.incoming), 'file')} changed)"
                        if report.incoming else ""))
    if report.snapshot:
        lines.append(f"snapshot {report.snapshot} taken before the pull (undo it with "
                     f"`sagemem rollback {report.snapshot}`)")
    if report.pushed:
        lines.append(f"{would}push {counted(report.pushed, 'commit')} to {report.upstream}"
                     if report.dry_run else
                     f"pushed {counted(report.pushed, 'commit')} to {report.upstream}")
    if report.closed:
        lines.append(f"closed {counted(len(report.closed), 'conflict record')} of the "
                     "files now resolved")
    if not report.dry_run and report.commit:
        lines.append(f"at {report.commit[:12]}")
    return lines


def report_json(report: SyncReport) -> dict[str, Any]:
    return {"version": JSON_VERSION, "dry_run": report.dry_run, "upstream": report.upstream,
            "committed": report.committed, "message": report.message,
            "files": list(report.files), "pulled": report.pulled,
            "incoming": list(report.incoming), "snapshot": report.snapshot,
            "pushed": report.pushed, "commit": report.commit,
            "markers": list(report.markers), "notices": list(report.notices),
            "held": list(report.held), "merges": list(report.merges),
            "closed": list(report.closed)}


def _show_abort(reached: str | None, as_json: bool) -> None:
    if as_json:
        echo_json({"version": JSON_VERSION, "aborted": True, "commit": reached})
    else:
        echo(f"sync aborted; back at {reached[:12] if reached else 'no commit'}")
