"""Codex: the MCP server in ``config.toml``, the hooks in ``hooks.json`` beside it.

Sources: https://developers.openai.com/codex/mcp (``[mcp_servers.<name>]`` with
``command``, ``args``, ``env``; ``~/.codex/config.toml``, or ``.codex/config.toml`` in a
trusted project) and https://developers.openai.com/codex/hooks (``hooks.json`` next to
each config layer, ``~/.codex/hooks.json`` and ``<repo>/.codex/hooks.json``: event →
``[{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]``, ``timeout`` in
seconds; ``UserPromptSubmit`` answers with Claude Code's ``hookSpecificOutput``
``additionalContext``; ``SessionStart``'s sources are startup, resume and clear).
The user scope follows ``CODEX_HOME`` when it is set, as Codex does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..claude_code.wiring import HOOK_TIMEOUT_S, Wiring
from .spec import Hooks, Host, Locate, Scope, hook_command, stdio_server

EVENTS: tuple[tuple[str, str | None], ...] = (
    ("UserPromptSubmit", None),  # every prompt: the memories that answer it
    ("SessionStart", "clear"),  # /clear emptied the context: reset the session
)


def _in_codex_dir(name: str) -> Locate:
    def locate(scope: Scope, home: Path, project: Path) -> Path:
        if scope == "project":
            return project / ".codex" / name
        codex_home = os.environ.get("CODEX_HOME")
        return (Path(codex_home) if codex_home else home / ".codex") / name
    return locate


def hook(wiring: Wiring) -> dict[str, Any]:
    return {"type": "command", "command": hook_command(wiring, "codex"),
            "timeout": HOOK_TIMEOUT_S}


def server(wiring: Wiring) -> dict[str, Any]:
    entry = stdio_server(wiring)
    return entry if entry["env"] else {k: v for k, v in entry.items() if k != "env"}


CODEX = Host(name="codex", title="Codex", locate=_in_codex_dir("config.toml"),
             format="toml", servers_key="mcp_servers", server=server,
             hooks=Hooks(_in_codex_dir("hooks.json"), EVENTS, hook),
             sources=("https://developers.openai.com/codex/mcp",
                      "https://developers.openai.com/codex/hooks"))
