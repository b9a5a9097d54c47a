"""The memory tool's text work: lines as ``view`` numbers them, the edits of
``str_replace`` and ``insert``, and the frontmatter a plain ``create`` is given.

Lines are what ``files.memory.file_lines`` says (split on newlines only, a final newline
ends the last line rather than starting an empty one), so the numbers ``view`` shows are
the numbers ``insert`` takes. Edits touch only the bytes they must: the rest of the
file, its CRLF line ends and its final newline (or lack of one) stay as they were.
"""

from __future__ import annotations

import re
from datetime import date

from ..files.fields import DEFAULT_TYPE, TYPES
from ..files.memory import file_lines, split

BOM = "\ufeff"
MAX_DESCRIPTION_CHARS = 150
"""About an index line's hook; longer first lines are cut at a word."""
# Heading hashes, quote marks and list bullets (a bullet only before a space: ``**bold**``
# is text).
_MARKUP = re.compile(r"^(?:\s*(?:#+|>|[-*+](?=\s)))*\s*")


def line_count(text: str) -> int:
    return len(file_lines(text))


def occurrence_lines(text: str, old: str) -> list[int]:
    """The 1-based line where each (non-overlapping) occurrence of ``old`` starts."""
    lines, start = [], text.find(old)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(old, start + len(old))
    return lines


def insert_at(text: str, line: int, insert_text: str) -> str:
    """``text`` with ``insert_text`` as new lines after line ``line`` (0: before the
    first), ended by a newline in the file's own style."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if insert_text and not insert_text.endswith("\n"):
        insert_text += newline
    offset = _line_end(text, line)
    if offset == len(text) and text and not text.endswith("\n"):
        insert_text = newline + insert_text  # the last line keeps its own end
    return text[:offset] + insert_text + text[offset:]


def _line_end(text: str, line: int) -> int:
    """The offset just past line ``line``'s newline (0: the start, after a BOM)."""
    offset = len(BOM) if text.startswith(BOM) else 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found == -1:
            return len(text)
        offset = found + 1
    return offset


def changed_lines(text: str, offset: int, new: str) -> tuple[int, int]:
    """The first and last 1-based line of ``new`` written at ``offset`` of ``text``."""
    first = text.count("\n", 0, offset) + 1
    return first, first + new.count("\n")


def has_frontmatter(text: str) -> bool:
    """Whether ``text`` opens a frontmatter block (closed or not: the model meant one)."""
    parts = split(text)
    return parts.frontmatter is not None or parts.problem is not None


def new_memory_fields(file: str, text: str, today: date) -> dict[str, object]:
    """The least a memory needs to be found: its name, a description from its first line
    of words, the type its file-name prefix says (else the default every reader uses),
    and the date."""
    prefix = file.split("_", 1)[0].lower()
    return {
        "name": file[:-3],
        "description": describe(text),
        "type": prefix if prefix in TYPES and "_" in file else DEFAULT_TYPE,
        "updated": today,
    }


def describe(text: str) -> str:
    """The first line with a word in it, heading and list marks taken off, on one line
    and cut at a word to MAX_DESCRIPTION_CHARS; "" for a text without words."""
    for line in file_lines(text):
        plain = " ".join(_MARKUP.sub("", line).split())
        if re.search(r"\w", plain):
            return _cut(plain)
    return ""


def _cut(line: str) -> str:
    if len(line) <= MAX_DESCRIPTION_CHARS:
        return line
    cut = line[:MAX_DESCRIPTION_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"
