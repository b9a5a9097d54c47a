"""``list`` and ``config`` answered without typer: the fast paths of ``sagemem/launch.py``.

Typer and click cost more to import than Python takes to start, and these two are what a
person (or an agent) runs most. Each function here takes the plain shapes of its command
line — the options spelt out in full, each once, nothing else — does what the typer
command does through the same library calls, and prints the same lines from the same
functions of ``output.py``. Anything else it declines (returns ``None``, having printed
nothing), and the full CLI runs: help, an unknown option, ``--type=x``, a bad type, a
settings warning, a notice, a folder left half done, any error. So every message that is
not the plain answer comes from one place, the full CLI, and is the same whichever path
was tried first (``tests/test_fast_paths.py`` compares the two byte for byte).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Protocol

from ..files.controls import visible
from ..files.fields import TYPES


class Call(Protocol):
    """What ``launch.Call`` holds (launch is above the CLI: it is not imported here)."""

    memory_dir: Path | None
    state_dir: Path | None
    rest: tuple[str, ...]


FLAGS = {"--active", "--json"}
VALUED = {"--type", "--tag"}


def options(args: Sequence[str], flags: set[str], valued: set[str]
            ) -> dict[str, str | bool] | None:
    """The options of a plain command line, or ``None`` for any other shape (an option
    given twice, spelt ``--x=v``, a value that looks like an option, an argument)."""
    found: dict[str, str | bool] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if word in found:
            return None
        if word in flags:
            found[word] = True
        elif word in valued and i + 1 < len(args) and not args[i + 1].startswith("-"):
            found[word] = args[i + 1]
            i += 1
        else:
            return None
        i += 1
    return found


def list_memories(call: Call) -> int | None:
    """``sagemem list [--type T] [--tag G] [--active] [--json]``, as ``memories.list_``."""
    given = options(call.rest[1:], FLAGS, VALUED)
    if given is None or not _utf8_streams():
        return None
    type_ = given.get("--type")
    if isinstance(type_, str):
        if type_.strip().lower() not in TYPES:
            return None  # the full CLI says which types there are, as a usage error
        type_ = type_.strip().lower()
    tag = given.get("--tag")
    try:
        lines = _listing(call.memory_dir, call.state_dir, type_ if isinstance(type_, str) else None,
                         tag if isinstance(tag, str) else None, "--active" in given,
                         "--json" in given)
    except Exception:  # any error is the full CLI's to report, in its words
        return None
    if lines is None:
        return None
    return _show(*lines)


def _listing(memory_dir: Path | None, state_dir: Path | None, type_: str | None,
             tag: str | None, active: bool, as_json: bool
             ) -> tuple[list[str], list[str]] | None:
    from ..config import load_settings
    from ..history.journal import pending_notice
    from ..layers import Layers
    from .output import list_output, terminal_columns

    settings = load_settings(memory_dir=memory_dir, state_dir=state_dir)
    if settings.warnings:
        return None
    today = date.today()
    with Layers.from_settings(settings) as layers:
        stores = layers.stores()
        if layers.notices or any(pending_notice(store.state_dir) for _, store in stores):
            return None
        listings = [(layer, store.list(type=type_, tag=tag, active=active, today=today))
                    for layer, store in stores]
    return list_output(listings, layers.folder, today, terminal_columns(), as_json)


def show_config(call: Call) -> int | None:
    """``sagemem config [--json]``, as ``memories.config``."""
    given = options(call.rest[1:], {"--json"}, set())
    if given is None or not _utf8_streams():
        return None
    from ..config import load_settings
    from .output import config_output

    try:
        settings = load_settings(memory_dir=call.memory_dir, state_dir=call.state_dir,
                                 allow_off=True)
        if settings.warnings and (settings.scope is None or not settings.scope.off):
            return None  # said on stderr by the full CLI
        lines = config_output(settings, "--json" in given)
    except Exception:  # any error is the full CLI's to report, in its words
        return None
    return _show(lines, [])


def _utf8_streams() -> bool:
    """Only where click would write the same bytes: both streams UTF-8 text."""
    return all((getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8"
               for stream in (sys.stdout, sys.stderr))


def _show(out: list[str], err: list[str]) -> int:
    """Print as ``base.echo`` does (this is the fast paths' one printer): every control
    character but newline and tab shown as text, so a memory's bytes never drive the
    terminal. A reader gone (``| head``) ends it with exit 1 and nothing more said, as
    click does."""
    try:
        for lines, stream in ((out, sys.stdout), (err, sys.stderr)):
            if lines:
                stream.write(visible("\n".join(lines)) + "\n")
                stream.flush()
    except BrokenPipeError:
        _quiet_at_exit()
        return 1
    return 0


def _quiet_at_exit() -> None:
    """Both streams sent to /dev/null: the interpreter's last flush would write to the
    broken pipe again and print a traceback of it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
