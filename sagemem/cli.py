"""The ``sagemem`` command: a thin typer layer over the library.

Each command parses its arguments, makes one library call and prints the result. Errors
become exit codes in one place, ``main``: ``error: …`` on stderr, exit 2 for a usage
mistake, 1 for everything else, never a traceback (``SAGE_MEM_DEBUG=1`` shows one for
an unexpected internal error).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from . import __version__
from .config import Settings, default_state_dir, load_settings, parse_debug
from .errors import SagememError
from .fields import TYPES
from .init import init_directory
from .output import (
    init_json,
    listing_json,
    listing_text,
    memory_json,
    memory_text,
    settings_json,
    settings_text,
)
from .store import MemoryStore

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="sagemem: an agent's long-term memory as plain Markdown files.",
)

INTERRUPTED = 130
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (see README: JSON output).")]


@dataclass(frozen=True)
class Globals:
    memory_dir: Path | None
    state_dir: Path | None

    def settings(self) -> Settings:
        return load_settings(memory_dir=self.memory_dir, state_dir=self.state_dir)

    def store(self) -> MemoryStore:
        return MemoryStore.from_settings(self.settings())

    def command(self, *args: str) -> str:
        """A sagemem command line to paste, with the directory options this run was given
        (an undo printed without them would look in the default state directory)."""
        words = ["sagemem"]
        for option, path in (("--dir", self.memory_dir), ("--state-dir", self.state_dir)):
            if path is not None:
                words += [option, shlex.quote(os.path.abspath(path))]
        return " ".join([*words, *args])


@app.callback()
def options(
    ctx: typer.Context,
    memory_dir: Annotated[Path | None, typer.Option(
        "--dir", help="Memory directory (overrides SAGE_MEM_DIR).")] = None,
    state_dir: Annotated[Path | None, typer.Option(
        "--state-dir", help="State directory (overrides SAGE_MEM_STATE_DIR).")] = None,
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    """sagemem: an agent's long-term memory as plain Markdown files."""
    ctx.obj = Globals(memory_dir, state_dir)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"sagemem {__version__}")
        raise typer.Exit()


def memory_type(value: str) -> str:
    """A --type value, matched ignoring case as in frontmatter."""
    if value.strip().lower() not in TYPES:
        raise typer.BadParameter(f"must be one of {', '.join(TYPES)}", param_hint="--type")
    return value.strip().lower()


def interactive() -> bool:
    """Whether a person can be asked (stdin is a terminal); a script or an agent passes
    --yes, or is not asked at all. Tests replace this one function."""
    return sys.stdin.isatty()


def echo_json(data: dict[str, Any] | list[Any]) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2))


PROGRESS_MIN_FILES = 500


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress callback for long library work: a bar on stderr, only for large
    directories (a small one finishes before a bar would be read)."""
    bar: Any = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if total < PROGRESS_MIN_FILES:
            return
        if bar is None:
            bar = typer.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)

    try:
        yield update
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def echo_lines(lines: list[str]) -> None:
    typer.echo("\n".join(lines))


@app.command()
def init(
    ctx: typer.Context,
    directory: Annotated[Path | None, typer.Argument(
        help="Memory directory to create (default: --dir, SAGE_MEM_DIR, ~/.sage-mem/memory).")
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
        typer.echo(f"warning: {warning}", err=True)
    exports = f"SAGE_MEM_DIR={shlex.quote(str(settings.memory_dir))}"
    if settings.state_dir != default_state_dir(settings.memory_dir):
        exports += f" SAGE_MEM_STATE_DIR={shlex.quote(str(settings.state_dir))}"
    typer.echo(f"next: export {exports} (or pass --dir/--state-dir before the command); "
               f"sagemem's own state lives in {settings.state_dir}", err=True)


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
    listing = ctx.obj.store().list(type=type_, tag=tag, active=active, today=today)
    if as_json:
        echo_json(listing_json(listing, today))
    else:
        echo_lines(listing_text(listing, today, shutil.get_terminal_size((80, 24)).columns))
    for error in listing.errors:
        typer.echo(f"warning: {error.error}", err=True)


@app.command()
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    archived: Annotated[bool, typer.Option("--archived", help="Look in archive/.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Show a memory: its fields, revision, parse problems and body."""
    memory = ctx.obj.store().get(name, archived=archived)
    if as_json:
        echo_json(memory_json(memory, date.today()))
    else:
        echo_lines(memory_text(memory, date.today()))


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
    as_json: JsonOption = False,
) -> None:
    """Write a new memory <type>_<slug>.md (never overwriting) and index it in MEMORY.md."""
    type_ = memory_type(type_)
    if not description.strip():
        raise typer.BadParameter("must not be empty", param_hint="--description")
    text = stdin_text("--body") if body == "-" else body
    memory = ctx.obj.store().new(type=type_, name=name, description=description,
                                 tags=tag or (), aliases=alias or (), body=text, file=file)
    if as_json:
        echo_json(memory_json(memory, date.today()))
    else:
        typer.echo(f"created  {memory.file}  (revision {memory.revision[:12]})")


def stdin_text(param_hint: str) -> str:
    """All of stdin as UTF-8 text; other bytes are a usage error naming the option."""
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"stdin is not UTF-8 text (bad byte at offset {exc.start})",
                                 param_hint=param_hint) from None


@app.command()
def config(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every setting in effect, its value, and where it came from."""
    settings = ctx.obj.settings()
    if as_json:
        echo_json(settings_json(settings))
    else:
        echo_lines(settings_text(settings))
    for warning in settings.warnings:
        typer.echo(f"warning: {warning}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; the one place errors become exit codes."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        result = app(args=argv or ["--help"], prog_name="sagemem", standalone_mode=False)
    except SagememError as exc:
        return _fail(str(exc), 1)
    except typer.Abort:
        return _fail("aborted", 1)
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except Exception as exc:
        if _is_group_without_command(exc):  # `sagemem snapshot`: its help, like `sagemem`
            typer.echo(exc.ctx.get_help())  # type: ignore[attr-defined]
            return 0
        if _is_usage_error(exc):  # typer's parser errors: bad option, missing argument, …
            return _usage_failure(exc)
        if parse_debug(os.environ.get("SAGE_MEM_DEBUG", "")):
            traceback.print_exc()
        return _fail(f"internal error ({type(exc).__name__}: {exc}); "
                     "rerun with SAGE_MEM_DEBUG=1 for details", 1)
    if result == INTERRUPTED:  # typer turns Ctrl-C into Exit(130) before we see it
        return _fail("interrupted", INTERRUPTED)
    return result if isinstance(result, int) else 0


def _usage_failure(exc: Any) -> int:
    code = int(exc.exit_code)
    hint = "; see `sagemem --help`" if code == 2 else ""
    # click 8.2 names a missing env var as 'None' in its message; say nothing instead
    message = exc.format_message().replace(" (env var: 'None')", "")
    if "--dir" in message or "--state-dir" in message:
        hint = "; global options go before the command: sagemem --dir DIR COMMAND"
    return _fail(message.rstrip(".") + hint, code)


def _is_group_without_command(exc: Exception) -> bool:
    """click 8.2 raises this for a command group given no subcommand (8.1 printed help)."""
    import click

    no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)
    return no_args is not None and isinstance(exc, no_args) and exc.ctx is not None


def _is_usage_error(exc: Exception) -> bool:
    """Typer's command-line errors, whichever click (installed or vendored) raised them."""
    return hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int)


def _fail(message: str, code: int) -> int:
    first_line = " ".join(message.split())
    print(f"error: {first_line}", file=sys.stderr)
    return code


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


# registering their commands on ``app``: the agent-facing ones, archive and locks, the
# audit, snapshots and rollback, the writing/conflict ones
from . import cli_agent, cli_archive, cli_audit, cli_snapshot, cli_write  # noqa: E402,F401
