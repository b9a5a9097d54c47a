"""The command line: a thin typer layer over the library (``import sagemem`` never loads it).

``base.py`` holds the typer app and the options and output helpers every command shares
(``progress`` the progress bars of long work);
each other module registers one family of commands on it; ``main.py`` imports them all
and is the one place errors become exit codes. Offers ``app``, ``main`` and ``run``.

The command modules: ``memories`` (init, list, show, new, config), ``remember``,
``write`` (write, edit, set), ``agent`` (search, read, inject, session, ledger, use,
task, hook claude-code|gemini|codex) with ``embedding`` (``--mode``) and ``batch`` (``--batch``
files), ``engine`` (index, eval), ``audit`` (audit, watch), ``conflicts``, ``history``
(log, revert), ``snapshot`` (snapshots, rollback, recover), ``archive`` (archive,
restore, purge, locks), ``dream`` (consolidation: plan, run, history, show, undo,
auto), ``hosts`` (install claude-code|cursor|vscode|codex|gemini,
install git, doctor), ``gitsync``
(merge-driver), ``sync``, ``scope`` (scope, off, on, use), ``serve`` (mcp, serve), ``ui`` (the
panel), ``transfer`` (export, the import group); ``output`` and ``output_agent`` hold
the JSON and text shapes; ``fast`` answers the commonest shapes of ``list`` and
``config`` without typer (``sagemem/launch.py``'s table), byte for byte as they do.

Importing the package loads no typer: ``main`` imports it when it runs, ``app`` on
first use, so ``fast`` and ``output`` can be imported on their own.
"""

from typing import Any

from .main import main, run

__all__ = ["app", "main", "run"]


def __getattr__(name: str) -> Any:
    """``app``, the typer app, loaded with typer when first asked for."""
    if name == "app":
        from .base import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
