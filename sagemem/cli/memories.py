"""The commands over memories themselves: ``init``, ``list``, ``show``, ``new``, ``config``."""

from __future__ import annotations

import shlex
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from ..config import default_state_dir, load_settings
from ..errors import NearDuplicate
from ..files.fields import TYPES
from ..files.init import init_directory
from .base import (
    GlobalOption,
    Globals,
    JsonOption,
    app,
    echo,
    echo_json,
    echo_lines,
    memory_type,
    stdin_text,
)
from .output import (
    archived_text,
    config_output,
    history_text,
    init_json,
    list_output,
    memory_json,
    memory_text,
    terminal_columns,
    wrap,
    written_json,
)


@app.command()
def init(
    ctx: typer.Context,
    directory: Annotated[Path | None, typer.Argument(
        help="Memory directory to create (default: --dir, SAGE_MEM_DIR, the git project's "
             "folder, ~/.sage-mem/memory).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a memory directory, a starter MEMORY.md and the state directory.

    Never overwrites anything; says what already existed.
    """
    g: Globals = ctx.obj
    settings = load_settings(memory_dir=directory or g.memory_dir, state_dir=g.state_dir)
    report = init_directory(settings.memory_dir, settings.state_dir)
    if as_json:
        echo_json(init_json(report))
        return
    echo_lines([f"created  {p}" for p in report.created]
                + [f"updated  {u.path} (added {u.added})" for u in report.updated]
                + [f"exists   {p} (left as it was)" for p in report.existed])
    for warning in report.warnings:
        echo_lines(wrap(f"warning: {warning}"), err=True)
    if settings.scope is not None:  # chosen by the project: it is found again from here
        echo_lines(wrap(f"this is the folder of the git project {settings.scope.project.root} "
                        f"({settings.scope.rule}): sagemem finds it from anywhere in that "
                        f"project, no SAGE_MEM_DIR needed; sagemem's own state lives in "
                        f"{settings.state_dir}"), err=True)
        return
    # one whole command a line, so each can be pasted however long its path
    exports = [f"next: export SAGE_MEM_DIR={shlex.quote(str(settings.memory_dir))}"]
    if settings.state_dir != default_state_dir(settings.memory_dir):
        exports.append(f"      export SAGE_MEM_STATE_DIR={shlex.quote(str(settings.state_dir))}")
    echo_lines([*exports, *wrap(f"  (or pass --dir/--state-dir before the command); "
                                f"sagemem's own state lives in {settings.state_dir}")], err=True)


@app.command("list")
def list_(
    ctx: typer.Context,
    type_: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only memories with this tag.")] = None,
    active: Annotated[bool, typer.Option(
        "--active", help="Hide archived and invalid memories.")] = False,
    as_json: JsonOption = False,
) -> None:
    """List memories: file, type, updated, size, description; archived/invalid marked."""
    type_ = memory_type(type_) if type_ is not None else None
    today = date.today()
    with ctx.obj.layers() as layers:
        listings = [(layer, store.list(type=type_, tag=tag, active=active, today=today))
                    for layer, store in layers.stores()]
    out, err = list_output(listings, layers.folder, today, terminal_columns(), as_json)
    echo_lines(out)
    if err:
        echo_lines(err, err=True)


@app.command()
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    archived: Annotated[bool, typer.Option("--archived", help="Look in archive/.")] = False,
    history: Annotated[bool, typer.Option(
        "--history", help="List the versions snapshots and kept copies hold, newest first "
                          "(sagemem revert NAME --to REV goes back to one).")] = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Show a memory: its fields, revision, parse problems and body."""
    if history:
        _show_history(ctx, name, archived, as_json, global_)
        return
    memory = ctx.obj.store(global_=global_).get(name, archived=archived)
    if as_json:
        echo_json(memory_json(memory, date.today()))
    else:
        echo_lines(memory_text(memory, date.today()))


def _show_history(ctx: typer.Context, name: str, archived: bool, as_json: bool,
                  global_: bool) -> None:
    from ..history.revisions import history_json, versions_of  # only --history needs them

    if archived:
        raise typer.BadParameter("an archived memory's versions are listed once it is "
                                 "restored", param_hint="--history")
    history = versions_of(ctx.obj.store(global_=global_), name)
    if as_json:
        echo_json(history_json(history))
    else:
        echo_lines(history_text(history.versions))


@app.command()
def new(
    ctx: typer.Context,
    type_: Annotated[str, typer.Option("--type", help=f"One of: {', '.join(TYPES)}.")],
    name: Annotated[str, typer.Option("--name", help="Short name; the file name comes from it.")],
    description: Annotated[str, typer.Option(
        "--description", help="One sentence saying exactly what this memory is.")],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    alias: Annotated[list[str] | None, typer.Option(
        "--alias", help="Another wording that should retrieve it (repeatable).")] = None,
    body: Annotated[str, typer.Option("--body", help="Body text, or - to read stdin.")] = "",
    file: Annotated[str | None, typer.Option(
        "--file", help="Explicit file name instead of <type>_<slug>.md.")] = None,
    distinct: Annotated[bool, typer.Option(
        "--distinct", help="Create it even beside a memory of the same or a close title.")
    ] = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Write a new memory <type>_<slug>.md (never overwriting) and index it in MEMORY.md.
    A title another memory has, or one close to it, writes nothing and exits 1."""
    type_ = memory_type(type_)
    if not description.strip():
        raise typer.BadParameter("must not be empty", param_hint="--description")
    text = stdin_text("--body") if body == "-" else body
    from ..history.caps import new_memory  # the archive is loaded only by commands that write

    try:
        memory, caps = new_memory(ctx.obj.store(global_=global_), type=type_, name=name,
                                  description=description, tags=tag or (),
                                  aliases=alias or (), body=text, file=file, by="cli",
                                  distinct=distinct)
    except NearDuplicate as near:  # remember's `similar`: one line, and the way past it
        echo(f"error: {near}; --distinct creates it anyway", err=True)
        raise typer.Exit(1) from None
    from .write import redaction_warnings

    warnings = [*caps.warnings, *redaction_warnings(name, description, text, *(tag or ()),
                                                    *(alias or ()))]
    if as_json:
        echo_json(written_json(memory, date.today(), warnings, caps.archived))
    else:
        if caps.archived:
            echo_lines(archived_text(caps.archived))
        echo(f"created  {memory.file}  (revision {memory.revision[:12]})")
    for warning in warnings:
        echo(f"warning: {memory.file}: {warning}", err=True)


@app.command()
def config(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every setting in effect, its value, and where it came from."""
    echo_lines(config_output(ctx.obj.any_settings(), as_json))
