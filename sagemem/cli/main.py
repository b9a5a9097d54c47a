"""The ``sagemem`` command: a thin typer layer over the library.

Each command parses its arguments, makes one library call and prints the result. Errors
become exit codes in one place, ``main``: ``error: …`` on stderr, exit 2 for a usage
mistake (a group, or ``sagemem``, given no command prints its help and exits 2 too), 1
for everything else, never a traceback (``SAGE_MEM_DEBUG=1`` shows one for an
unexpected internal error). A command's module is imported when that command is run.
"""

from __future__ import annotations

import copy
import os
import sys
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..config import parse_debug
from ..errors import SagememError
from .output import error_line

if TYPE_CHECKING:
    import click
    from typer.core import TyperGroup

# Each command: the module that registers it on ``app``, in the order ``sagemem --help``
# lists them — a user's order: the memories, reading, writing, undo, upkeep, agents. A
# command's module is imported only when that command is asked for: importing and
# building all of them cost ~90 ms of a 190 ms `sagemem config`.
COMMANDS = {
    **dict.fromkeys(("init", "list", "show"), "memories"),
    **dict.fromkeys(("search", "read", "inject"), "agent"),
    "new": "memories",
    "remember": "remember",
    **dict.fromkeys(("write", "edit", "set"), "write"),
    "conflicts": "conflicts",
    **dict.fromkeys(("log", "revert"), "history"),
    "snapshot": "snapshot",
    **dict.fromkeys(("rollback", "recover"), "snapshot"),
    **dict.fromkeys(("archive", "restore", "purge", "lock", "unlock", "locks"), "archive"),
    **dict.fromkeys(("audit", "watch"), "audit"),
    "dream": "dream",
    **dict.fromkeys(("export", "import"), "transfer"),
    **dict.fromkeys(("index", "eval"), "engine"),
    "config": "memories",
    "scope": "scope",
    **dict.fromkeys(("ledger", "use", "session", "task"), "agent"),
    **dict.fromkeys(("install", "doctor"), "hosts"),
    "merge-driver": "gitsync",
    "hook": "agent",
    **dict.fromkeys(("mcp", "serve"), "serve"),
    "ui": "ui",
    "sync": "sync",
}


@cache
def lazy_commands() -> type[TyperGroup]:
    """The top-level group's class: lists every command from ``COMMANDS``, and imports
    and builds only the one a command line names (``--help`` builds them all). Made on
    first use, so importing this module (``from sagemem.cli import main``) loads no typer."""
    from typer.core import TyperGroup

    class LazyCommands(TyperGroup):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            module = COMMANDS.get(cmd_name)
            if module is None:
                return None
            import_module(f"{__package__}.{module}")
            return built(cmd_name)

    return LazyCommands


def built(name: str) -> click.Command:
    """The click command typer builds for one registered command or group of ``app``."""
    import click
    import typer

    from .base import app

    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                         rich_markup_mode=None)
    holder.callback()(_no_options)  # a callback makes typer build a group around it
    holder.registered_commands = [c for c in app.registered_commands if _name(c) == name]
    holder.registered_groups = [g for g in app.registered_groups if g.name == name]
    group = typer.main.get_command(holder)
    assert isinstance(group, click.Group)
    return group.commands[name]


def _name(command: Any) -> str:
    import typer

    return command.name or typer.main.get_command_name(command.callback.__name__)


def _no_options() -> None:
    """Only a frame for one command while it is built."""


@cache
def root() -> click.Group:
    """``app`` with its global options and no command built yet."""
    import typer

    from .base import app

    shell = copy.copy(app)
    shell.info = copy.copy(app.info)
    shell.info.cls = lazy_commands()
    shell.registered_commands, shell.registered_groups = [], []
    return typer.main.get_group(shell)


USAGE = 2
INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; the one place errors become exit codes."""
    import typer

    from .base import echo

    argv = sys.argv[1:] if argv is None else argv
    try:
        if not argv:  # `sagemem` alone: its help, and the usage exit code like a bare group
            root().main(args=["--help"], prog_name="sagemem", standalone_mode=False)
            return USAGE
        result = root().main(args=argv, prog_name="sagemem", standalone_mode=False)
    except SagememError as exc:
        return _fail(str(exc), 1)
    except typer.Abort:
        return _fail("aborted", 1)
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except Exception as exc:
        if _is_group_without_command(exc):  # `sagemem snapshot`: its help, like `sagemem`
            echo(exc.ctx.get_help())  # type: ignore[attr-defined]
            return USAGE  # no command was run: a script must not read this as success
        if _is_usage_error(exc):  # typer's parser errors: bad option, missing argument, …
            return _usage_failure(exc)
        if parse_debug(os.environ.get("SAGE_MEM_DEBUG", "")):
            import traceback

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
    from .base import echo

    echo(error_line(message), err=True)
    return code


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
