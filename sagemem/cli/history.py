"""``log`` and ``revert``: the journal of every change sagemem made, and putting one
memory back to an earlier version (``show NAME --history`` lists them). They register
on the one ``app`` of ``base.py``; ``main.py`` imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ..config import JSON_VERSION
from ..files.controls import visible
from . import base as cli
from .base import GlobalOption, JsonOption, YesOption, app, echo, echo_json, echo_lines
from .output import history_text

if TYPE_CHECKING:  # imported by the commands that use them
    from ..writes.changelog import Entry

WRITER = "cli"
COLUMNS = 80


@app.command("log")
def log_(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(
        help="Only this memory (.md may be left off).")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", help="Only changes since: 7d, 24h, 30m, 2w ago, or a date (2026-11-30).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N lines.")
                     ] = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Every change sagemem made to the memories, newest first: time, operation, file,
    byte and line change, writer and reason (<state>/journal.jsonl)."""
    from ..writes.changelog import entry_json, parse_since, read

    try:
        after = parse_since(since) if since is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since") from None
    store = ctx.obj.store(global_=global_)
    store.require_directory()
    found = read(store.state_dir, name, after)
    entries = found.entries[:limit] if limit else found.entries
    if as_json:
        echo_json({"version": JSON_VERSION, "entries": [entry_json(e) for e in entries],
                   "skipped": found.skipped})
    else:
        echo_lines([log_line(e) for e in entries] or ["no changes recorded"])
    if found.skipped:
        echo(f"warning: {found.skipped} damaged line(s) of the change log skipped", err=True)
    for problem in found.unreadable:
        echo(f"warning: a change log file was not read: {problem}", err=True)


def log_line(item: Entry) -> str:
    """One change in at most 80 columns: the reason after it, or on a line of its own
    when it does not fit (cut only past a whole line, ``…``); never the file name, which
    must stay whole to be pasted."""
    time = item.time[:16].replace("T", " ")
    name = item.file if item.to is None else f"{item.file} -> {item.to}"
    head = (f"{time}  {item.op:<8} {name}  {item.bytes:+d} B {item.lines:+d} lines  "
            f"{item.writer}")
    head = visible(head)  # measured as it will be shown: ``\x1b`` is four columns
    said = visible(item.reason)
    if len(head) + 2 + len(said) <= COLUMNS:
        return f"{head}  {said}"
    room = COLUMNS - 4  # the reason on a line of its own, indented, cut only past that
    return f"{head}\n    {said if len(said) <= room else said[:room - 1] + '…'}"


@app.command()
def revert(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    to: Annotated[str | None, typer.Option(
        "--to", help="The revision to go back to (8+ characters; see show NAME --history). "
                     "Default: the version before the current one.")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why, for the log.")] = None,
    yes: YesOption = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Put one memory back to an earlier version, byte for byte, as a guarded write:
    if it changed meanwhile nothing is written and a conflict record keeps both sides.
    The version replaced is kept, so a revert can itself be reverted."""
    from ..history.revisions import revert as revert_memory
    from ..history.revisions import versions_of

    if to is not None:
        to = cli.revision_param(to, "--to")
    store = ctx.obj.store(global_=global_)
    cli.confirm(f"revert {name}?", yes=yes, required="to revert a memory",
                preview=lambda: history_text(versions_of(store, name).versions))
    done = revert_memory(store, name, to, reason=reason, writer=WRITER)
    if as_json:
        echo_json({"version": JSON_VERSION, "file": done.file, "before": done.before,
                   "after": done.after, "changed": done.changed})
    elif done.changed:
        echo(f"reverted  {done.file}  {done.before[:12]} -> {done.after[:12]}")
    else:
        echo(f"unchanged  {done.file} is already at {done.after[:12]}")

