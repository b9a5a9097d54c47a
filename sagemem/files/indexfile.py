"""MEMORY.md, the index: a list of memories, one line each, ``- [Title](file.md) — hook``.

The index is a list, not a memory. It is edited line by line so that whatever else a
person wrote in it (headings, notes, their own ordering) stays exactly as it was.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .controls import visible
from .fields import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS
from .paths import name_key

INDEX_HEADER = """# Memory index

One line per memory: `- [Title](file.md) — hook`. sagemem keeps this list in step
with the files; you may reorder lines or add notes around them.

Types: **user** (who the user is, their role and preferences), **feedback** (corrections
and confirmed ways of working, with why), **project** (ongoing work, decisions,
deadlines), **reference** (where information lives outside the project).

"""
_ENTRY = re.compile(
    r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]\\])*)\]\((?:<(?P<angled>[^>]+)>|(?P<target>[^)\s]+))"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'))?\)\s*(?:[—–:-]+\s*(?P<hook>.*?))?\s*$"
)


@dataclass(frozen=True)
class IndexEntry:
    """One index line: the title, the file it points at, its hook, and its line number."""

    title: str
    target: str
    hook: str
    line: int


def entries(text: str) -> tuple[IndexEntry, ...]:
    """Every list line of the index that links a file."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _ENTRY.match(line)
        if match:
            title = re.sub(r"\\(.)", r"\1", match.group("title"))
            hook = match.group("hook") or ""
            target = match.group("angled") or match.group("target")
            found.append(IndexEntry(title, target, hook, number))
    return tuple(found)


def one_line(text: str) -> str:
    """``text`` as an index line holds it: one line, control characters written out —
    ``cat MEMORY.md`` must not run a title's ``ESC[2J`` or a hook's OSC sequence."""
    return visible(" ".join(text.split()))


def cut(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word to at most ``limit`` characters and ended with
    "…" when longer: a description written by hand before descriptions were bounded
    must not make one MEMORY.md line that hides the rest from Claude Code."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    head = line[:limit - 1]
    if " " in head and not line[limit - 1].isspace():
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + "…"


def hook_matches(hook: str, description: str) -> bool:
    """Whether an index line's hook still says ``description`` (as written, or raw, or
    cut to the bound an index line keeps)."""
    return one_line(hook) in (one_line(description),
                              one_line(cut(description, MAX_DESCRIPTION_CHARS)))


def format_entry(title: str, file: str, hook: str) -> str:
    """An index line; brackets in the title are escaped, title and hook kept to one line
    and to their bounds (``cut``)."""
    safe_title = re.sub(r"([\[\]\\])", r"\\\1", one_line(cut(title, MAX_NAME_CHARS)))
    safe_hook = one_line(cut(hook, MAX_DESCRIPTION_CHARS))
    line = f"- [{safe_title}]({_link_target(file)})"
    return f"{line} — {safe_hook}" if safe_hook else line


def _link_target(file: str) -> str:
    """``file`` as a link target: in angle brackets when it holds a space, a parenthesis
    or an angle bracket (the CommonMark form that keeps such a name one target)."""
    return f"<{file}>" if re.search(r"[\s()<>]", file) else file


def add_entry(text: str, line: str) -> str:
    """Append an index line, in the file's own line-ending style."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += newline
    return text + line + newline


def add_entries(text: str, lines: Sequence[str]) -> str:
    """Append index lines, as ``add_entry`` would one by one — in one pass, not one
    copy of the whole text per line."""
    if not lines:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += newline
    return text + "".join(line + newline for line in lines)


def target_keys(text: str) -> set[str]:
    """The ``name_key`` of every file an index line links: ``has_entry`` (no twins) for
    many files, the text parsed once."""
    return {name_key(entry.target.removeprefix("./")) for entry in entries(text)}


def points_at(target: str, file: str, twins: Collection[str] = ()) -> bool:
    """Whether an index line's link target (``<angled>`` brackets already taken off)
    names ``file``: ``./x.md``, ``X.md`` and ``x.md`` all do — compared as file names are
    (``name_key``), or archiving would leave a dangling line and restoring add a second.
    ``twins`` are the folder's other files of ``file``'s name (``USER_PETS.md`` made by
    hand beside ``user_pets.md``): a line spelt exactly as one of them is that one's, so
    archiving or renaming the other never takes it (issue 20's review)."""
    spelt = target.removeprefix("./")
    return spelt == file or (name_key(spelt) == name_key(file) and spelt not in twins)


def has_entry(text: str, file: str, twins: Collection[str] = ()) -> bool:
    """Whether some index line already points at ``file``."""
    return any(points_at(entry.target, file, twins) for entry in entries(text))


def remove_entries(text: str, file: str, twins: Collection[str] = ()) -> str:
    """Drop every index line that points at ``file``; all other bytes stay."""
    lines = text.splitlines(keepends=True)
    key = name_key(file)
    kept = [ln for ln in lines
            if _cannot_name(ln, key) or not (
                (m := _ENTRY.match(ln))
                and points_at(m.group("angled") or m.group("target"), file, twins))]
    return "".join(kept)


def remove_entries_of(text: str, files: Mapping[str, Collection[str]]) -> str:
    """Drop every index line that points at one of ``files`` (each with its twins, as
    ``remove_entries`` takes them), in one pass over the text."""
    by_key = {name_key(file): file for file in files}
    kept = []
    for line in text.splitlines(keepends=True):
        m = _ENTRY.match(line)
        if m is not None:
            target = m.group("angled") or m.group("target")
            file = by_key.get(name_key(target.removeprefix("./")))
            if file is not None and points_at(target, file, files[file]):
                continue
        kept.append(line)
    return "".join(kept)


def _cannot_name(line: str, key: str) -> bool:
    """A line already in NFKC form whose case-folded text does not hold ``key`` (an ASCII
    name key) names no spelling of it: the cheap test (both C-fast) that keeps archiving
    thousands of memories from comparing every index line's name each time."""
    return key.isascii() and unicodedata.is_normalized("NFKC", line) and \
        key not in line.casefold()


def hook_of(text: str, file: str, twins: Collection[str] = ()) -> str | None:
    """The hook of the first index line pointing at ``file`` ("" for a line without
    one), or None when no line points at it."""
    return next((e.hook for e in entries(text) if points_at(e.target, file, twins)), None)


def set_hook(text: str, file: str, hook: str, twins: Collection[str] = ()) -> str:
    """Every line pointing at ``file`` with ``hook`` as its hook (kept to one line); the
    title, the link as spelt and every other byte stay."""
    safe_hook = one_line(cut(hook, MAX_DESCRIPTION_CHARS))
    out = []
    for line in text.splitlines(keepends=True):
        match = _ENTRY.match(line)
        if match and points_at(match.group("angled") or match.group("target"), file, twins):
            body = line.rstrip("\r\n")
            end = line[len(body):]
            if match.group("hook") is not None and match.group("hook") != "":
                body = body[:match.start("hook")] + safe_hook + body[match.end("hook"):]
            else:
                body = f"{body.rstrip()} — {safe_hook}" if safe_hook else body
            line = body + end
        out.append(line)
    return "".join(out)


def retarget_entries(text: str, file: str, new_file: str, twins: Collection[str] = ()
                     ) -> str:
    """Every line pointing at ``file`` pointed at ``new_file`` instead (a rename); the
    title, the hook, the line's place and every other byte stay."""
    out = []
    for line in text.splitlines(keepends=True):
        match = _ENTRY.match(line)
        if match and points_at(match.group("angled") or match.group("target"), file, twins):
            group = "angled" if match.group("angled") else "target"
            start, end = match.span(group)
            if group == "angled":  # the brackets go too: the new name may not need them
                start, end = start - 1, end + 1
            line = line[:start] + _link_target(new_file) + line[end:]
        out.append(line)
    return "".join(out)
