"""The ``remember`` command: save a memory by its title — the memory that title already
names is updated, a title only similar to another's writes nothing and exits 1
(``writes/remember.py`` decides). ``main.py`` imports this module.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from ..files.fields import TYPES
from ..writes.remember import RememberResult
from .base import GlobalOption, Globals, JsonOption, ReasonOption, app, echo, echo_json, memory_type
from .output import memory_json

WRITER = "cli"
SIMILAR_EXIT = 1


@app.command()
def remember(
    ctx: typer.Context,
    type_: Annotated[str, typer.Option("--type", help=f"One of: {', '.join(TYPES)}.")],
    title: Annotated[str, typer.Option("--title", help="The memory's title (its name).")],
    body: Annotated[str | None, typer.Option("--body", help="The body text.")] = None,
    from_file: Annotated[Path | None, typer.Option(
        "--from", help="Read the body from this file (- for stdin).")] = None,
    description: Annotated[str | None, typer.Option(
        "--description", help="One sentence saying what it is (new: default the title).")
    ] = None,
    when: Annotated[str | None, typer.Option(
        "--when", help="The occasion, a date (2026-12-01) or text: one title, another "
                       "--when, another memory.")] = None,
    tag: Annotated[list[str] | None, typer.Option(
        "--tag", help="A tag (repeatable; replaces the tags on an update).")] = None,
    alias: Annotated[list[str] | None, typer.Option(
        "--alias", help="A word that should retrieve it (repeatable; added); never "
                        "matched as a title.")] = None,
    distinct: Annotated[bool, typer.Option(
        "--distinct", help="Save a new memory even beside a similar title.")] = False,
    reason: ReasonOption = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Save a memory by its title: the memory with this title (and --when) is updated —
    body replaced, the fields given set, the others kept; otherwise a new one is created.
    A title only similar to an existing one writes nothing and exits 1."""
    text = _body(body, from_file)
    g: Globals = ctx.obj
    from ..history.caps import with_room  # the archive is loaded only when room is made

    store = g.store(global_=global_)
    result, caps = with_room(store, lambda: store.remember(
        type=memory_type(type_), title=title, body=text, description=description,
        when=when, tags=tag, aliases=alias, distinct=distinct, writer=WRITER, reason=reason),
        by=WRITER)
    for archived in caps.archived_files:
        echo(f"archived  {archived}  (hard cap of {store.caps.hard_memories} memories "
             "reached (hard_cap_memories))")
    _show(g, result, as_json)
    if result.action != "similar":
        from .write import redaction_warnings

        for warning in redaction_warnings(title, description or "", text, *(tag or ()),
                                          *(alias or ())):
            echo(f"warning: {result.memory.file}: {warning}", err=True)
    if result.action == "similar":
        raise typer.Exit(SIMILAR_EXIT)


def _body(body: str | None, from_file: Path | None) -> str:
    """The body from --body or --from (a file, - for stdin): exactly one of them."""
    if (body is None) == (from_file is None):
        raise typer.BadParameter("give the body as --body TEXT or --from FILE|-, one of them",
                                 param_hint="--body")
    if body is not None:
        return body
    assert from_file is not None
    from .write import read_text_option

    return read_text_option(from_file)


def _show(g: Globals, result: RememberResult, as_json: bool) -> None:
    if as_json:
        echo_json(remember_json(result))
    elif result.action == "similar":
        _show_similar(g, result)
    else:
        memory = result.memory
        line = f"{result.action}  {memory.file}  (revision {memory.revision[:12]})"
        if result.kind == "former_title":
            line += f"  matched its former title; its name stays {memory.title!r}"
        echo(line)


def _show_similar(g: Globals, result: RememberResult) -> None:
    """The close match, and the two ways forward: nothing was written."""
    memory = result.memory
    echo(f"similar  {memory.file}  {memory.title!r}  (score {result.score:.0f})")
    if result.also:  # --distinct and the exact title would both answer this again
        files = ", ".join((memory.file, *result.also))
        echo(f"nothing written: {files} all have the title {memory.title!r}, so saving by "
             "it would be a guess. Update the one you mean "
             f"({g.command('write', 'FILE', '--from', 'NEW', '--expect', 'REVISION')}), or "
             f"give the others another title ({g.command('set', 'FILE', 'name=…')})",
             err=True)
        return
    echo(f"nothing written: the title is close to {memory.file}'s. Update that memory "
         f"({g.command('write', memory.file, '--from', 'FILE', '--expect', memory.revision[:12])}"
         f", or remember again with its exact title), or re-run with --distinct to save a "
         f"new one", err=True)


def remember_json(result: RememberResult) -> dict[str, Any]:
    """The memory as ``show --json`` shows it (the close match for ``similar``), plus what
    was done: ``action``, ``matched`` (how it was found), ``score``, ``previous_revision``."""
    return {**memory_json(result.memory, date.today()), "action": result.action,
            "matched": result.kind, "score": result.score,
            "previous_revision": result.previous_revision}
