"""Links between memories: ``[[wikilinks]]`` and Markdown links to ``.md`` files.

Only links to top-level memory files are taken: a URL, an absolute path or a path into a
subfolder (or out of the directory) is not a memory link, and code (fenced blocks and
inline spans) holds examples, not links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from .memory import Memory
from .paths import name_key
from .text import _FENCE

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
    fence: str | None = None
    for offset, line in enumerate(memory.body.splitlines()):
        opening = _FENCE.match(line)
        if opening:
            marker = opening.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is None and "[" in line:
            found += _links_in(_CODE_SPAN.sub("", line), memory.body_line + offset)
    return found


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
