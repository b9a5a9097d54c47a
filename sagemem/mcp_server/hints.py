"""MCP tool annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``) as a
decorator on each tool method; ``server.py`` reads them when it registers the tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Hints:
    """MCP tool annotations: ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``."""

    def __init__(self, *, read_only: bool, destructive: bool = False,
                 idempotent: bool = False) -> None:
        self.read_only, self.destructive, self.idempotent = read_only, destructive, idempotent


def hints(**kwargs: bool) -> Callable[[F], F]:
    """Mark a method as a tool, with its annotations."""
    def mark(fn: F) -> F:
        fn.__dict__["mcp_hints"] = Hints(**kwargs)
        return fn
    return mark
