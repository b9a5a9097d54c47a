"""Tokenising and paragraph splitting: the text model retrieval is built on.

Tokens: ASCII words lower-cased, with identifiers, paths, versions and numbers kept whole
*and* split into their parts (``api_base`` gives ``api_base``, ``api``, ``base``;
``v2.3`` gives ``v2.3``, ``v2``, ``3``), so either spelling finds them. CJK text becomes
overlapping two-character units (a run of one character stays a single character).
Mixed text is handled in one pass. English words get a light suffix folding
(``deploys``/``deployed``/``deploying`` → ``deploy``) so inflections meet.

Paragraphs: blank-line-separated blocks of the body, with their 1-based inclusive line
numbers in the file as it is on disk. A heading stays with the block under it, and a
fenced code block is never split, whatever blank lines it holds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from ..files.memory import file_lines

_CJK = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff"
)
_TOKEN = re.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    rf"|(?P<word>[^\W_{_CJK}]+(?:[._\-/:@#+][^\W_{_CJK}]+)*)"
)
_SPLIT = re.compile(r"[._\-/:@#+]")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


def fold(word: str) -> str:
    """A light English suffix folding, so inflections meet: ``caches``/``cache`` →
    ``cach``, ``deployed``/``deploying`` → ``deploy``, ``planned`` → ``plan``."""
    if len(word) <= 4 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # "running" → "run", but "called" → "call"
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


UNITS_KEPT = 100_000
"""How many words' units ``tokens`` keeps once worked out. A cold build of 10,000
memories meets ~1 million words but far fewer distinct ones, and lower-casing, splitting
and folding each again was half of tokenising; the bound keeps hostile text (every word
new) to a few megabytes — past it, words are worked out afresh, as before."""
_UNITS: dict[str, list[str]] = {}


def tokens(text: str) -> list[str]:
    """The search tokens of ``text``, in order, repeats kept (term frequency counts)."""
    out: list[str] = []
    known = _UNITS
    # NFKC: full-width letters and digits from a Chinese input method (８０８０) are ASCII
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
        cjk, word = match.group("cjk", "word")
        if cjk is not None:
            out.extend(cjk_units(cjk))
            continue
        units = known.get(word)
        if units is None:
            units = word_units(word.lower())
            if len(known) < UNITS_KEPT:
                known[word] = units  # never handed out: ``extend`` copies it
        out.extend(units)
    return out


def cjk_units(run: str) -> list[str]:
    """Overlapping two-character units of a CJK run; a one-character run stays whole."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def word_units(word: str) -> list[str]:
    """A word, folded, plus the parts of a compound identifier, path or version."""
    if not _SPLIT.search(word):
        return [fold(word)]
    return [word, *(fold(part) for part in _SPLIT.split(word) if part)]


def is_cjk(token: str) -> bool:
    return bool(token) and "\u2e80" <= token[0] <= "\ufaff" and not token.isascii()


@dataclass(frozen=True)
class Paragraph:
    """One block of a memory's body: its lines in the file and its text."""

    start_line: int
    end_line: int
    text: str


def paragraphs(body: str, first_line: int) -> list[Paragraph]:
    """Split a body into paragraphs; ``first_line`` is the body's line number in the file."""
    lines = file_lines(body)
    merged: list[tuple[int, int]] = []
    for start, end in _blocks(lines):
        if merged and _only_headings(lines[merged[-1][0]:merged[-1][1] + 1]):
            merged[-1] = (merged[-1][0], end)  # a heading stays with the block under it
        else:
            merged.append((start, end))
    return [Paragraph(first_line + s, first_line + e, "\n".join(lines[s:e + 1]))
            for s, e in merged]


def _blocks(lines: list[str]) -> Iterator[tuple[int, int]]:
    """(first, last) 0-based line indexes of blank-line-separated blocks, fences kept whole."""
    start: int | None = None
    fence: str | None = None
    for i, line in enumerate(lines):
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            start = i if start is None else start
        elif line.strip():
            start = i if start is None else start
        elif start is not None:
            yield start, i - 1
            start = None
    if start is not None:
        yield start, len(lines) - 1


def _only_headings(lines: list[str]) -> bool:
    return all(_HEADING.match(line) for line in lines if line.strip())
