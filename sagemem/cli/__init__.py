"""The command line: a thin typer layer over the library (``import sagemem`` never loads it).

``base.py`` holds the typer app and the options and output helpers every command shares;
each other module registers one family of commands on it; ``main.py`` imports them all
and is the one place errors become exit codes. Offers ``app``, ``main`` and ``run``.
"""

from .base import app
from .main import main, run

__all__ = ["app", "main", "run"]
