"""The parts of a Markdown text that are not prose: a frontmatter block at the top, fenced
code, inline code spans, URLs and link targets. A relative date there is quoted, not
meant (``sleep 1 day``, ``/archive/last-week``), so consolidation leaves it as written.
"""

from __future__ import annotations

import bisect
import re

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:.*?\r?\n)??(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)",
                          re.DOTALL)
_FENCE_LINE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<rest>[^\n]*)", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
_URL = re.compile(r"(?<![\w.])(?:[a-z][a-z0-9+.-]{1,15}://|www\.|mailto:)[^\s<>\"'`]+"
                  r"|\]\([^)\s]*|<[^>\s]+>", re.IGNORECASE)


def _fenced_blocks(text: str, start: int) -> list[tuple[int, int]]:
    """Fenced code blocks, per CommonMark: closed by the same fence character at least as
    long, or by the end of the text when never closed."""
    spans: list[tuple[int, int]] = []
    opened: re.Match[str] | None = None
    for line in _FENCE_LINE.finditer(text, start):
        fence = line["fence"]
        if opened is None:
            if not (fence[0] == "`" and "`" in line["rest"]):
                opened = line
        elif fence[0] == opened["fence"][0] and len(fence) >= len(opened["fence"]) \
                and not line["rest"].strip():
            spans.append((opened.start(), line.end()))
            opened = None
    if opened is not None:
        spans.append((opened.start(), len(text)))
    return spans


def _code_spans(text: str, outside: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inline code: a backtick run closed by the next run of the same length in the same
    paragraph. Pairing by index keeps a text of a million stray backticks linear."""
    runs = [m for m in _BACKTICKS.finditer(text) if not overlaps(m.start(), m.end(), outside)]
    by_length: dict[int, list[int]] = {}
    for number, run in enumerate(runs):
        by_length.setdefault(len(run.group()), []).append(number)
    blanks = [m.start() for m in _BLANK_LINE.finditer(text)]
    spans: list[tuple[int, int]] = []
    number = 0
    while number < len(runs):
        run = runs[number]
        same = by_length[len(run.group())]
        later = bisect.bisect_right(same, number)
        paragraph_end = _next_after(blanks, run.end(), len(text))
        if later < len(same) and runs[same[later]].start() < paragraph_end:
            spans.append((run.start(), runs[same[later]].end()))
            number = same[later]
        number += 1
    return spans


def _next_after(positions: list[int], position: int, default: int) -> int:
    index = bisect.bisect_left(positions, position)
    return positions[index] if index < len(positions) else default


def verbatim_spans(text: str) -> list[tuple[int, int]]:
    """Spans never rewritten, sorted and merged: frontmatter, fences, inline code, URLs
    and link targets."""
    frontmatter = _FRONTMATTER.match(text)
    top = frontmatter.end() if frontmatter else 0
    spans = _merged(([(0, top)] if top else []) + _fenced_blocks(text, top))
    spans = _merged(spans + _code_spans(text, spans))
    return _merged(spans + [(m.start(), m.end()) for m in _URL.finditer(text)])


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether [start, end) touches a span; merged spans have rising ends, so only the
    last span starting before ``end`` can."""
    index = bisect.bisect_left(spans, (end, 0))
    return index > 0 and spans[index - 1][1] > start
