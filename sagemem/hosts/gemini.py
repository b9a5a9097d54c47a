"""Gemini CLI: the MCP server and the hooks, both in ``settings.json``.

Sources: https://geminicli.com/docs/tools/mcp-server (``mcpServers``, each ``{"command",
"args", "env"}``) and https://geminicli.com/docs/hooks/reference (``hooks.<Event>``: a
list of ``{"matcher", "hooks": [{"type": "command", "command", "name", "timeout"}]}``,
``timeout`` in milliseconds). User scope ``~/.gemini/settings.json``, project
``.gemini/settings.json``. ``BeforeAgent`` fires after the prompt is submitted, before
planning, and appends ``hookSpecificOutput.additionalContext`` to the prompt: the
memories; ``SessionStart`` with source ``clear`` emptied the context, so the session is
reset (``sagemem hook gemini``, ``hosts/hook.py``).
"""

from __future__ import annotations

from typing import Any

from ..claude_code.wiring import HOOK_TIMEOUT_S, Wiring
from .spec import Hooks, Host, hook_command, in_dir, stdio_server

EVENTS: tuple[tuple[str, str | None], ...] = (
    ("BeforeAgent", None),  # every prompt: the memories that answer it
    ("SessionStart", "clear"),  # /clear emptied the context: reset the session
)


def hook(wiring: Wiring) -> dict[str, Any]:
    return {"type": "command", "command": hook_command(wiring, "gemini"),
            "name": "sagemem", "timeout": HOOK_TIMEOUT_S * 1000}


GEMINI = Host(name="gemini", title="Gemini CLI", locate=in_dir(".gemini", "settings.json"),
              format="json", servers_key="mcpServers", server=stdio_server,
              hooks=Hooks(in_dir(".gemini", "settings.json"), EVENTS, hook),
              sources=("https://geminicli.com/docs/tools/mcp-server",
                       "https://geminicli.com/docs/hooks/reference"))
