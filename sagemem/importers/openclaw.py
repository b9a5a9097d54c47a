"""An OpenClaw workspace's memory read into a Batch.

OpenClaw's docs (openclaw/openclaw ``docs/concepts/memory.md``, https://docs.openclaw.ai/concepts/memory):
the workspace holds ``MEMORY.md``, the curated long-term memory (``memory.md`` is read
when it is absent), and ``memory/YYYY-MM-DD.md`` daily logs (newer versions also write
``memory/YYYY-MM-DD-<slug>.md``). ``MEMORY.md`` is split by section and typed like a
CLAUDE.md (``sections``, ``classify``); each daily log is one ``project`` memory — a
day's running notes are the work in progress — titled ``Daily log YYYY-MM-DD``, its
date kept as ``updated:`` and ``when:``. Other files (``DREAMS.md``, notes elsewhere in
``memory/``) are listed as skipped, with the reason.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from ..transfer.incoming import Batch, Skipped
from .build import first_sentence, incoming
from .section_memories import Gathered, SectionFile, add_sections
from .source import markdown_files, require_folder, try_read

SOURCE = "openclaw"
_DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-(.+))?\.md$")


def read_batch(path: Path) -> Batch:
    """The long-term memory and daily logs of the OpenClaw workspace ``path``."""
    root = require_folder(path, "an OpenClaw workspace (the folder holding MEMORY.md)")
    into = Gathered()
    _long_term(root, into)
    if (root / "memory").is_dir() and not (root / "memory").is_symlink():
        files, walk_notes = markdown_files(root / "memory")
        into.notes.extend(walk_notes)
        for file in files:
            _daily(root, file, into)
    return Batch(SOURCE, tuple(into.items), tuple(into.skipped), into.all_notes())


def _long_term(root: Path, into: Gathered) -> None:
    label = next((n for n in ("MEMORY.md", "memory.md") if (root / n).is_file()), None)
    if label is None:
        return
    text = try_read(root / label, label)
    if isinstance(text, Skipped):
        into.skipped.append(text)
    else:
        add_sections(SOURCE, SectionFile(label, text), into)


def _daily(root: Path, file: Path, into: Gathered) -> None:
    relative = file.relative_to(root).as_posix()
    day, slug = _day_of(file) if file.parent == root / "memory" else (None, None)
    if day is None:
        into.skipped.append(Skipped(relative, "not a daily log (memory/YYYY-MM-DD.md)"))
        return
    text = try_read(file, relative)
    if isinstance(text, Skipped):
        into.skipped.append(text)
        return
    if not text.strip():
        into.skipped.append(Skipped(relative, "an empty daily log"))
        return
    title = f"Daily log {day.isoformat()}" + (f" ({slug})" if slug else "")
    summary = first_sentence(text, 160)
    fields: dict[str, object] = {
        "name": title, "description": f"OpenClaw daily log of {day.isoformat()}"
                                      + (f": {summary}" if summary else ""),
        "type": "project", "updated": day, "when": day.isoformat(),
        "source": f"{SOURCE}:{relative}"}
    into.items.append(incoming(into.names.claim("project", title), fields, text, relative))


def _day_of(file: Path) -> tuple[date | None, str | None]:
    """A daily log's date and its slug (``2026-01-05-standup.md``), or (None, None)."""
    match = _DAILY.match(file.name)
    if match is None:
        return None, None
    try:
        return date.fromisoformat(match.group(1)), match.group(2)
    except ValueError:
        return None, None
