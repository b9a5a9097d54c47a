"""A file of instructions (a CLAUDE.md, an OpenClaw MEMORY.md) made memories, one per
section: typed by ``classify``, named from the heading, described by the first sentence,
``source: <tool>:<file>#<anchor>``. Shared by the readers that split by section, so both
split, type and name alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from ..transfer.incoming import Incoming, Skipped, grouped_notes
from ..writes.redact import redact
from .build import Names, anchor, first_sentence, incoming, title_of
from .classify import classify
from .sections import Section, split_sections


@dataclass
class SectionFile:
    """One file to split: its label (as shown in ``source:`` and origins), its text
    (frontmatter already removed), the line that text starts on, the type a section no
    rule types gets (None: ``reference``, with a note) and a line to open each body."""

    label: str
    text: str
    first_line: int = 1
    fallback: str | None = None
    preface: str | None = None


@dataclass
class Gathered:
    """What a batch collects: the memories, what was skipped, the notes."""

    names: Names = field(default_factory=Names)
    items: list[Incoming] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    item_notes: list[tuple[str, str]] = field(default_factory=list)

    def all_notes(self) -> tuple[str, ...]:
        """The notes, a message said of many memories once with its count."""
        return (*self.notes, *grouped_notes(self.item_notes))


def add_sections(tool: str, source: SectionFile, into: Gathered) -> None:
    """Each section of ``source`` as a memory in ``into``; a heading with nothing under
    it is skipped (its text would be a title without a memory)."""
    sections = split_sections(source.text, source.first_line)
    for section in sections:
        if section.heading:  # it becomes the title, the name, the anchor and the origin
            section = replace(section, heading=redact(section.heading).text)
        origin = f"{source.label}:{section.line}" + (f" § {section.heading}"
                                                     if section.heading else "")
        if not section.body.strip():
            into.skipped.append(Skipped(origin, "a heading with no text under it"))
        else:
            into.items.append(_memory(tool, source, section, origin, into,
                                      whole=len(sections) == 1))


def _memory(tool: str, source: SectionFile, section: Section, origin: str,
            into: Gathered, *, whole: bool = False) -> Incoming:
    verdict = classify(section.heading, section.body)
    type_ = verdict.type
    if not verdict.classified and source.fallback is not None:
        type_ = source.fallback
    elif not verdict.classified:
        into.item_notes.append((origin, "no rule gave it a type; imported as reference"))
    # Text before the first heading is named after its file, not its first sentence: a
    # sentence made a name (reference_intro_text_before_any_heading_….md) reads as noise.
    title = title_of(section.heading or (source.label if whole
                                         else f"{source.label} (preamble)"))
    slug = section.heading or PurePosixPath(source.label).name
    body = section.body if source.preface is None else f"{source.preface}\n\n{section.body}"
    place = f"{source.label}#{anchor(section.heading)}" if section.heading else source.label
    fields = {"name": title, "description": first_sentence(section.body) or title,
              "type": type_, "source": f"{tool}:{place}"}
    return incoming(into.names.claim(type_, slug), fields, body, origin)
