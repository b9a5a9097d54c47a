"""The two layers' names, and when a project memory shadows a global one: the same title
(``name``, else the file name without .md, NFKC-normalised and case-folded) or the same
file name. Kept apart from ``merge.py`` so that listing and writing never load search.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

PROJECT, GLOBAL = "project", "global"


def title_key(file: str, name: str | None) -> str:
    """What a person calls a memory, compared as equal when it reads the same."""
    title = name.strip() if name and name.strip() else file.removesuffix(".md")
    return unicodedata.normalize("NFKC", title).casefold()


def shadow_keys(names: Iterable[tuple[str, str | None]]) -> frozenset[str]:
    """The titles and file names of a layer's memories, for ``shadowed``."""
    keys: set[str] = set()
    for file, name in names:
        keys.add(title_key(file, name))
        keys.add("\0" + unicodedata.normalize("NFKC", file).casefold())
    return frozenset(keys)


def shadowed(file: str, name: str | None, keys: frozenset[str]) -> bool:
    """Whether a project memory has this memory's title or file name."""
    return (title_key(file, name) in keys
            or "\0" + unicodedata.normalize("NFKC", file).casefold() in keys)
