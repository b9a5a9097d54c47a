"""Per-layer caps: how many memories one store (one layer) holds, and how large one body
may be.

A store knows its ``Caps`` and refuses, before anything is written, what no caller may
do: a body over ``hard_cap_body_bytes`` (``BodyTooLarge``) and a create that would take
the layer past ``hard_cap_memories`` (``LayerFull``). Making room — archiving the least
recently read memory — needs the archive, which sits above the store, so it lives in
``history/caps.py`` (``enforce_caps``); this module only measures and refuses. Soft caps
never refuse: they are warning texts for the caller to show.

Counting is a directory scan (``count_memories``), never a parse: a create in a
layer of 10,000 memories must not read 10,000 files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BodyTooLarge, IllegalSetting, LayerFull, UnreadableFile
from ..files.memory import split
from ..files.paths import name_key

if TYPE_CHECKING:
    from ..config import Settings
    from ..files.folder import MemoryFolder

SOFT_MEMORIES = "soft_cap_memories"
HARD_MEMORIES = "hard_cap_memories"
SOFT_BODY = "soft_cap_body_bytes"
HARD_BODY = "hard_cap_body_bytes"


@dataclass(frozen=True)
class Caps:
    """One layer's caps; 0 turns a cap off. ``refused`` is an illegal count-cap setting:
    every create is refused with it (a guessed cap would archive the wrong memories),
    while edits of existing memories, which never archive, go through."""

    soft_memories: int = 1000
    hard_memories: int = 20000
    soft_body_bytes: int = 8192
    hard_body_bytes: int = 65536
    refused: IllegalSetting | None = None

    def count_caps(self) -> tuple[int, int]:
        """(soft, hard) memory counts; raises the refused setting, as ``Settings.guarded``."""
        if self.refused is not None:
            raise self.refused
        return self.soft_memories, self.hard_memories


DEFAULT_CAPS = Caps()
NO_CAPS = Caps(0, 0, 0, 0)


def caps_from_settings(settings: Settings) -> Caps:
    """The caps in ``settings``; a refused count cap is kept as ``refused``, not raised,
    so opening a store to read never fails on it."""
    try:
        soft, hard = settings.soft_cap_memories, settings.hard_cap_memories
    except IllegalSetting as exc:
        return Caps(soft_body_bytes=settings.soft_cap_body_bytes,
                    hard_body_bytes=settings.hard_cap_body_bytes, refused=exc)
    return Caps(soft, hard, settings.soft_cap_body_bytes, settings.hard_cap_body_bytes)


def body_bytes(text: str) -> int:
    """The UTF-8 size of a whole file's body: what follows its frontmatter."""
    return len(text[split(text).body_start:].encode("utf-8"))


def check_body(caps: Caps, name: str, size: int) -> str | None:
    """Refuse a body over the hard cap; the soft cap's warning text (about ``name``, which
    it does not repeat), or None."""
    if caps.hard_body_bytes and size > caps.hard_body_bytes:
        raise BodyTooLarge(name, size, caps.hard_body_bytes, HARD_BODY)
    if caps.soft_body_bytes and size > caps.soft_body_bytes:
        return (f"the body is {size} bytes, past the soft cap of "
                f"{caps.soft_body_bytes} ({SOFT_BODY}); consider splitting it")
    return None


def count_memories(folder: MemoryFolder) -> int:
    """The memories at the top level of the layer, as ``folder.files()`` lists them, by
    one directory scan and no file read: every create counts, so at 10,000 memories the
    Unicode folding of each name (``name_key``) is skipped for the ASCII ones, whose key
    is their lower case."""
    folder.require_directory()
    try:
        with os.scandir(folder.directory) as entries:
            keys = [_key(e.name) for e in entries if not e.name.startswith(".")]
    except OSError as exc:
        raise UnreadableFile(folder.directory, exc.strerror or str(exc)) from exc
    reserved = folder.reserved
    return sum(1 for key in keys if key.endswith(".md") and key not in reserved)


def _key(name: str) -> str:
    return name.lower() if name.isascii() else name_key(name)


def room_needed(caps: Caps, count: int) -> int:
    """How many memories must go before one more may be created (0: there is room)."""
    _, hard = caps.count_caps()
    return max(count - hard + 1, 0) if hard else 0


def refuse_if_full(caps: Caps, folder: MemoryFolder, name: str, count: int | None = None
                   ) -> None:
    """The store's last word before a create (under its lock): never past the hard cap.
    A caller that archives for room (``enforce_caps``) does so before this check.
    ``count``: the layer's count when the caller keeps it (a batch counts once)."""
    _, hard = caps.count_caps()
    if not hard:
        return
    count = count_memories(folder) if count is None else count
    if room_needed(caps, count):
        raise LayerFull(name, count, hard, HARD_MEMORIES,
                        "archive one first (`sagemem archive NAME --reason …`), or create "
                        "it through enforce_caps, which archives the least recently read")


def count_warning(caps: Caps, count: int) -> str | None:
    """The soft cap's warning once the layer holds ``count`` memories, or None."""
    soft, _ = caps.count_caps()
    if soft and count > soft:
        return (f"the layer holds {count} memories, past the soft cap of {soft} "
                f"({SOFT_MEMORIES}); archive what is no longer needed "
                "(`sagemem archive candidates`)")
    return None
