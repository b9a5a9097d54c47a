"""Cursor: its MCP servers in ``mcp.json`` under ``mcpServers``; install wires the
server only, no hook.

Source: https://cursor.com/docs/mcp — "Project: ``.cursor/mcp.json``; Global:
``~/.cursor/mcp.json``", each server ``{"command", "args", "env"}`` for stdio.
"""

from __future__ import annotations

from .spec import Host, in_dir, stdio_server

CURSOR = Host(name="cursor", title="Cursor", locate=in_dir(".cursor", "mcp.json"),
              format="json", servers_key="mcpServers", server=stdio_server,
              sources=("https://cursor.com/docs/mcp",))
