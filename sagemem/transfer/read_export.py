"""Reading an export back: the JSON document ``export.py`` writes, checked, turned into
the ``Batch`` every import applies (``apply.py``).

Anything that is not an export this version reads — not a regular file (a FIFO, a
device, a symlink), over ``MAX_EXPORT_BYTES``, not JSON, cut short, not an object,
another ``format``, a ``format_version`` newer than ``FORMAT_VERSION`` — is refused as a
whole with ``NotAnExport`` before anything is written. One bad memory in a good document
is skipped with its reason instead, so one damaged entry does not cost the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import (
    FileChangedDuringRead,
    FileTooLarge,
    MemoryNotFound,
    NotAnExport,
    UnreadableFile,
    UnsafeFile,
)
from ..files.paths import read_regular
from ..files.revision import revision_of
from .export import FORMAT, FORMAT_VERSION
from .incoming import EXPORT_SOURCE, Batch, Incoming, Skipped

MAX_EXPORT_BYTES = 256 * 1024 ** 2
"""Refused unread beyond this (the size is known from ``lstat``, so a huge or sparse file
costs nothing): a full layer — the default ``hard_cap_memories`` of 20,000, each at the
8 KiB soft body cap with its frontmatter, revision and JSON escaping, about 9 KiB — is
some 180 MiB, and its MEMORY.md at most 16 MiB. Parsing holds a few times the file in
memory, so the 2 GiB this once allowed could take a laptop's; a folder past this is
moved by copying the folder (a plain copy loses nothing but locks and ledger counts)."""


def read_export(path: Path) -> Batch:
    """The export at ``path`` as a Batch (source ``export``), its MEMORY.md in ``index``."""
    return parse_export(_read(path), path)


def parse_export(text: str, path: Path) -> Batch:
    """An export's text as a Batch; ``path`` names it in errors."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotAnExport(path, "it is not complete JSON, cut short or damaged: "
                                f"{json_problem(exc)}") from None
    _check_header(document, path)
    memories = document.get("memories")
    if not isinstance(memories, list):
        raise NotAnExport(path, "it has no 'memories' list")
    items: list[Incoming] = []
    skipped: list[Skipped] = []
    for number, entry in enumerate(memories, start=1):
        read = _entry(entry, number)
        if isinstance(read, Incoming):
            items.append(read)
        else:
            skipped.append(read)
    return Batch(EXPORT_SOURCE, tuple(items), tuple(skipped), index=_index(document, path))


def json_problem(exc: json.JSONDecodeError) -> str:
    """A JSON error as a phrase (``unterminated string at line 23, column 5``): Python's
    ``msg`` may end in "starting at", which glued to our "at line" read "at at"."""
    message = exc.msg.removesuffix(" starting at").removesuffix(": line")
    return f"{message[:1].lower()}{message[1:]} at line {exc.lineno}, column {exc.colno}"


def _read(path: Path) -> str:
    """The export's text through the library's bounded read: a regular file only (a
    FIFO would hang the import, a device never end), never through a symlink, at most
    MAX_EXPORT_BYTES."""
    try:
        data = read_regular(path, MAX_EXPORT_BYTES).data
    except MemoryNotFound:
        raise NotAnExport(path, "no such file") from None
    except FileTooLarge as exc:
        raise NotAnExport(path, f"it is {exc.size} bytes, over the "
                                f"{MAX_EXPORT_BYTES // 1024 ** 2} MiB an export may be") from None
    except (UnsafeFile, UnreadableFile) as exc:
        raise NotAnExport(path, f"it cannot be read: {exc.reason}") from None
    except FileChangedDuringRead:
        raise NotAnExport(path, "it kept changing while it was read; try again") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotAnExport(path, f"it is not UTF-8 text (bad byte at offset {exc.start})"
                          ) from None


def _check_header(document: object, path: Path) -> None:
    if not isinstance(document, dict):
        raise NotAnExport(path, f"it holds a JSON {type(document).__name__}, not an object")
    if document.get("format") != FORMAT:
        raise NotAnExport(path, f"its format is {document.get('format')!r}, not {FORMAT!r}")
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise NotAnExport(path, f"its format_version {version!r} is not a version number")
    if version > FORMAT_VERSION:
        raise NotAnExport(path, f"format_version {version} is newer than this sagemem reads "
                                f"({FORMAT_VERSION}); upgrade sagemem to import it")


def _index(document: dict[str, Any], path: Path) -> str | None:
    index = document.get("index")
    if index is None:
        return None
    if not isinstance(index, dict) or not isinstance(index.get("text"), str):
        raise NotAnExport(path, "its 'index' is not an object with a 'text'")
    text: str = index["text"]
    return text


def _entry(entry: object, number: int) -> Incoming | Skipped:
    """One memory of the document, or why it cannot be imported."""
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        return Skipped(f"export: memory #{number}", "not an object with a 'file' name")
    origin = f"export: {entry['file']}"
    if entry.get("encoding") == "base64":
        return Skipped(origin, "not UTF-8 text (kept in base64 in the export); sagemem "
                               "memories are UTF-8, so it is left out")
    text = entry.get("text")
    if not isinstance(text, str):
        return Skipped(origin, "it has no 'text'")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return Skipped(origin, "its text holds a lone surrogate, which no file can")
    revision = entry.get("revision")
    if revision is not None and revision != revision_of(data):
        return Skipped(origin, "its text does not match its revision (the export was "
                               "changed or damaged)")
    flags = {key: entry.get(key, False) for key in ("archived", "locked")}
    if not all(isinstance(value, bool) for value in flags.values()):
        return Skipped(origin, "'archived' and 'locked' must be true or false")
    return Incoming(entry["file"], text, origin, **flags)
