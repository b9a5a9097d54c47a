"""An Incoming memory made from another tool's text: its file name (``<type>_<slug>.md``,
collisions numbered), a description from the first sentence, and the text rendered as
sagemem writes a new memory (``files/edit.render_new``), ``source:`` included, so the
importer's output reads back through sagemem's own parser as the fields it meant.

Titles, first sentences and names are made from the text as the store would keep it,
secrets redacted (``writes/redact.redact``) before anything is cut or slugged: the
import's redaction of the whole text cannot reach a secret once it is a file name
(``…_password_hunter2.md``), and a cut can leave half a token it no longer knows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidName
from ..files.edit import render_new
from ..files.fields import MAX_NAME_CHARS
from ..files.paths import check_new_name, file_name_for, name_key, slugify
from ..transfer.incoming import Incoming
from ..writes.redact import redact

MAX_DESCRIPTION = 200
"""A description cut from a first sentence is at most this many characters, under the
300 a write allows: room for a whole sentence, and a MEMORY.md line stays one line."""
MAX_TITLE = 80
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[^\]\[()]*\]\s+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")
_MARKUP = re.compile(r"[*_`]+|^#+\s*|^>\s*")


def first_sentence(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """The first sentence of ``text``'s prose — headings, fences, list marks and an
    observation's ``[category]`` left out — redacted, on one line, cut at a word to
    ``limit``."""
    for line in _prose_lines(text):
        sentence = _SENTENCE_END.split(redact(line).text, maxsplit=1)[0].strip()
        if sentence:
            return shorten(sentence, limit)
    return ""


def _prose_lines(text: str) -> list[str]:
    lines: list[str] = []
    fenced = False
    for raw in text.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or raw.lstrip().startswith(("#", "|", "<!--", "---")):
            continue
        line = _MARKUP.sub("", _LIST_MARK.sub("", raw)).strip()
        if line:
            lines.append(" ".join(line.split()))
    return lines


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, cut at a word with ``…``."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit - 1].rsplit(" ", 1)[0] or line[:limit - 1]
    return cut.rstrip(" ,;:") + "…"


class Names:
    """The file names one batch hands out: ``<type>_<slug>.md``, and ``_2``, ``_3`` …
    for a second memory of the same name (compared as sagemem compares names), so a
    batch never holds two files that are one name. Deterministic: the same titles in
    the same order get the same names."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, type_: str, title: str) -> str:
        """The next free name for ``title`` (redacted first: a name is never redacted)."""
        base = self._base(type_, redact(title).text)
        name, number = base, 1
        while name_key(name) in self._taken:
            number += 1
            name = f"{base[:-3]}_{number}.md"
        self._taken.add(name_key(name))
        return name

    def claim_exact(self, name: str) -> None:
        """Take ``name`` as it is (a file copied byte for byte keeps its own name)."""
        self._taken.add(name_key(name))

    @staticmethod
    def _base(type_: str, title: str) -> str:
        try:
            return check_new_name(file_name_for(type_, title))
        except InvalidName:
            return f"{type_}_memory.md"


def title_of(text: str) -> str:
    """A title on one line within MAX_TITLE characters (sagemem's own bound is
    MAX_NAME_CHARS; a title this short keeps the MEMORY.md line readable), redacted."""
    return shorten(redact(text).text, min(MAX_TITLE, MAX_NAME_CHARS))


def incoming(name: str, fields: Mapping[str, object], body: str, origin: str) -> Incoming:
    """The memory ``name`` with ``fields`` (name, description, type, … in that order)
    above ``body``, rendered as sagemem renders a new memory."""
    return Incoming(name=name, text=render_new(fields, body), origin=origin)


def anchor(heading: str | None) -> str:
    """A heading as a link anchor (``## Testing the API`` → ``testing-the-api``)."""
    return slugify(heading or "").replace("_", "-")
