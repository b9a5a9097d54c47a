"""What a host is to install: where it reads its MCP servers (and hooks) in each scope,
and the exact entries sagemem writes there.

A host module (``cursor``, ``vscode``, ``codex``, ``gemini``) is one ``Host`` value built
from its documented format; ``plan`` edits files from that value alone, so a fifth host
is a new module and a line in ``registry``, never a change to the editing code.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..claude_code.wiring import Wiring

Scope = Literal["user", "project"]
Format = Literal["json", "toml"]
SERVER_NAME = "sagemem"
Locate = Callable[[Scope, Path, Path], Path | None]
"""``(scope, home, project)`` to the file that scope reads; None: the host has none."""


@dataclass(frozen=True)
class Hooks:
    """A host's hook file: ``events`` (event, matcher) and the object written for each."""

    locate: Locate
    events: tuple[tuple[str, str | None], ...]
    hook: Callable[[Wiring], dict[str, Any]]


@dataclass(frozen=True)
class Host:
    """One agent host: its MCP server file and entry, and its hooks (None: it has none).
    ``sources``: the documentation pages the formats were taken from."""

    name: str
    title: str
    locate: Locate
    format: Format
    servers_key: str
    server: Callable[[Wiring], dict[str, Any]]
    hooks: Hooks | None = None
    sources: tuple[str, ...] = ()
    unlocated: str = ""
    """Why a scope whose ``locate`` gives None has no file (the refusal's words)."""


def stdio_server(wiring: Wiring, **extra: Any) -> dict[str, Any]:
    """The common stdio entry: the sagemem that ran install with ``mcp``, its folders."""
    return {**extra, "command": wiring.command[0],
            "args": [*wiring.command[1:], "mcp"], "env": dict(wiring.env)}


def hook_command(wiring: Wiring, host: str) -> str:
    """The shell line a host runs for its hook: the folders as global options, since
    these hosts (unlike Claude Code's ``env``) give a hook no environment of ours."""
    words = [shlex.join(wiring.command)]
    for option, key in (("--dir", "SAGE_MEM_DIR"), ("--state-dir", "SAGE_MEM_STATE_DIR")):
        if key in wiring.env:
            words.append(f"{option} {shlex.quote(wiring.env[key])}")
    return " ".join([*words, "hook", host])


def in_dir(folder: str, name: str) -> Locate:
    """``<home>/<folder>/<name>`` for the user, ``<project>/<folder>/<name>`` for a project."""
    return lambda scope, home, project: (home if scope == "user" else project) / folder / name
