"""The ``sagemem`` command's first step: the commonest calls skip the full CLI.

A hook runs before every prompt and every file tool call, so its cost is a whole
process: interpreter, imports, work. Building the typer app alone costs more than
Python's own start, so a few argument shapes are answered by small modules that import
neither typer nor numpy nor the store when they can (``FAST_PATHS``). A fast path may
decline (return ``None``: an option it does not know, a server that does not answer)
and the full CLI (``sagemem.cli``) runs instead, with the same output: a fast path is
only ever a shortcut to the same answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path


@dataclass(frozen=True)
class Call:
    """One command line split as the full CLI would: the global folder options, then the
    command words and their arguments (``rest``)."""

    memory_dir: Path | None
    state_dir: Path | None
    rest: tuple[str, ...]


FastPath = Callable[[Call], "int | None"]

FAST_PATHS: dict[tuple[str, ...], str] = {
    ("hook", "claude-code"): ".serve.client:hook_fast_path",  # a running server answers
    ("inject",): ".serve.client:inject_fast_path",  # only ``inject PROMPT``, plain
    ("list",): ".cli.fast:list_memories",
    ("config",): ".cli.fast:show_config",
}
"""An argv prefix (after the global options) and the ``module:function`` answering it:
the function gets the ``Call`` and returns an exit code, or ``None`` to decline."""

GLOBAL_OPTIONS = {"--dir": "memory_dir", "--state-dir": "state_dir"}


def split_call(argv: Sequence[str]) -> Call | None:
    """``argv`` as a ``Call``; ``None`` for any shape the full CLI should parse itself
    (``--version``, ``--help``, an option spelt ``--dir=X``, a missing value)."""
    folders: dict[str, Path | None] = {"memory_dir": None, "state_dir": None}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        key = GLOBAL_OPTIONS.get(argv[i])
        if key is None or i + 1 >= len(argv) or folders[key] is not None:
            return None
        folders[key] = Path(argv[i + 1])
        i += 2
    return Call(folders["memory_dir"], folders["state_dir"], tuple(argv[i:]))


def fast_path(call: Call) -> FastPath | None:
    """The function for the call's shape, imported only when it matches."""
    for prefix, target in FAST_PATHS.items():
        if call.rest[:len(prefix)] == prefix:
            module, _, function = target.partition(":")
            found: FastPath = getattr(import_module(module, __package__), function)
            return found
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``sagemem`` with ``argv`` (default ``sys.argv[1:]``): a fast path when one
    answers, else the full command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    call = split_call(args)
    answer = fast_path(call) if call is not None else None
    code = answer(call) if answer is not None and call is not None else None
    if code is not None:
        raise SystemExit(code)
    from .cli import run

    run()
