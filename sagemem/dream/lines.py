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

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..files.memory import file_lines, line_of, split

COUNTERPART_SCORE = 70
"""How alike (rapidfuzz's plain ratio, 0-100: edit distance over both lengths) a new
line must be to a lost one to count as its rewording: "Contract expires 2027-10-03, no
auto-renewal." and "Contract expires 2027-10-03." score 77; two sentences of one deploy
checklist 46, unrelated ones 25-45. (WRatio, which takes the best partial match, gave an
unrelated short line 85: too generous for what escapes the loss ceiling.) A reworded
line is still listed as no longer present, with what took its place."""
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
    now: str | None = None
    """The line of the rewritten memory that took its place, when one did (``yesterday``
    made a date; a sentence reworded): shown beside it for the review."""
    reworded: bool = False
    """``now`` keeps every number and negation of the line (or is the line with its
    dates made absolute): a rewording, not counted by the loss ceiling. A pair that
    changed a number or a "not" is shown, and counted as dropped."""

    @property
    def dropped(self) -> bool:
        """Gone, or changed in a number or a negation: what the loss ceiling counts."""
        return not self.archived and not self.reworded

    def to_json(self) -> dict[str, object]:
        item: dict[str, object] = {"file": self.file, "line": self.line, "text": self.text,
                                   "archived": self.archived, "reworded": self.reworded}
        if self.now is not None:
            item["now"] = self.now
        return item


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
        gone = [(n, line) for n, line in fact_lines(text) if normal(line) not in held]
        if not gone:
            continue
        taking = _counterparts(gone, text, after.get(file)) if file not in moved else {}
        lost += [LostLine(file, n, _shown(line), file in moved,
                          None if n not in taking else _shown(taking[n][0]),
                          n in taking and taking[n][1])
                 for n, line in gone]
    return lost


def _counterparts(gone: list[tuple[int, str]], old: str, new: str | None
                  ) -> dict[int, tuple[str, bool]]:
    """For lines a rewrite took out of a memory, the new lines of that memory that took
    their place, and whether each is a plain rewording: the line with its relative dates
    made absolute from the memory's ``updated`` (whoever did it) is; else the closest
    unused line at least ``COUNTERPART_SCORE`` alike is, if it keeps the old line's
    numbers and negations (``keeps_fact``)."""
    if new is None:
        return {}
    from rapidfuzz import fuzz, process

    from ..files.memory import parse
    from .dates import absolute_dates

    anchor = parse(old.encode("utf-8"), "old.md").updated
    had = {normal(line) for _, line in fact_lines(old)}
    fresh = [line for _, line in fact_lines(new) if normal(line) not in had]
    taking: dict[int, tuple[str, bool]] = {}
    for number, line in gone:
        if not fresh:
            break
        shown = [normal(f) for f in fresh]
        dated = normal(absolute_dates(line, anchor)) if anchor is not None else None
        if dated is not None and dated in shown:
            taking[number] = (fresh.pop(shown.index(dated)), True)
            continue
        best = process.extractOne(normal(line), shown, scorer=fuzz.ratio,
                                  score_cutoff=COUNTERPART_SCORE)
        if best is not None:
            now = fresh.pop(best[2])
            taking[number] = (now, keeps_fact(line, now))
    return taking


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NEGATION = re.compile(r"(?i)\b(?:not|no|never|none|nor|without|cannot|\w+n't)\b|[不没别无非未勿]")


def keeps_fact(old: str, new: str) -> bool:
    """Whether ``new`` keeps every number of ``old`` and as many negations: a date moved
    by a month, a port changed, a "do not" dropped are changed facts, not rewordings."""
    from collections import Counter

    numbers = Counter(_NUMBER.findall(old)) - Counter(_NUMBER.findall(new))
    return not numbers and len(_NEGATION.findall(old)) == len(_NEGATION.findall(new))


def unindexed(index_before: str, index_after: str, live: Iterable[str]) -> list[LostLine]:
    """MEMORY.md lines the run removed that pointed at a memory still live after it: the
    memory is not lost, but nothing lists it any more (an index rewrite that dropped it)."""
    from ..files.indexfile import entries
    from ..files.paths import name_key

    alive = {name_key(f) for f in live}
    pointed = {name_key(e.target.removeprefix("./")) for e in entries(index_after)}
    lines = index_before.split("\n")
    return [LostLine(INDEX_NAME, e.line, _shown(lines[e.line - 1]))
            for e in entries(index_before)
            if (key := name_key(e.target.removeprefix("./"))) in alive and key not in pointed]


INDEX_NAME = "MEMORY.md"


def prior_line_count(before: Mapping[str, str], files: Iterable[str]) -> int:
    """How many fact lines ``files`` held before: the loss ceiling's denominator."""
    return sum(sum(1 for _ in fact_lines(before[f])) for f in set(files) if f in before)


def _shown(line: str) -> str:
    text = line.strip()
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS - 1] + "…"
