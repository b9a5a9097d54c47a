"""The hosts ``sagemem install`` knows, by the name on its command line."""

from __future__ import annotations

from .codex import CODEX
from .cursor import CURSOR
from .gemini import GEMINI
from .spec import Host
from .vscode import VSCODE

HOSTS: dict[str, Host] = {h.name: h for h in (CURSOR, VSCODE, CODEX, GEMINI)}
