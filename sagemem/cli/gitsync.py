"""``sagemem merge-driver``: the command git runs to merge a memory folder's files (the
work is in ``sagemem.gitsync.driver``; ``install git`` wires it in)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer
from typer.core import TyperCommand

from ..errors import SagememError
from ..files.controls import visible
from .base import Globals, app, echo

if TYPE_CHECKING:
    from ..store import MemoryStore

CONFLICT = 1


class _GitsArguments(TyperCommand):
    """Git's four placeholders are files, never options: a memory named ``-x.md`` at the
    repository's top must not read as ``-x`` (exit 2, ours kept whole and theirs' edit
    lost) — not even under an install older than the ``--`` its command now has."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if len(args) == 4 and "--" not in args:
            args = ["--", *args]
        return super().parse_args(ctx, args)


@app.command("merge-driver", cls=_GitsArguments)
def merge_driver(
    ctx: typer.Context,
    base: Annotated[Path, typer.Argument(help="git's %O: the common ancestor's file.")],
    ours: Annotated[Path, typer.Argument(help="git's %A: ours; the result is written here.")],
    theirs: Annotated[Path, typer.Argument(help="git's %B: theirs.")],
    path: Annotated[str, typer.Argument(help="git's %P: the file's path in the repository.")],
) -> None:
    """Merge one memory file (or MEMORY.md) for git: frontmatter field by field, the body
    with git's line merge, the index line by line.

    Git runs this itself once `sagemem install git` has wired it in. Exit 0: merged;
    exit 1: a conflict, marked in the file as git marks one and recorded in `sagemem
    conflicts`. Anything the driver cannot do falls back to git's own merge.
    """
    from ..gitsync.driver import run_driver

    try:
        outcome = run_driver(base, ours, theirs, path, lambda: _folder(ctx.obj, path))
    except (SagememError, OSError) as exc:
        echo(f"sagemem: {visible(path)}: left unmerged ({visible(str(exc))})", err=True)
        raise typer.Exit(CONFLICT) from None
    if outcome.plain is not None:
        echo(f"sagemem: {visible(path)}: merged as plain text ({visible(outcome.plain)})",
             err=True)
    if outcome.unqueued is not None:
        echo(f"sagemem: conflicts will not be queued: {visible(outcome.unqueued)}", err=True)
    if outcome.clean:
        return
    if outcome.plain is None:
        record = (f"; see: sagemem conflicts show {outcome.conflict_id}"
                  if outcome.conflict_id else "")
        echo(f"sagemem: {visible(path)}: conflict in {visible(', '.join(outcome.where))}"
             f"{record}", err=True)
    raise typer.Exit(CONFLICT)


def _folder(g: Globals, path: str) -> MemoryStore | None:
    """The memory folder whose queue records a conflict — ``--dir``, else the one whose
    ``.gitattributes`` wired ``path`` in (git runs the driver at the repository's top) —
    or None, said once, when it cannot be opened: the merge itself needs no folder."""
    from ..gitsync.driver import folder_of

    if g.memory_dir is None:
        found = folder_of(path, Path.cwd())
        if found is None:  # never the default folder: the conflict is not its business
            echo("sagemem: conflicts will not be queued: no .gitattributes of "
                 "'sagemem install git' above this file; give --dir", err=True)
            return None
        g = Globals(found, g.state_dir)
    try:
        store = g.store(warn_pending=False)
        store.require_directory()  # no queue made beside a folder that is not there
        return store
    except SagememError as exc:
        echo(f"sagemem: conflicts will not be queued: {visible(str(exc))}", err=True)
        return None
