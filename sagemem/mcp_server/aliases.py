"""Argument names a model is likely to use instead of ours.

sage-mem's tools spelled their parameters in camelCase (``startLine``,
``expectedRevision``), and models guess short names (``q``, ``path``) — basic-memory found
it had to accept them. Rather than advertising every spelling in the schema (the model
reads it: one name each is clearer), a ``tools/call`` is rewritten before it is
validated: a key the tool does not have becomes the parameter it names, if that one was
not given too. Unknown keys the tool cannot place stay as they are (and are ignored).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

GUESSES: dict[str, tuple[str, ...]] = {
    "q": ("query",), "question": ("query",), "search": ("query",),
    "text": ("query", "content", "body"),
    "path": ("name",), "file": ("name",), "filename": ("name",), "file_name": ("name",),
    "file_path": ("name",), "memory": ("name",), "memory_name": ("name",),
    "title": ("name",),
    "k": ("limit",), "top_k": ("limit",), "max_results": ("limit",), "count": ("limit",),
    "type": ("scope",), "tag": ("scope",),
    "new_content": ("content",), "revision_id": ("revision",),
    "expected": ("expected_revision",), "base_revision": ("expected_revision",),
}
"""Guessed name → the parameters it may stand for, first match wins; applied only where
the tool has that parameter and not the guessed name itself (``type`` is
``list_memories``' own parameter; for ``search_memory`` it is the scope)."""

PATHLIKE = frozenset({"path", "file_path", "filePath"})
MEMORY_TOOL_ROOT = "/memories/"
"""The memory tool's own name for the folder (``/memories/user_pets.md``), which models
trained on it use for a memory."""
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """``expectedRevision`` → ``expected_revision``."""
    return _CAMEL.sub(r"_\1", name).lower()


def renamed(arguments: Mapping[str, Any], parameters: frozenset[str],
            folder: Path | None = None) -> dict[str, Any]:
    """``arguments`` with each foreign key moved to the parameter it stands for; a guessed
    path becomes a file name only when it names a file of ``folder``."""
    result = {k: v for k, v in arguments.items() if k in parameters}
    for key, value in arguments.items():
        if key in parameters:
            continue
        target = _target(key, parameters)
        if target is None or target in result:
            result.setdefault(key, value)  # the tool cannot place it: left for validation
            continue
        result[target] = _file_name(value, folder) if key in PATHLIKE else value
    return result


def _target(key: str, parameters: frozenset[str]) -> str | None:
    snake = snake_case(key)
    candidates = (snake, *GUESSES.get(key, ()), *GUESSES.get(snake, ()))
    return next((c for c in candidates if c in parameters), None)


def _file_name(value: Any, folder: Path | None) -> Any:
    """A guessed ``path`` may be ``/memories/user_pets.md`` or the file's path on disk: a
    memory is named by its file name. Any other path stays whole, for the name check to
    refuse: ``/other/project/user_pets.md`` must not read this folder's file of that name."""
    if not isinstance(value, str) or "/" not in value:
        return value
    directory, _, file = value.rpartition("/")
    if value.startswith(MEMORY_TOOL_ROOT) and "/" not in value[len(MEMORY_TOOL_ROOT):]:
        return file
    if folder is not None and os.path.isabs(value) and _same_directory(directory, folder):
        return file
    return value


def _same_directory(directory: str, folder: Path) -> bool:
    try:
        return os.path.samefile(directory or "/", folder)
    except OSError:
        return False


class ArgumentAliases:
    """Server middleware: rewrite a ``tools/call``'s arguments before validation."""

    def __init__(self, parameters: Mapping[str, frozenset[str]],
                 folder: Path | None = None) -> None:
        self.parameters = dict(parameters)  # tool name → its parameter names
        self.folder = folder  # the memory folder: a path inside it names its file

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            known = self.parameters.get(params.get("name", ""))
            arguments = params.get("arguments")
            if known is not None and isinstance(arguments, Mapping):
                ctx = dataclasses.replace(
                    ctx, params={**params, "arguments": renamed(arguments, known, self.folder)})
        return await call_next(ctx)
