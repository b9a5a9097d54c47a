"""Facts as lines: what a run leaves absent from every active memory.

An audit cannot see a lost fact; a diff can. A memory's facts are the lines of its body
(the frontmatter is fields, reported per operation as its byte and line change); a line
holding no letter or digit (a blank, a rule, a lone bullet) carries none. A prior line
is *present* after a run when some active memory still holds it, anywhere — a merge
that moved it to another file loses nothing — compared with runs of whitespace
collapsed, since re-wrapping changes no fact. It is computed from the texts before and
after, never taken from the planner: a planner cannot report its own losses away.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..files.memory import file_lines, line_of, split

MAX_LINE_CHARS = 500
"""A manifest shows a lost line whole up to this many characters, then cut with …"""


@dataclass(frozen=True)
class LostLine:
    """A prior line no active memory holds after the run: its file, its line number in
    that file as it was, its text; ``archived`` when the whole memory went to
    ``archive/`` (the line is still there, restorable), not dropped by a rewrite."""

    file: str
    line: int
    text: str
    archived: bool = False

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "text": self.text,
                "archived": self.archived}


def normal(line: str) -> str:
    """A line as compared: runs of whitespace collapsed, ends trimmed."""
    return " ".join(line.split())


def carries_fact(line: str) -> bool:
    return any(c.isalnum() for c in line)


def fact_lines(text: str) -> Iterator[tuple[int, str]]:
    """The body lines of a memory's text that carry a fact, with their 1-based line
    numbers in the whole file."""
    parts = split(text)
    first = line_of(text, parts.body_start) if parts.body_start else 1
    offset = first - 1
    for number, line in enumerate(file_lines(text[parts.body_start:]), start=1):
        if carries_fact(line):
            yield offset + number, line


def present_lines(texts: Iterable[str]) -> set[str]:
    """Every fact line the texts hold, normalised: what "present after" is checked in."""
    return {normal(line) for text in texts for _, line in fact_lines(text)}


def lost_lines(before: Mapping[str, str], after: Mapping[str, str], files: Iterable[str], *,
               archived: Iterable[str] = (), present: set[str] | None = None
               ) -> list[LostLine]:
    """The fact lines of ``files`` as they were in ``before`` that no active memory of
    ``after`` holds, in file then line order. ``archived``: the files moved whole to
    archive/; ``present``: ``present_lines(after.values())`` when the caller has it."""
    held = present_lines(after.values()) if present is None else present
    moved = set(archived)
    lost: list[LostLine] = []
    for file in sorted(set(files)):
        text = before.get(file)
        if text is None:
            continue
        for number, line in fact_lines(text):
            if normal(line) not in held:
                lost.append(LostLine(file, number, _shown(line), file in moved))
    return lost


def prior_line_count(before: Mapping[str, str], files: Iterable[str]) -> int:
    """How many fact lines ``files`` held before: the loss ceiling's denominator."""
    return sum(sum(1 for _ in fact_lines(before[f])) for f in set(files) if f in before)


def _shown(line: str) -> str:
    text = line.strip()
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS - 1] + "…"
