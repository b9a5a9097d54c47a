"""A memory's text with a new body: the frontmatter kept byte for byte, the body in the
file's own line endings.

``read_memory`` (``search/reading.py``) gives a body as its lines joined by newlines: the
CR of a CRLF line and the last line's ending are left off. ``with_body`` puts them back
as the file has them, so writing back exactly what was read changes no byte (issue 20:
a body starting with a ``---`` rule, written back as a whole file, lost the frontmatter).
A new file gets LF, which is what sagemem writes (the audit's ``crlf_line_endings``).

Whether a text is a body or a whole file is the caller's to say, never guessed here:
``opens_frontmatter`` only answers whether a whole file's first block reads as fields.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import FrontmatterDropped, InvalidArgument
from .memory import Memory, load_yaml, split
from .revision import names_revision


def newline_of(text: str) -> str:
    """A file's line ending: CRLF when its first line ends so, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def in_line_endings(text: str, newline: str) -> str:
    """``text`` with each line ending (LF or CRLF) written as ``newline``; a lone CR, which
    ends no line in an editor, stays as it is."""
    lf = text.replace("\r\n", "\n")
    return lf if newline == "\n" else lf.replace("\n", newline)


def head_of(memory: Memory) -> str:
    """The text before ``memory``'s body: its frontmatter block, delimiters included."""
    return memory.text[:len(memory.text) - len(memory.body)]


def with_body(memory: Memory | None, body: str) -> str:
    """``memory``'s text with ``body`` (as ``read_memory`` gives it) as its body; None: the
    text of a new file holding ``body`` alone. The body takes the file's line ending, and
    its last line ends as the file's last line did (a new file's with a newline).

    Refused (``InvalidArgument``) when the result would not read ``body`` back as the
    body: in a file without frontmatter, a body opening with ``---`` would become one."""
    head = "" if memory is None else head_of(memory)
    newline = "\n" if memory is None else newline_of(memory.text)
    ends_with_newline = memory is None or memory.text.endswith("\n")
    text = in_line_endings(body, newline)
    if text and ends_with_newline:
        text += newline
    if split(head + text).body_start != len(head):
        raise InvalidArgument("body", "it opens with '---', which a file without "
                                      "frontmatter would read as its frontmatter; send the "
                                      "whole file as content, frontmatter first")
    return head + text


def with_lines(memory: Memory, start_line: int, end_line: int, text: str) -> str:
    """``memory``'s text with its body lines ``start_line``..``end_line`` (the file's own
    numbering, as a ``read_memory`` page gives them) replaced by ``text``, the lines
    before and after kept byte for byte: a long memory's page is written back without
    its other pages. ``text`` takes the file's line ending; empty, the lines go.

    Refused (``InvalidArgument``) for a range outside the body, and as ``with_body``
    refuses a text that would turn into the frontmatter."""
    pieces = memory.text.split("\n")  # piece i is line i+1, less its LF
    total = len(pieces) - (1 if pieces[-1] == "" else 0)
    if not memory.body_line <= start_line <= end_line <= total:
        raise InvalidArgument("start_line", f"lines {start_line}-{end_line} are not in "
                              f"{memory.file}'s body, lines {memory.body_line}-{total}; "
                              "give a read_memory page's start_line and end_line")
    before = "".join(piece + "\n" for piece in pieces[:start_line - 1])
    if start_line == 1 and memory.text.startswith("\ufeff"):
        before = "\ufeff"  # the BOM is no line's text: read_memory never shows it
    after = "\n".join(pieces[end_line:])
    new = in_line_endings(text, newline_of(memory.text))
    if new and (end_line < total or memory.text.endswith("\n")):
        new += newline_of(memory.text)
    result = before + new + after
    if split(result).body_start != len(head_of(memory)):
        raise InvalidArgument("body", "it would turn these lines into the file's "
                                      "frontmatter; send the whole file as content")
    return result


def check_keeps_frontmatter(current: Memory, text: str, expected: str) -> None:
    """Refuse (``FrontmatterDropped``) a whole-file ``text`` with no frontmatter block at
    all for ``current``, which has one: a body taken for the file (``sagemem read``'s
    output written back) would drop every field. A text that opens with a block, even an
    empty or a broken one, says what it means and is the guard's to judge; so is a write
    whose ``expected`` revision is no longer ``current``'s (refused, both sides kept)."""
    parts = split(text)
    if current.has_frontmatter and parts.frontmatter is None and parts.problem is None \
            and names_revision(expected, current.revision):
        raise FrontmatterDropped(current.file, _field_names(current))


def _field_names(memory: Memory) -> tuple[str, ...]:
    """The top-level keys of ``memory``'s frontmatter, for the message (none if broken)."""
    return tuple(str(key) for key in _fields(split(memory.text).frontmatter or "") or ())


def _fields(block: str) -> dict[Any, Any] | None:
    """A frontmatter block's fields ({} when empty); None when it is no mapping or does
    not load."""
    try:
        loaded = load_yaml(block)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    if loaded is None:
        return {}
    return loaded if isinstance(loaded, dict) else None


def opens_frontmatter(text: str) -> bool:
    """Whether ``text`` opens with a closed ``---`` block that reads as a mapping of fields
    (or is empty): a whole file's frontmatter, not a body's horizontal rule."""
    block = split(text).frontmatter
    return block is not None and _fields(block) is not None
