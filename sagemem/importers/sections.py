"""A Markdown file cut into sections, the unit a CLAUDE.md or an OpenClaw MEMORY.md
becomes memories by: a ``#`` or ``##`` heading starts one (deeper headings stay inside
theirs), text before the first heading is a section of its own, and a heading inside a
code fence (```` ``` ```` or ``~~~``) is code, never a cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,2})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    """One section: its heading text (None for the text before any heading), the
    1-based line of that heading (or of the first line), and the lines under it."""

    heading: str | None
    line: int
    body: str


def split_sections(text: str, first_line: int = 1) -> list[Section]:
    """``text`` cut at its ``#``/``##`` headings outside code fences, in order; a text
    with no heading is one section. Blank-only preambles are dropped."""
    sections: list[Section] = []
    heading: str | None = None
    start = first_line
    lines: list[str] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=first_line):
        fence = _fence_after(line, fence)
        match = _HEADING.match(line) if fence is None and not _opens(line) else None
        if match:
            _close(sections, heading, start, lines)
            heading, start, lines = match.group(2).strip(), number, []
        else:
            lines.append(line)
    _close(sections, heading, start, lines)
    return sections


def _opens(line: str) -> bool:
    return _FENCE.match(line) is not None


def _fence_after(line: str, fence: str | None) -> str | None:
    """The fence open after ``line``: a fence line opens one, the same marker (as long
    or longer) closes it; other lines change nothing."""
    match = _FENCE.match(line)
    if match is None:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker
    if marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker):]:
        return None
    return fence


def _close(sections: list[Section], heading: str | None, start: int, lines: list[str]) -> None:
    body = "\n".join(lines).strip("\n")
    if heading is None and not body.strip():
        return
    sections.append(Section(heading, start, body))
