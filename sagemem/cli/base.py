"""The typer app and what every command module shares: the global options, JSON and
line output, progress bars, the interactive check and the one confirmation, stdin
reading.

Command modules import this one; it imports none of them (``main.py`` does), so there is
no registration cycle.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from .. import __version__
from ..config import Settings, load_settings
from ..files.controls import visible
from ..files.fields import TYPES
from .output import command_line
from .output import json_text as json_text

if TYPE_CHECKING:
    from ..layers import Layers
    from ..store import MemoryStore

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # every subcommand's context inherits help_option_names from this one
    context_settings={"help_option_names": ["-h", "--help"]},
    help="sagemem: an agent's long-term memory as plain Markdown files.",
)

JsonOption = Annotated[bool, typer.Option(
    "--json", help="Print JSON (its keys: the docs' JSON output page).")]
ReasonOption = Annotated[str | None, typer.Option(
    "--reason", help="Why: kept in the change log (sagemem log), and in the conflict record "
                     "when the write is refused.")]
GlobalOption = Annotated[bool, typer.Option(
    "--global", help="The global layer (SAGE_MEM_GLOBAL_DIR), not the project's folder.")]


@dataclass(frozen=True)
class Globals:
    memory_dir: Path | None
    state_dir: Path | None

    def settings(self) -> Settings:
        """The settings, loaded once per command; their warnings (a refused
        ``snapshot_keep``, a state directory left by a moved folder) go to stderr then."""
        return self._settings

    def any_settings(self) -> Settings:
        """The settings even when memory is off for this project (``config`` and
        ``scope`` show that); every other command reads ``settings``, which refuses."""
        settings = self._any_settings
        if settings.scope is None or not settings.scope.off:
            for warning in settings.warnings:
                echo(f"warning: {warning}", err=True)
        return settings

    @cached_property  # writes the instance __dict__, which a frozen dataclass allows
    def _settings(self) -> Settings:
        settings = load_settings(memory_dir=self.memory_dir, state_dir=self.state_dir)
        for warning in settings.warnings:
            echo(f"warning: {warning}", err=True)
        return settings

    @cached_property
    def _any_settings(self) -> Settings:
        return load_settings(memory_dir=self.memory_dir, state_dir=self.state_dir,
                             allow_off=True)

    def store(self, *, warn_pending: bool = True, global_: bool = False) -> MemoryStore:
        """The store (the global layer's with ``global_``: NoGlobalLayer if there is
        none); first a warning when a killed operation left the folder half done (every
        command that opens the store says so, reading ones included)."""
        from ..store import MemoryStore

        if global_:
            store = self.layers(warn_pending=False).for_write(global_=True)
        else:
            store = MemoryStore.from_settings(self.settings())
        if warn_pending:
            self._warn_pending(store)
        return store

    def layers(self, *, warn_pending: bool = True) -> Layers:
        """The project store and the global one, if any; a global folder named but
        missing is said once, on stderr."""
        from ..layers import Layers

        layers = Layers.from_settings(self.settings())
        for notice in layers.notices:
            echo(f"notice: {notice}", err=True)
        if warn_pending:
            for _, store in layers.stores():
                self._warn_pending(store)
        return layers

    def _warn_pending(self, store: MemoryStore) -> None:
        """Say that a killed operation left ``store``'s folder half done."""
        from ..history.journal import pending_notice  # `sagemem config` needs no store

        if notice := pending_notice(store.state_dir):
            typer.echo(f"warning: {notice}; finish it: {self.command('recover')}", err=True)

    def command(self, *args: str) -> str:
        """A sagemem command line to paste, with the directory options this run was given
        (an undo printed without them would look in the default state directory)."""
        return command_line(self.memory_dir, self.state_dir, *args)


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
        echo(f"sagemem {__version__}")
        raise typer.Exit()


def memory_type(value: str) -> str:
    """A --type value, matched ignoring case as in frontmatter."""
    if value.strip().lower() not in TYPES:
        raise typer.BadParameter(f"must be one of {', '.join(TYPES)}", param_hint="--type")
    return value.strip().lower()


def revision_param(value: str, param_hint: str) -> str:
    """A revision option (``read --revision``, ``write --expect``) by the library's one
    rule (``checked_revision``): a mistake in it is a usage error, exit 2."""
    from ..errors import InvalidRevision
    from ..files.revision import checked_revision

    try:
        return checked_revision(value)
    except InvalidRevision as exc:
        raise typer.BadParameter(str(exc), param_hint=param_hint) from None


def missing(param_hint: str, why: str, param_type: str = "option") -> click.MissingParameter:
    """The usage error for a required value not given: ``Missing option --reason. Why…``
    (a BadParameter would say "Invalid value" of something nobody typed)."""
    return click.MissingParameter(why, param_hint=param_hint, param_type=param_type)


def interactive() -> bool:
    """Whether a person can be asked (stdin is a terminal); a script or an agent passes
    --yes, or is not asked at all. Tests replace this one function."""
    return sys.stdin.isatty()


YesOption = Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")]


def confirm(question: str, *, yes: bool, required: str | None,
            preview: Callable[[], Sequence[str]] | None = None) -> None:
    """The one confirmation of every command that asks before changing things.

    ``--yes`` goes ahead. Off a terminal nothing is asked (a piped "n" would go unread
    and the change happen anyway): with ``required`` (why --yes is needed) that is a
    usage error, exit 2; None lets the change go ahead (a single move that one command
    undoes). On a terminal ``preview`` and the question go to stderr, so stdout stays
    data; "no" prints ``cancelled`` and exits 1, nothing changed.
    """
    if yes:
        return
    if not interactive():
        if required is not None:
            require_yes(yes, required)
        return
    if preview is not None:
        echo("\n".join(preview()), err=True)
    if not typer.confirm(question, err=True):
        echo("cancelled", err=True)
        raise typer.Exit(CANCELLED)


def require_yes(yes: bool, why: str) -> None:
    """Off a terminal, where nothing can be asked, ``why`` needs --yes (exit 2)."""
    if not yes and not interactive():
        raise click.UsageError(f"--yes is required off a terminal, where nothing can be "
                               f"asked, {why}")


CANCELLED = 1




def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Print for a person: every control character but newline and tab shown as text
    (``\\x1b``), on a terminal or not — a memory's bytes never drive the terminal. Every
    command prints through here (click alone strips only CSI, and only off a terminal)."""
    typer.echo(visible(str(message)), err=err, nl=nl)


def echo_json(data: dict[str, Any] | list[Any], indent: int | None = 2) -> None:
    echo(json_text(data, indent))


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


def echo_lines(lines: list[str], *, err: bool = False) -> None:
    echo("\n".join(lines), err=err)


def stdin_text(param_hint: str) -> str:
    """All of stdin as UTF-8 text; other bytes are a usage error naming the option."""
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"stdin is not UTF-8 text (bad byte at offset {exc.start})",
                                 param_hint=param_hint) from None
