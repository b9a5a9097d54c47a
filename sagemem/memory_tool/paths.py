"""Where a memory-tool path lands in sagemem's flat folder, or why it lands nowhere.

The model names files under ``/memories``; sagemem's folder is flat, so the mapping is
one to one and what ``view`` lists is exactly what the other commands accept::

    /memories              the folder (view lists it)
    /memories/MEMORY.md    the index (view only: sagemem keeps it in step)
    /memories/<name>.md    the memory <name>.md at the top of the folder

Everything else is refused with a message that says what works, gate by gate: a path
that is not a string or holds a control character; a backslash or a percent-escape
(never decoded, so ``%2e%2e%2f`` is refused rather than trusted); a path outside
``/memories``; an empty, ``.`` or ``..`` segment; a subdirectory or ``archive/`` (the
folder is flat, and archived memories are out of the tool's sight); a name not ending in
``.md``. The name then passes ``check_name``, the rules the store itself enforces (no
leading dot, no separator, reserved names), so no accepted path leaves the folder; the
safe read path and the write guard refuse a symlink as the file itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import InvalidName
from ..files.controls import visible_name
from ..files.folder import ARCHIVE_DIR
from ..files.paths import INDEX_FILE, check_name, name_key
from . import messages

ROOT = "/memories"
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


class Refusal(Exception):
    """A request the tool turns down; ``message`` is exactly what the model reads.

    Not a SagememError: it never leaves ``MemoryToolHandler.handle``, which returns the
    message — a signal inside this room, like the write guard's ``_MovedOn``."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class ToolPath:
    """A path the tool accepts: ``shown`` as the model wrote it (one line, control
    characters written out), ``file`` the name in the folder (None: the folder itself)."""

    shown: str
    file: str | None

    @property
    def is_root(self) -> bool:
        return self.file is None

    @property
    def is_index(self) -> bool:
        return self.file is not None and name_key(self.file) == name_key(INDEX_FILE)


def parse_path(raw: object, reserved: Iterable[str] = ()) -> ToolPath:
    """The ToolPath ``raw`` names, or Refusal saying why it names nothing we serve."""
    if not isinstance(raw, str) or not raw:
        raise Refusal("Error: a path is a string under /memories, e.g. /memories/notes.md")
    shown = visible_name(raw)
    _refuse_tricks(raw, shown)
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        raise Refusal(messages.OUTSIDE.format(path=shown))
    segments = raw[len(ROOT) + 1:].split("/") if raw != ROOT else [""]
    if segments == [""]:
        return ToolPath(shown, None)
    if len(segments) > 1 and segments[-1] == "":
        segments.pop()  # one trailing slash, as in "/memories/archive/"
    _refuse_nesting(segments, shown)
    return ToolPath(shown, _file_name(segments[0], shown, reserved))


def _refuse_tricks(raw: str, shown: str) -> None:
    if not raw.isprintable():  # NUL, newlines, bidi overrides and their kin
        raise Refusal(f"Error: {shown}: a path holds no control characters")
    if "\\" in raw:
        raise Refusal(f"Error: {shown}: paths use / only; a backslash is never a separator "
                      "here")
    if _PERCENT_ESCAPE.search(raw):
        raise Refusal(f"Error: {shown}: percent-escapes are not decoded; write the name "
                      "itself, e.g. /memories/notes.md")


def _refuse_nesting(segments: list[str], shown: str) -> None:
    if any(segment in ("", ".", "..") for segment in segments):
        raise Refusal(f"Error: {shown}: no empty, `.` or `..` segments; every memory is "
                      "/memories/<name>.md")
    if name_key(segments[0]) == ARCHIVE_DIR:
        raise Refusal(f"Error: {shown}: archived memories are out of the memory tool's "
                      "reach (a person restores them with `sagemem restore`); view "
                      "/memories lists the live ones")
    if len(segments) > 1:
        flat = "_".join(segments)
        suggestion = flat if name_key(flat).endswith(".md") else flat + ".md"
        raise Refusal(f"Error: {shown}: sagemem's memory folder is flat, with no "
                      f"subdirectories; name the file {ROOT}/{visible_name(suggestion)} "
                      "instead")


def _file_name(name: str, shown: str, reserved: Iterable[str]) -> str:
    """``name`` if it may be a file of the folder: MEMORY.md, or a memory's name."""
    if name_key(name) == name_key(INDEX_FILE):
        return name
    if not name_key(name).endswith(".md"):
        stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
        raise Refusal(f"Error: {shown}: sagemem keeps memories as Markdown files; name it "
                      f"{ROOT}/{visible_name(stem)}.md")
    try:
        return check_name(name, reserved)
    except InvalidName as exc:
        raise Refusal(f"Error: {shown}: {exc.reason}") from None
