"""Reading a ``--batch`` file of JSON lines: each line a query object, or the reason it
is not one, so a bad line costs only itself (``search`` and ``inject`` use it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import typer

BATCH_LINE_LIMIT = 64 * 1024


def read_batch(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, query object or the reason it is not one) for each non-blank line;
    a bad line costs only itself."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise typer.BadParameter(f"cannot open {path}: {exc.strerror}",
                                 param_hint="--batch") from None
    with handle:
        for number, raw in enumerate(_bounded_lines(handle), start=1):
            if raw is None:
                yield number, f"line {number} is longer than {BATCH_LINE_LIMIT // 1024} KiB"
            elif raw.strip():
                yield number, _batch_item(raw)


def _bounded_lines(handle: BinaryIO) -> Iterator[bytes | None]:
    """Each line, or None for one over the limit: read past in bounded pieces, so a huge
    line is neither held in memory nor cut into something that fails as "not JSON"."""
    while raw := handle.readline(BATCH_LINE_LIMIT + 1):
        if len(raw.rstrip(b"\r\n")) <= BATCH_LINE_LIMIT:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(BATCH_LINE_LIMIT)
        yield None


def _batch_item(raw: bytes) -> dict[str, Any] | str:
    try:
        item = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    if not isinstance(item, dict) or not isinstance(item.get("query"), str):
        return 'expected an object with a "query" string'
    return item
