"""The command line: a thin typer layer over the library (``import sagemem`` never loads it).

``base.py`` holds the typer app and the options and output helpers every command shares;
each other module registers one family of commands on it; ``main.py`` imports them all
and is the one place errors become exit codes. Offers ``app``, ``main`` and ``run``.

The command modules: ``memories`` (init, list, show, new, config), ``remember``,
``write`` (write, edit, set), ``agent`` (search, read, inject, session, ledger, use,
task, hook claude-code) with ``embedding`` (``--mode``) and ``batch`` (``--batch``
files), ``engine`` (index, eval), ``audit`` (audit, watch), ``conflicts``, ``history``
(log, revert), ``snapshot`` (snapshots, rollback, recover), ``archive`` (archive,
restore, purge, locks), ``dream`` (consolidation: plan, run, history, show, undo,
auto), ``hosts`` (install claude-code, install git, doctor), ``gitsync``
(merge-driver), ``sync``, ``scope`` (scope, off, on, use), ``serve`` (mcp, serve), ``ui`` (the
panel), ``transfer`` (export, the import group); ``output`` and ``output_agent`` hold
the JSON and text shapes.
"""

from .base import app
from .main import main, run

__all__ = ["app", "main", "run"]
