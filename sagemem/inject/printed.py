"""What ``sagemem inject QUESTION`` prints, as text: the one place it is made, so the
command and the hook server (``serve/``) cannot drift apart by a byte.

Only the plain shape (no ``--json``, ``--explain``, ``--batch``, no ``debug``) is made
here; the other shapes need the CLI's output helpers and stay in ``cli/agent.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..files.controls import visible
from ..layers import Layers
from ..transcripts.locate import transcript_folders
from .block import inject


@dataclass(frozen=True)
class Printed:
    """A command's whole output: what goes to stdout and to stderr, each as one text."""

    stdout: str
    stderr: str


def printed_injection(settings: Settings, question: str, session: str, *,
                      open_layers: Callable[[Settings], AbstractContextManager[Layers]]
                      = Layers.from_settings, cwd: Path | None = None,
                      env: Mapping[str, str] | None = None) -> Printed:
    """The block for ``question`` (and the session's record of it), with the notices the
    command shows on stderr; the settings' own warnings are the caller's to print. A
    server passes ``open_layers`` to keep its layers open between questions."""
    errors: list[str] = []
    with open_layers(settings) as layers:
        errors += [f"notice: {notice}" for notice in layers.notices]
        injection = inject(layers, question, session, settings,
                           transcripts=transcript_folders(settings, cwd, env))
    errors += [f"notice: {notice}" for notice in injection.notices]
    if not injection.text and injection.explain and injection.explain[-1].get("repeat"):
        errors.append(f"(the same question as the last one in session {session}: nothing "
                      "new to inject; ask differently, or reset the session)")
    stdout = visible(injection.text) + "\n" if injection.text else ""
    return Printed(stdout, "".join(visible(line) + "\n" for line in errors))
