"""The conflict queue from the shell: ``conflicts list``, ``show``, ``resolve``,
``delete`` and ``contradict``.

Every write refused by the guard leaves a record here (``writes/conflicts.py``); these
commands show it and apply the user's decision. They register on the one ``app`` of
``base.py``; ``main.py`` imports this module.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from typing import Annotated

import typer

from ..config import JSON_VERSION
from ..writes import conflicts
from ..writes import resolve as conflict_resolve
from ..writes.contradictions import moot_sides
from . import base as cli
from .base import GlobalOption, JsonOption, YesOption, app, echo, echo_json, echo_lines
from .output import conflict_json, conflict_text, conflicts_text

WRITER = "cli"

conflicts_app = typer.Typer(no_args_is_help=True,
                            help="The conflict queue: refused writes and contradictions.")
app.add_typer(conflicts_app, name="conflicts")
IdArgument = Annotated[str, typer.Argument(help="Conflict id (a unique prefix is enough).")]


@conflicts_app.command("list")
def conflicts_list(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option(
        "--status", help="Only open or resolved records.")] = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Every conflict record, oldest first: id, status, kind, file; a contradiction with a
    side archived or deleted is marked moot (it keeps nothing out of injection)."""
    if status not in (None, "open", "resolved"):
        raise typer.BadParameter("must be open or resolved", param_hint="--status")
    store = ctx.obj.store(global_=global_)
    state_dir = store.state_dir
    records = conflicts.list_conflicts(state_dir, status)
    gone = {c.id: moot_sides(store, c) for c in records}
    if as_json:
        echo_json({"version": JSON_VERSION, "conflicts": [
            conflict_json(c, full=False) | {"moot": bool(gone[c.id])} for c in records]})
    else:
        echo_lines(conflicts_text(records, gone))
    for path in conflicts.unreadable_records(state_dir):
        echo(f"warning: {path} is not a readable conflict record; inspect or delete it",
                   err=True)


@conflicts_app.command("show")
def conflicts_show(ctx: typer.Context, conflict_id: IdArgument,
                   as_json: JsonOption = False) -> None:
    """One record: disk and mine side by side, and a unified diff."""
    record = conflicts.load(ctx.obj.settings().state_dir, conflict_id)
    if as_json:
        echo_json(conflict_json(record))
    else:
        echo_lines(conflict_text(record, shutil.get_terminal_size((80, 24)).columns))


@conflicts_app.command("resolve")
def conflicts_resolve(
    ctx: typer.Context,
    conflict_id: IdArgument,
    keep: Annotated[str | None, typer.Option(
        "--keep", help="disk: leave the file; mine: write your version (guarded).")] = None,
    invalidate: Annotated[str | None, typer.Option(
        "--invalidate", help="For a contradiction: the memory that no longer holds.")] = None,
    superseded_by: Annotated[str | None, typer.Option(
        "--superseded-by", help="The memory that replaces it.")] = None,
    undo: Annotated[bool, typer.Option("--undo", help="Take an --invalidate back.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Apply your decision: --keep disk|mine, or --invalidate NAME [--superseded-by OTHER]."""
    if (keep is None) == (invalidate is None):
        raise typer.BadParameter("give --keep disk|mine or --invalidate NAME", param_hint="--keep")
    if keep is not None and keep not in ("disk", "mine"):
        raise typer.BadParameter("must be disk or mine", param_hint="--keep")
    if undo and keep is not None:
        raise typer.BadParameter("--undo takes back an --invalidate, not a --keep",
                                 param_hint="--undo")
    store = ctx.obj.store()
    if keep is not None:
        record = conflict_resolve.resolve_keep(store, conflict_id, keep)
    else:
        assert invalidate is not None
        record = conflict_resolve.resolve_invalidate(store, conflict_id, invalidate,
                                                     superseded_by, undo=undo)
    if as_json:
        echo_json(conflict_json(record, full=False))
    else:
        echo(f"{record.status}  {record.id}  ({record.decision}, "
                   f"revision {str(record.data.get('appliedVersion'))[:12]})")


@conflicts_app.command("delete")
def conflicts_delete(
    ctx: typer.Context,
    conflict_id: Annotated[str | None, typer.Argument(
        help="Conflict id (a unique prefix is enough); or select many with the options.")
    ] = None,
    all_resolved: Annotated[bool, typer.Option(
        "--all-resolved", help="Every resolved record.")] = False,
    status: Annotated[str | None, typer.Option(
        "--status", help="Every open or every resolved record.")] = None,
    older_than: Annotated[int | None, typer.Option(
        "--older-than", metavar="DAYS", help="Only records created more than DAYS ago.")
    ] = None,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    """Remove records without applying anything: one by ID, or every one the options
    select (they combine); asks once first unless --yes."""
    status = _bulk_status(conflict_id, all_resolved, status, older_than)
    store = ctx.obj.store()
    if conflict_id is not None:
        record = conflicts.load(store.state_dir, conflict_id)
        cli.confirm(f"delete {record.id} ({record.kind}, {record.status})?", yes=yes,
                    required="to delete a conflict record (it is irreversible)")
        _deleted([conflicts.delete(store, record.id)], as_json, bulk=False)
        return
    age = timedelta(days=older_than) if older_than is not None else None
    now = datetime.now(timezone.utc)
    chosen = conflicts.matching(store.state_dir, status=status, older_than=age, now=now)
    if chosen:
        cli.confirm(f"delete these {len(chosen)} conflict records?", yes=yes,
                    required="to delete conflict records (it is irreversible)",
                    preview=lambda: conflicts_text(chosen))
    gone = conflicts.delete_many(store, status=status, older_than=age, now=now,
                                 only=[r.id for r in chosen]) if chosen else []
    _deleted(gone, as_json, bulk=True)


def _bulk_status(conflict_id: str | None, all_resolved: bool, status: str | None,
                 older_than: int | None) -> str | None:
    """The one status the options select (``--all-resolved`` is ``--status resolved``);
    an id and a selection, or neither, is a usage error."""
    if status not in (None, "open", "resolved"):
        raise typer.BadParameter("must be open or resolved", param_hint="--status")
    if all_resolved and status == "open":
        raise typer.BadParameter("--all-resolved selects resolved records, not open ones",
                                 param_hint="--status")
    if older_than is not None and older_than < 0:
        raise typer.BadParameter("must be 0 or more days", param_hint="--older-than")
    selecting = all_resolved or status is not None or older_than is not None
    if (conflict_id is None) == (not selecting):
        raise typer.BadParameter("give one conflict ID, or select records with "
                                 "--all-resolved, --status or --older-than", param_hint="ID")
    return "resolved" if all_resolved else status


def _deleted(records: list[conflicts.Conflict], as_json: bool, *, bulk: bool) -> None:
    if as_json:
        echo_json({"version": JSON_VERSION,
                   "deleted": [conflict_json(r, full=False) for r in records]})
        return
    lines = [f"deleted  {r.id}" for r in records]
    if bulk:
        count = len(records)
        lines.append(f"{count} record{'' if count == 1 else 's'} deleted" if records
                     else "no conflict records match")
    echo_lines(lines)


@conflicts_app.command("contradict")
def conflicts_contradict(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(help="One memory.")],
    b: Annotated[str, typer.Argument(help="The memory it contradicts.")],
    note: Annotated[str, typer.Option("--note", help="What they disagree on.")],
    as_json: JsonOption = False,
) -> None:
    """Record that two memories contradict each other; neither is injected until resolved."""
    record = conflicts.contradict(ctx.obj.store(), a, b, note, writer=WRITER)
    if as_json:
        echo_json(conflict_json(record))
    else:
        echo(f"open  {record.id}  ({' <> '.join(record.memories)})")
