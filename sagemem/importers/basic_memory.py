"""A basic-memory project read into a Batch: one memory per entity note.

The format is basic-memory's own (basicmachines-co/basic-memory, ``NOTE-FORMAT.md`` and
https://docs.basicmemory.com/concepts/knowledge-format): a Markdown file with optional
frontmatter ``title`` (default: the file name), ``type`` (default ``note``), ``tags``
(a list or a comma-separated string) and ``permalink`` (default: made from the file's
path, as its ``generate_permalink`` does: lower case, spaces and ``_`` made ``-``);
observations are list lines ``- [category] text #tag (context)`` and relations
``- relation_type [[Target]]``. Both stay in the body as they were written — the
relations are ``[[wikilinks]]``, which sagemem's audit follows.

The type, by the note's ``type`` and else its top folder, looked up in ``TYPE_WORDS``:
people and preferences are ``user``; guidelines, rules and conventions ``feedback``;
projects, decisions, meetings, tasks and specs ``project``; everything else — the
default ``note`` included — ``reference`` (a basic-memory note is general knowledge).
Hidden files and folders (``.basic-memory``, ``.git``) are not read.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..files.fields import MAX_TAG_CHARS, MAX_TAGS
from ..files.memory import load_yaml, split
from ..transfer.incoming import Batch, Incoming, Skipped
from .build import Names, first_sentence, incoming, title_of
from .source import markdown_files, require_folder, try_read

SOURCE = "basic-memory"
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "user": ("person", "people", "user", "profile", "preference", "preferences", "me"),
    "feedback": ("guideline", "guidelines", "rule", "rules", "convention", "conventions",
                 "instruction", "instructions", "feedback", "style", "howto"),
    "project": ("project", "projects", "decision", "decisions", "meeting", "meetings",
                "task", "tasks", "spec", "specs", "design", "architecture", "plan", "plans",
                "milestone", "milestones"),
}
RAW_HEADING = "Frontmatter (did not parse)"
_PERMALINK_GAP = re.compile(r"[^\w.]+|_+")


def read_batch(path: Path) -> Batch:
    """Every entity note under the basic-memory project folder ``path``, one memory
    each; a note that cannot be read is skipped with its reason."""
    root = require_folder(path, "a basic-memory project folder")
    files, notes = markdown_files(root)
    names = Names()
    items: list[Incoming] = []
    skipped: list[Skipped] = []
    for file in files:
        relative = file.relative_to(root).as_posix()
        text = try_read(file, relative)
        if isinstance(text, Skipped):
            skipped.append(text)
        else:
            items.append(_note(relative, text, names, notes))
    return Batch(SOURCE, tuple(items), tuple(skipped), tuple(notes))


def _note(relative: str, text: str, names: Names, notes: list[str]) -> Incoming:
    parts = split(text)
    meta, problem = _frontmatter(parts.frontmatter)
    body = (text[parts.body_start:] if parts.frontmatter is not None else text).lstrip("\r\n")
    if problem is not None and parts.frontmatter is not None:
        body = _with_raw_frontmatter(body, parts.frontmatter)
        notes.append(f"{relative}: frontmatter does not parse ({problem}); title from the "
                     f"file name, its lines kept at the end of the body under "
                     f"\"{RAW_HEADING}\"")
    title = title_of(_text(meta.get("title")) or Path(relative).stem)
    type_ = note_type(_text(meta.get("type")), relative)
    permalink = _text(meta.get("permalink")) or permalink_of(relative)
    fields: dict[str, object] = {
        "name": title, "description": first_sentence(body) or title, "type": type_,
        "tags": list(tags_of(meta.get("tags"))), "source": f"{SOURCE}:{permalink}"}
    return incoming(names.claim(type_, title), fields, body, relative)


def _frontmatter(block: str | None) -> tuple[dict[str, object], str | None]:
    """The frontmatter's fields, and what is wrong with a block that does not parse."""
    if block is None:
        return {}, None
    try:
        loaded = load_yaml(block)
    except yaml.YAMLError as exc:  # a broken block: the note is still imported, by its path
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        return {}, problem + (f" at line {mark.line + 2}" if mark is not None else "")
    return (loaded if isinstance(loaded, dict) else {}), None


def _with_raw_frontmatter(body: str, block: str) -> str:
    """``body`` with a frontmatter block that does not parse kept after it, as text in a
    fence under ``RAW_HEADING``: its title and tags are then still in the memory."""
    fence = "~~~" if "```" in block else "```"
    return (f"{body.rstrip()}\n\n## {RAW_HEADING}\n\n{fence}yaml\n{block.rstrip()}\n"
            f"{fence}\n")


def _text(value: object) -> str | None:
    return str(value).strip() or None if isinstance(value, (str, int, float)) else None


def note_type(bm_type: str | None, relative: str) -> str:
    """sagemem's type for a note of basic-memory type ``bm_type`` at ``relative``."""
    folder = relative.split("/", 1)[0].lower() if "/" in relative else ""
    for word in ((bm_type or "").lower(), folder):
        for type_, words in TYPE_WORDS.items():
            if word in words:
                return type_
    return "reference"


def tags_of(value: object) -> tuple[str, ...]:
    """Frontmatter tags (a list, or a comma-separated string), within sagemem's bounds:
    at most MAX_TAGS, each at most MAX_TAG_CHARS (longer ones are left out)."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    tags = [str(t).strip().lstrip("#") for t in value if isinstance(t, (str, int, float))]
    return tuple(t for t in tags if t and len(t) <= MAX_TAG_CHARS)[:MAX_TAGS]


def permalink_of(relative: str) -> str:
    """A note's permalink from its path (``docs/My Feature.md`` → ``docs/my-feature``)."""
    stem = relative[:-3] if relative.lower().endswith(".md") else relative
    return "/".join(_PERMALINK_GAP.sub("-", part.lower()).strip("-") for part in stem.split("/"))
