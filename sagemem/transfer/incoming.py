"""What an import brings: the one shape every source is read into before anything is
written, so that redaction, caps, dedupe and "never overwrite" are decided in one place
(``transfer/apply``) whatever the source — a sagemem export or another tool's notes.

A reader (``importers/*``, the export reader) never writes; it turns its source into a
``Batch``: the memories it would create, each with the whole text of its file, and what
it could not take, each with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

EXPORT_SOURCE = "export"
"""The source of a Batch read from a sagemem export: memories already, so an import
takes them whole (no duplicate-body skip) and may copy their MEMORY.md."""


@dataclass(frozen=True)
class Incoming:
    """One memory an import would create: its file name in the (flat) folder and the
    whole text of that file, frontmatter included; ``origin`` says where it came from in
    every report line (``CLAUDE.md:12 § Testing``, ``export: user_role.md``)."""

    name: str
    text: str
    origin: str
    archived: bool = False
    locked: bool = False


@dataclass(frozen=True)
class Skipped:
    """Something a reader found and did not take, and why (said to the user)."""

    origin: str
    reason: str


@dataclass(frozen=True)
class Batch:
    """What one source offers: ``source`` names it (``export``, ``claude-code``,
    ``basic-memory``, ``openclaw``, ``mem0``); ``notes`` are lines for the report (a
    section classified by default, an import not followed); ``index`` is the source's
    own MEMORY.md text when it brings one (an export), None otherwise."""

    source: str
    items: tuple[Incoming, ...]
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()
    index: str | None = None


def grouped_notes(pairs: list[tuple[str, str]]) -> tuple[str, ...]:
    """Per-memory notes (``(origin, message)``) as report lines: ``origin: message`` for
    a message said once, one line with the count and the first origin for a message
    said of many (10,001 uncategorised mem0 facts are one line, not 10,001)."""
    origins: dict[str, list[str]] = {}
    for origin, message in pairs:
        origins.setdefault(message, []).append(origin)
    return tuple(f"{found[0]}: {message}" if len(found) == 1 else
                 f"{message} ({len(found):,} memories, first {found[0]})"
                 for message, found in origins.items())
