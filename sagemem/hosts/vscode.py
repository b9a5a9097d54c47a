"""VS Code (Copilot's agent mode): MCP servers in ``mcp.json`` under ``servers``, each
``{"type": "stdio", "command", "args", "env"}``; install wires the server only.

Source: https://code.visualstudio.com/docs/copilot/reference/mcp-configuration — the
workspace's ``.vscode/mcp.json``, or the one in the user profile ("MCP: Open User
Configuration"). The default profile's folder is VS Code's user data folder
(https://code.visualstudio.com/docs/configure/settings#_settings-file-locations):
``$XDG_CONFIG_HOME/Code/User`` (``~/.config``) on Linux, ``~/Library/Application
Support/Code/User`` on macOS, ``%APPDATA%\\Code\\User`` on Windows. A named profile
keeps its own file, which install does not guess at.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

from .spec import Host, Scope, stdio_server


def locate(scope: Scope, home: Path, project: Path) -> Path | None:
    if scope == "project":
        return project / ".vscode" / "mcp.json"
    folder = user_folder(home, sys.platform, os.environ)
    return folder / "mcp.json" if folder is not None else None


def user_folder(home: Path, platform: str, env: os._Environ[str] | dict[str, str]
                ) -> Path | None:
    """The default profile's folder on this platform; None where VS Code documents none."""
    if platform.startswith("linux"):
        config = env.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(config) / "Code" / "User"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if platform == "win32" and env.get("APPDATA"):
        return Path(env["APPDATA"]) / "Code" / "User"
    return None


VSCODE = Host(name="vscode", title="VS Code", locate=locate, format="json",
              servers_key="servers", server=partial(stdio_server, type="stdio"),
              sources=("https://code.visualstudio.com/docs/copilot/reference/"
                       "mcp-configuration",),
              unlocated="VS Code documents no user folder on this platform; use --project")
