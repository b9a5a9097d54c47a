"""A mem0 export read into a Batch: one memory per mem0 memory, each a fact.

The shape is what mem0's API returns for its memories (mem0ai/mem0 ``docs/openapi.json``,
``GET /v1/memories/`` and ``POST /v3/memories/``; the "Export Stored Memories" cookbook
saves ``client.get_all()``): either a JSON list of memories or an object holding them
under ``results`` (with ``count``, ``next``, ``previous``). Each memory has ``id`` and
``memory`` (the fact), and may have ``user_id``, ``agent_id``, ``app_id``,
``categories`` (mem0's default catalog: ``personal_details``, ``family``,
``professional_details``, ``sports``, ``travel``, ``food``, ``music``, ``health``,
``technology``, ``hobbies``, ``fashion``, ``entertainment``, ``milestones``,
``user_preferences``, ``misc``), ``metadata``, ``created_at``, ``updated_at`` and
``expiration_date``.

The type: the first of the memory's categories, then its ``metadata.type``, found in
``TYPE_WORDS`` (mem0's personal catalog → ``user``; instructions, guidelines,
conventions → ``feedback``; projects, tasks, decisions → ``project``; references,
links, docs → ``reference``); with none found, ``user`` when the memory belongs to a
``user_id`` (mem0 stores facts about its user), else ``reference`` with a note.
Categories become tags; ``updated_at`` (else ``created_at``) the ``updated:`` date,
``created_at`` the ``created:`` date (both days, as sagemem writes them; a value
that is no date is left out with a note); an ``expiration_date`` the ``invalid_at`` of the
day after it (mem0 hides a memory once that date has passed); the id the
``source: mem0:<id>``. A file that is not such JSON is ImportSourceError; one memory
without an id or a text is skipped.
"""

from __future__ import annotations

import json
import os
from datetime import date, timedelta
from pathlib import Path

from ..errors import ImportSourceError
from ..files.paths import MAX_INDEX_BYTES
from ..transfer.incoming import Batch, Incoming, Skipped, grouped_notes
from ..transfer.read_export import json_problem
from .basic_memory import tags_of
from .build import Names, first_sentence, incoming, shorten, title_of
from .source import read_bytes

SOURCE = "mem0"
MAX_EXPORT_BYTES = MAX_INDEX_BYTES
"""An export is read up to MEMORY.md's own limit (16 MiB): 10,000 mem0 facts with their
metadata are about 5 MB."""
MAX_MEMORIES = 10_000
DATE_KEYS = ("created_at", "updated_at", "expiration_date")
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "user": ("personal_details", "family", "professional_details", "sports", "travel",
             "food", "music", "health", "technology", "hobbies", "fashion", "entertainment",
             "milestones", "user_preferences", "preference", "preferences", "professional",
             "personal", "user"),
    "feedback": ("feedback", "instruction", "instructions", "guideline", "guidelines",
                 "rule", "rules", "convention", "conventions", "coding_conventions",
                 "correction", "corrections"),
    "project": ("project", "projects", "task", "tasks", "task_learnings", "decision",
                "decisions", "architecture", "work"),
    "reference": ("reference", "references", "link", "links", "resource", "resources",
                  "documentation", "docs"),
}


def read_batch(path: Path) -> Batch:
    """Every memory of the mem0 export file ``path``; ImportSourceError names what is
    wrong with a file that is not one."""
    entries = _entries(_load(path), path)
    names = Names()
    items: list[Incoming] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    said: list[tuple[str, str]] = []  # per memory, grouped: 10,001 alike are one line
    if len(entries) > MAX_MEMORIES:
        notes.append(f"only the first {MAX_MEMORIES} of {len(entries)} memories were read")
    for number, entry in enumerate(entries[:MAX_MEMORIES], start=1):
        made = _memory(entry, number, names, said)
        if isinstance(made, Skipped):
            skipped.append(made)
        else:
            items.append(made)
    return Batch(SOURCE, tuple(items), tuple(skipped), (*notes, *grouped_notes(said)))


def _load(path: Path) -> object:
    file = Path(os.path.abspath(path.expanduser()))
    try:
        data = read_bytes(file, MAX_EXPORT_BYTES)
    except ImportSourceError as exc:
        raise ImportSourceError(file, f"the mem0 export cannot be read: {exc.reason}"
                                ) from None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportSourceError(file, f"not UTF-8 text (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise ImportSourceError(file, f"not valid JSON ({json_problem(exc)})") from exc


def _entries(loaded: object, path: Path) -> list[object]:
    if isinstance(loaded, dict) and isinstance(loaded.get("results"), list):
        return list(loaded["results"])
    if isinstance(loaded, list):
        return loaded
    raise ImportSourceError(path, "not a mem0 export: expected a JSON list of memories "
                                  "or an object with a \"results\" list")


def _memory(entry: object, number: int, names: Names,
            notes: list[tuple[str, str]]) -> Incoming | Skipped:
    origin = f"memory {number}"
    if not isinstance(entry, dict):
        return Skipped(origin, "not a JSON object")
    text, mem_id = entry.get("memory"), entry.get("id")
    if not isinstance(mem_id, (str, int)) or not str(mem_id).strip():
        return Skipped(origin, "no \"id\"")
    origin = f"mem0 {mem_id}"
    if not isinstance(text, str) or not text.strip():
        return Skipped(origin, "no \"memory\" text")
    type_ = memory_type(entry)
    if type_ is None:
        type_ = "reference"
        notes.append((origin, "no category or user gave it a type; imported as reference"))
    days = {key: _dated(entry, key, origin, notes) for key in DATE_KEYS}
    title = title_of(first_sentence(text, 80) or text)
    fields: dict[str, object] = {
        "name": title, "description": first_sentence(text) or shorten(text, 200),
        "type": type_, "tags": list(tags_of(entry.get("categories"))),
        "updated": days["updated_at"] or days["created_at"],
        "invalid_at": _after(days["expiration_date"]),
        "created": days["created_at"], "source": f"{SOURCE}:{mem_id}"}
    return incoming(names.claim(type_, title), fields, text.strip() + "\n", origin)


def memory_type(entry: dict[str, object]) -> str | None:
    """sagemem's type for one mem0 memory (module docstring), None when nothing says."""
    categories = entry.get("categories")
    words = [c for c in categories if isinstance(c, str)] if isinstance(categories, list) else []
    metadata = entry.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("type"), str):
        words.append(metadata["type"])
    for word in words:
        for type_, known in TYPE_WORDS.items():
            if word.strip().lower() in known:
                return type_
    return "user" if isinstance(entry.get("user_id"), str) and entry["user_id"] else None


def _dated(entry: dict[str, object], key: str, origin: str,
           notes: list[tuple[str, str]]) -> date | None:
    """The date of ``entry[key]``; a value there that is no date is noted, not lost
    unsaid (an expiration dropped would make an expired fact live again)."""
    value = entry.get(key)
    day = _day(value)
    if day is None and value not in (None, ""):
        notes.append((origin, f"its {key} is not a date; left out"))
    return day


def _day(value: object) -> date | None:
    """The day of an ISO date or timestamp (``2026-01-05T10:00:00Z`` → 2026-01-05): both
    ``created:`` and ``updated:`` are days, as sagemem writes them."""
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


def _after(day: date | None) -> date | None:
    return None if day is None else day + timedelta(days=1)

