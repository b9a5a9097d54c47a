"""``export`` and the ``import`` group: one versioned JSON document out, and every
import in through one apply path (``transfer/apply.py``).

``import``'s first word is a tool (``claude-code``, ``basic-memory``, ``openclaw``,
``mem0``) or else a file: ``ImportGroup`` sends any other word to the hidden ``file``
command, so ``sagemem import backup.json`` works and a file literally named like a tool
is reached as ``./claude-code``. The tools' readers live in ``importers/`` and are
imported by their command only. They register on the one ``app`` of ``base.py``;
``main.py`` imports this module.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer
from typer.core import TyperGroup

from ..files.plural import counted
from . import base as cli
from .base import GlobalOption, JsonOption, YesOption, app, echo, echo_json, echo_lines
from .progress import progress_bar

if TYPE_CHECKING:
    from ..store import MemoryStore
    from ..transfer.incoming import Batch


class ImportGroup(TyperGroup):
    """``import``: a known first word is a subcommand, any other word the FILE of the
    hidden ``file`` command (options before it included: ``import --dry-run x.json``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["file", *args]
        return super().parse_args(ctx, args)


import_app = typer.Typer(cls=ImportGroup, no_args_is_help=True, help=(
    "Import memories: `sagemem import FILE` (an export), or from another tool "
    "(claude-code, basic-memory, openclaw, mem0). Nothing here is ever overwritten by a "
    "merge: another text under a name already here becomes a conflict record."))
app.add_typer(import_app, name="import")
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="Say what would be created, unchanged or in conflict; write nothing.")]


@app.command("export")
def export(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(
        help="Where to write the export; - (the default) is stdout.")] = "-",
    with_conflicts: Annotated[bool, typer.Option(
        "--conflicts", help="Include the conflict records (both sides of each).")] = False,
    global_: GlobalOption = False,
) -> None:
    """Write every memory (live and archived, byte for byte, with its revision, lock and
    ledger counts) and MEMORY.md as one versioned JSON document. A FILE is written
    atomically and never inside the memory folder or its state directory."""
    from ..transfer.export import export_folder, export_text, write_export

    store = ctx.obj.store(global_=global_)
    document = export_folder(store, layer="global" if global_ else "project",
                             conflicts=with_conflicts)
    for left_out in document["skipped"]:
        echo(f"warning: {left_out['file']} not exported: {left_out['reason']}", err=True)
    if file == "-":
        from ..files.controls import json_safe

        text = json_safe(export_text(document))
        _warn_if_unimportable(len(text.encode("utf-8")))
        echo(text, nl=False)
        return
    _warn_if_unimportable(write_export(document, Path(file), store))
    echo(f"exported {counted(len(document['memories']), 'memory', 'memories')} to {file}",
         err=True)


def _warn_if_unimportable(size: int) -> None:
    """One line when the export is larger than ``import`` reads: written anyway (it is
    the whole folder), but never in silence."""
    from ..transfer import read_export

    limit = read_export.MAX_EXPORT_BYTES
    if size > limit:
        echo(f"warning: the export is {size:,} bytes, over the {limit // 1024 ** 2} MiB "
             "`sagemem import` reads; move this folder by copying it instead", err=True)


@import_app.command("file", hidden=True)
def import_file(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="An export written by `sagemem export`.")],
    merge: Annotated[bool, typer.Option(
        "--merge", help="Add what is new; another text under a known name becomes a "
                        "conflict record (the default).")] = False,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Make the folder match the export: overwrite, and archive the "
                          "memories it lacks (a snapshot is taken first).")] = False,
    dry_run: DryRunOption = False,
    yes: YesOption = False,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Import an export: new memories are created through the guarded write (redaction,
    caps), the same text is left unchanged, and the export comes back whole."""
    from ..transfer.read_export import read_export

    if merge and replace:
        raise click.UsageError("--merge and --replace cannot be used together")
    store = ctx.obj.store(global_=global_)
    batch = read_export(file)
    mode = "replace" if replace else "merge"
    if replace and not dry_run:
        _confirm_replace(store, batch, yes)
    _apply(ctx, store, batch, mode=mode, dry_run=dry_run, as_json=as_json, global_=global_)


def _confirm_replace(store: MemoryStore, batch: Batch, yes: bool) -> None:
    from ..transfer.apply import apply_batch
    from ..transfer.report import report_text

    cli.confirm("replace the folder's memories with the export?", yes=yes,
                required="to import with --replace (it overwrites and archives memories)",
                preview=lambda: report_text(apply_batch(store, batch, mode="replace",
                                                        dry_run=True)))


def _apply(ctx: typer.Context, store: MemoryStore, batch: Batch, *, mode: str = "merge",
           dry_run: bool, as_json: bool, global_: bool = False) -> None:
    """Apply any source's Batch and print its report: the tail of every import command."""
    from ..transfer.apply import apply_batch
    from ..transfer.report import report_json, report_text

    with progress_bar() as progress:
        report = apply_batch(store, batch, mode=mode, dry_run=dry_run, writer="cli",
                             snapshot_keep=ctx.obj.settings().snapshot_keep, progress=progress)
    if as_json:
        echo_json(report_json(report))
    else:
        undo = ctx.obj.command("rollback", "{snapshot}", "--scope", "all", "--yes",
                               *(["--global"] if global_ else []))
        echo_lines(report_text(report, undo))


@import_app.command("claude-code")
def import_claude_code(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(
        help="A CLAUDE.md file or folder; default: the CLAUDE.md files of this folder and "
             "its parents, ~/.claude/CLAUDE.md and the project's auto-memory folder.")
    ] = None,
    adopt: Annotated[bool, typer.Option(
        "--adopt", help="Use the project's auto-memory folder in place as the memory "
                        "folder, copying nothing.")] = False,
    copy: Annotated[bool, typer.Option("--copy", help="Copy into this folder (the default).")
                    ] = False,
    dry_run: DryRunOption = False,
    as_json: JsonOption = False,
) -> None:
    """Import Claude Code's memories: CLAUDE.md sections and auto-memory files."""
    claude_code = _reader("claude_code")
    if adopt and (copy or path is not None or dry_run):
        raise click.UsageError("--adopt takes no PATH and cannot be used with --copy or "
                               "--dry-run")
    if adopt:
        before = _folder_in_effect(ctx)
        adopted = claude_code.adopt(Path.cwd(), Path.home())
        _adopted(adopted, as_json, before)
        return
    batch = claude_code.read_batch(path, home=Path.home(), cwd=Path.cwd())
    _apply(ctx, ctx.obj.store(), batch, dry_run=dry_run, as_json=as_json)


def _reader(module: str) -> Any:
    """``importers.<module>``, imported when its command runs (its reader and its
    dependencies are no other command's cost)."""
    from importlib import import_module

    return import_module(f"sagemem.importers.{module}")


def _folder_in_effect(ctx: typer.Context) -> tuple[MemoryStore, int]:
    """The project's memory folder before ``--adopt`` and how many memories it holds
    (live and archived): adopting leaves them behind, which is said, never silent."""
    from ..store import MemoryStore

    settings = ctx.obj.any_settings()
    store = MemoryStore(settings.memory_dir, settings.state_dir)
    if not store.directory.is_dir():
        return store, 0
    return store, len(store.files()) + len(store.files(True))


def _adopted(folder: Path, as_json: bool, before: tuple[MemoryStore, int]) -> None:
    store, held = before
    left = held if store.directory != folder else 0
    if as_json:
        from ..config import JSON_VERSION

        echo_json({"version": JSON_VERSION, "adopted": str(folder),
                   "left_behind": {"folder": str(store.directory), "memories": left}
                   if left else None})
        return
    echo(f"adopted {folder}")
    if left:
        old = shlex.join(["--dir", str(store.directory), "--state-dir", str(store.state_dir)])
        echo(f"note: {store.directory} holds {counted(left, 'memory', 'memories')} that "
             f"this project will no longer use; `sagemem {old} export old.json && sagemem "
             f"import old.json` brings them over, `sagemem scope use "
             f"{shlex.quote(str(store.directory))}` goes back", err=True)


@import_app.command("basic-memory")
def import_basic_memory(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="The basic-memory project folder.")],
    dry_run: DryRunOption = False, as_json: JsonOption = False,
) -> None:
    """Import a basic-memory project's notes."""
    basic_memory = _reader("basic_memory")
    _apply(ctx, ctx.obj.store(), basic_memory.read_batch(folder), dry_run=dry_run,
           as_json=as_json)


@import_app.command("openclaw")
def import_openclaw(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="The OpenClaw workspace folder.")],
    dry_run: DryRunOption = False, as_json: JsonOption = False,
) -> None:
    """Import an OpenClaw workspace's memory files."""
    openclaw = _reader("openclaw")
    _apply(ctx, ctx.obj.store(), openclaw.read_batch(folder), dry_run=dry_run,
           as_json=as_json)


@import_app.command("mem0")
def import_mem0(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A mem0 export (JSON).")],
    dry_run: DryRunOption = False, as_json: JsonOption = False,
) -> None:
    """Import memories exported from mem0."""
    mem0 = _reader("mem0")
    _apply(ctx, ctx.obj.store(), mem0.read_batch(file), dry_run=dry_run, as_json=as_json)
