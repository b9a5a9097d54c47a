"""Links between memories: ``[[wikilinks]]`` and Markdown links to ``.md`` files.

Only links to top-level memory files are taken: a URL, an absolute path or a path into a
subfolder (or out of the directory) is not a memory link, and code (fenced blocks and
inline spans) holds examples, not links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from ..files.memory import Memory
from ..files.paths import name_key
from ..search.text import _FENCE

_WIKI = re.compile(r"\[\[(?P<target>[^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|(?P<text>[^\[\]\n]*))?\]\]")
_MARKDOWN = re.compile(r"(?<!!)\[(?P<text>[^\]\n]*)\]\((?:<(?P<angled>[^>\n]+)>|"
                       r"(?P<plain>[^)\s]+))(?:[ \t]+\"[^\"\n]*\")?\)")
_CODE_SPAN = re.compile(r"`+[^`\n]*`+")


@dataclass(frozen=True)
class Link:
    """A link from a memory's body to a memory file: the file name, its line, its text."""

    target: str
    line: int
    text: str


def memory_links(memory: Memory) -> list[Link]:
    """Every link in the body that names a top-level ``.md`` file, with its file line."""
    if "[" not in memory.body:
        return []
    found: list[Link] = []
    for offset, line in _prose_lines(memory.body):
        if "[" in line:
            found += _links_in(_CODE_SPAN.sub("", line), memory.body_line + offset)
    return found


def _prose_lines(body: str) -> Iterator[tuple[int, str]]:
    """Each body line outside code (fenced or indented blocks) with HTML comments taken
    out: an example ``[[x]]`` there is not a link, and must not be reported as broken."""
    fence: str | None = None
    code = comment = False
    after_blank = True
    for offset, line in enumerate(body.splitlines()):
        opening = _FENCE.match(line)
        if opening:
            fence, code = _fence_after(fence, opening.group(1)), False
        elif fence is None:
            code = _in_indented_code(line, code, after_blank)
            if not code:
                text, comment = _outside_comments(line, comment)
                yield offset, text
        after_blank = not line.strip()


def _fence_after(fence: str | None, marker: str) -> str | None:
    """The open fence after a fence line: it opens one, closes the open one (same
    character, at least as long), or is only text inside a different one."""
    if fence is None:
        return marker[0] * len(marker)
    return None if marker.startswith(fence) else fence


def _in_indented_code(line: str, code: bool, after_blank: bool) -> bool:
    """Four spaces or a tab after a blank line (an indented paragraph continuation is
    not code) start an indented code block; blank lines inside one stay in it."""
    if not line.strip():
        return code
    return line.startswith(("    ", "\t")) and (code or after_blank)


def _outside_comments(line: str, inside: bool) -> tuple[str, bool]:
    """The parts of ``line`` outside ``<!-- … -->``, and whether a comment is still open."""
    kept: list[str] = []
    while line:
        if inside:
            end = line.find("-->")
            if end < 0:
                return "".join(kept), True
            line, inside = line[end + 3:], False
        else:
            start = line.find("<!--")
            if start < 0:
                break
            kept.append(line[:start])
            line, inside = line[start + 4:], True
    return "".join(kept) + line, inside


def _links_in(line: str, number: int) -> list[Link]:
    links = []
    for wiki in _WIKI.finditer(line):
        target = wiki["target"].strip()
        name = target if name_key(target).endswith(".md") else f"{target}.md"
        if target and "/" not in target:
            links.append(Link(name, number, (wiki["text"] or target).strip()))
    for md in _MARKDOWN.finditer(line):
        target = local_target(md["angled"] or md["plain"])
        if target is not None:
            links.append(Link(target, number, md["text"]))
    return links


def local_target(target: str) -> str | None:
    """The top-level ``.md`` file a Markdown link target names (``%20`` decoded, a
    ``#fragment`` and ``./`` taken off), or None: a URL, a path, another kind of file.
    MEMORY.md's lines are read the same way, so the index and the links agree."""
    path = unquote(target.split("#", 1)[0]).removeprefix("./")
    if not path or "/" in path or "\\" in path or ":" in path or "\x00" in path:
        return None
    return path if name_key(path).endswith(".md") else None
