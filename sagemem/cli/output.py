"""What the CLI prints about memories, settings and conflicts: the documented JSON shapes
and 80-column text tables, and the width-aware helpers every table uses.

Kept apart from the commands so the JSON a script depends on is defined in one place and
tested without going through the command line; what the agent commands print (search,
read, inject, sessions, the ledger, checkpoints) is ``output_agent.py``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from ..config import JSON_VERSION, Settings, describe_settings, folder_rule, scope_text
from ..files.controls import json_safe

if TYPE_CHECKING:  # annotations only: `sagemem config` imports neither store nor parser
    from pathlib import Path

    from ..files.fields import Problem
    from ..files.init import InitReport
    from ..files.memory import Memory
    from ..history.archive import ArchiveResult
    from ..history.revisions import Version
    from ..store import ListError, Listing
    from ..writes.conflicts import Conflict


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


def freshness_date(memory: Memory) -> date | None:
    """When the memory was last saved: frontmatter ``updated`` wins over the file mtime."""
    if memory.updated:
        return memory.updated
    if memory.mtime is None:
        return None
    return datetime.fromtimestamp(memory.mtime, tz=timezone.utc).date()


def problem_json(problem: Problem) -> dict[str, Any]:
    return {"field": problem.field, "message": problem.message, "line": problem.line}


def memory_summary_json(memory: Memory, today: date) -> dict[str, Any]:
    """One memory as ``list --json`` shows it."""
    return {
        "file": memory.file,
        "name": memory.name,
        "type": memory.type,
        "description": memory.description,
        "tags": list(memory.tags),
        "aliases": list(memory.aliases),
        "baseline": memory.baseline,
        "baselinePriority": memory.baseline_priority,
        "updated": _iso(freshness_date(memory)),
        "valid_at": _iso(memory.valid_at),
        "invalid_at": _iso(memory.invalid_at),
        "superseded_by": memory.superseded_by,
        "when": memory.when,
        "archived": memory.archived,
        "invalid": memory.is_invalid(today),
        "size": memory.size,
        "revision": memory.revision,
        "problems": len(memory.problems),
    }


def memory_json(memory: Memory, today: date) -> dict[str, Any]:
    """One memory as ``show --json`` shows it: the summary plus problems and body."""
    return {
        "version": JSON_VERSION,
        **memory_summary_json(memory, today),
        "has_frontmatter": memory.has_frontmatter,
        "problems": [problem_json(p) for p in memory.problems],
        "body_line": memory.body_line,
        "body": memory.body,
    }


def written_json(memory: Memory, today: date, warnings: Iterable[str] = (),
                 archived: Iterable[ArchiveResult] = ()) -> dict[str, Any]:
    """A memory written by ``new``, ``write``, ``edit`` or ``set``: its JSON, the warnings
    (soft caps, field problems) and the files its layer's hard cap archived to make room."""
    return {**memory_json(memory, today), "warnings": list(warnings),
            "cap_archived": [result.file for result in archived]}


def archived_text(archived: Iterable[ArchiveResult]) -> list[str]:
    """One line per memory archived to make room, as ``sagemem archive`` prints it."""
    return [f"archived  {result.file}  ({result.event.reason})" for result in archived]


def error_json(error: ListError) -> dict[str, Any]:
    return {"file": error.file, "archived": error.archived,
            "error": type(error.error).__name__, "message": str(error.error)}


def listing_json(listing: Listing, today: date) -> dict[str, Any]:
    return layers_listing_json([("project", listing)], today)


def layers_listing_json(listings: Sequence[tuple[str, Listing]], today: date
                        ) -> dict[str, Any]:
    """``list --json`` over the layers: each memory says its ``layer``, and an error of
    the global layer says so (the project's errors keep their shape)."""
    return {
        "version": JSON_VERSION,
        "memories": [{**memory_summary_json(m, today), "layer": layer}
                     for layer, listing in listings for m in listing.memories],
        "errors": [{**error_json(e), **({"layer": layer} if layer != "project" else {})}
                   for layer, listing in listings for e in listing.errors],
    }


def settings_json(settings: Settings) -> dict[str, Any]:
    return {
        "version": JSON_VERSION,
        "settings": {key: {"value": value, "source": source, "env": env}
                     for key, value, source, env in describe_settings(settings)},
        "folder": folder_rule(settings),
    }


def init_json(report: InitReport) -> dict[str, Any]:
    return {"version": JSON_VERSION, "created": [str(p) for p in report.created],
            "existed": [str(p) for p in report.existed],
            "updated": [{"path": str(u.path), "added": u.added} for u in report.updated],
            "warnings": list(report.warnings)}


def json_text(data: dict[str, Any] | list[Any], indent: int | None = None) -> str:
    """JSON with every control character escaped, C1 and DEL too (json.dumps leaves
    them raw with ensure_ascii=False)."""
    return json_safe(json.dumps(data, ensure_ascii=False, indent=indent))


# -- what a command prints, as lines: the typer command and its fast path print these --

def error_line(message: str) -> str:
    """The one ``error: …`` line of a failed command: the message on one line."""
    return f"error: {' '.join(message.split())}"


def command_line(memory_dir: Path | None, state_dir: Path | None, *args: str) -> str:
    """A sagemem command line to paste, with the directory options this run was given
    (an undo printed without them would look in the default state directory)."""
    words = ["sagemem"]
    for option, path in (("--dir", memory_dir), ("--state-dir", state_dir)):
        if path is not None:
            words += [option, shlex.quote(os.path.abspath(path))]
    return " ".join([*words, *args])


def list_output(listings: Sequence[tuple[str, Listing]], global_folder: Path | None,
                today: date, columns: int, as_json: bool) -> tuple[list[str], list[str]]:
    """What ``list`` prints: its stdout lines (the JSON, or each layer's table, the
    global one under its heading) and its stderr lines (a warning per unreadable file)."""
    out = [json_text(layers_listing_json(listings, today), 2)] if as_json else []
    for layer, listing in listings:
        if not as_json:
            if layer == "global":  # the project's table stays as it was; the global follows
                out += ["", f"[global] {global_folder}"]
            out += listing_text(listing, today, columns)
    err = [f"warning: {error.error}" for _, listing in listings for error in listing.errors]
    return out, err


def config_output(settings: Settings, as_json: bool) -> list[str]:
    """What ``config`` prints on stdout: every setting, as JSON or as a table."""
    return [json_text(settings_json(settings), 2)] if as_json else settings_text(settings)


# -- text ----------------------------------------------------------------------

def width_of(text: str) -> int:
    """Terminal columns a string takes: wide (CJK) characters take two."""
    if text.isascii():  # most cells: no character to look up (a third of `list`'s work)
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns with an ellipsis, padded to exactly ``width``;
    runs of white space become one space, but leading indentation stays (code in a
    side-by-side view keeps its shape)."""
    indent = text[:len(text) - len(text.lstrip())].expandtabs(4).replace("\n", "")
    text = indent + " ".join(text.split())
    if width_of(text) > width and text.isascii():  # one column a character
        text = text[:max(width - 1, 0)] + "…"
    elif width_of(text) > width:
        out, used = [], 0
        for ch in text:
            w = width_of(ch)
            if used + w > width - 1:
                break
            out.append(ch)
            used += w
        text = "".join(out) + "…"
    return text + " " * (width - width_of(text))


def wrap(line: str, columns: int = 80, indent: str = "    ") -> list[str]:
    """``line`` broken at spaces into lines of at most ``columns``, continuations under
    ``indent``; its own leading indentation kept, and a word longer than a line (a path)
    kept whole: cut, it could no longer be pasted."""
    if width_of(line) <= columns:
        return [line]
    lines, current = [], ""
    for word in re.findall(r"\s*\S+", line):
        if current.strip() and width_of(current + word) > columns:
            lines.append(current)
            current = indent + word.lstrip()
        else:
            current += word
    return [*lines, current]


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    return f"{size / 1024:.1f}K" if size < 10 * 1024 else f"{size // 1024}K"


WIDE_LAYOUT_COLUMNS = 110


def terminal_columns(fallback: int = 80) -> int:
    """The terminal's width as ``shutil.get_terminal_size`` tells it (``COLUMNS`` first,
    then stdout's terminal, else ``fallback``), without importing shutil, which loads
    three compression modules: 2 ms of a `list` that takes 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or fallback


def listing_text(listing: Listing, today: date, columns: int = 80) -> list[str]:
    """The ``list`` table, fitted to ``columns``.

    In a wide terminal each memory takes one line; in a narrow one (80 columns) the
    description goes on an indented line of its own, so it is readable, not a stub. A file
    name wider than its column is never cut (it is pasted into other commands): it takes
    a line of its own above its row.
    """
    file_w = min(max((width_of(m.file) for m in listing.memories), default=4), 34)
    wide = columns >= WIDE_LAYOUT_COLUMNS
    head = [fit("FILE", file_w), fit("TYPE", 9), fit("UPDATED", 10), "SIZE".rjust(6)]
    if not listing.memories:
        return ["(no memories)"]
    lines = [" ".join(head + (["DESCRIPTION"] if wide else []))]
    desc_w = columns - (file_w + 29) if wide else columns - 5
    for memory in listing.memories:
        name = fit(memory.file, file_w)
        if width_of(memory.file) > file_w:  # kept whole, to paste: on a line of its own
            lines.append(memory.file)
            name = " " * file_w
        cells = [name, fit(memory.type, 9),
                 fit(_iso(freshness_date(memory)) or "-", 10), human_size(memory.size).rjust(6)]
        description = fit(_status(memory, today) + _occasion(memory) + memory.description,
                          desc_w).rstrip()
        if wide:
            lines.append(" ".join([*cells, description]))
        else:
            lines.extend([" ".join(cells).rstrip(), "    " + description])
    return lines


def _status(memory: Memory, today: date) -> str:
    marks = [m for m, on in (("archived", memory.archived), ("invalid", memory.is_invalid(today)),
                             ("problems", bool(memory.problems))) if on]
    return f"({', '.join(marks)}) " if marks else ""


def _occasion(memory: Memory) -> str:
    """The ``when`` of a memory, before its description: two memories of one title (a
    weekly standup) differ by it alone."""
    return f"[when {memory.when}] " if memory.when else ""


def memory_text(memory: Memory, today: date) -> list[str]:
    """``show``: the fields, revision and parse problems, then the body in the file's
    own lines (those ``read`` numbers)."""
    from ..files.memory import file_lines

    fields = memory_summary_json(memory, today)
    lines = [f"{memory.file}{'  (archived)' if memory.archived else ''}"]
    for key in ("name", "when", "description", "type", "tags", "aliases", "baseline",
                "baselinePriority", "updated", "valid_at", "invalid_at", "superseded_by",
                "invalid", "revision"):
        value = fields[key]
        if value in (None, [], False) and key not in ("type", "description"):
            continue
        label = f"{key}:" if key == "revision" else f"{key + ':':<18}"
        lines += wrap(f"{label} {_shown(value)}" if key == "revision" else label + _shown(value),
                      indent="    ")
    if not memory.has_frontmatter:
        lines.append("(no frontmatter: defaults apply)")
    for problem in memory.problems:
        where = f"line {problem.line}: " if problem.line else ""
        lines += wrap(f"problem: {where}{problem.field}: {problem.message}")
    lines.append(f"--- body (from line {memory.body_line}) ---")
    lines.extend(file_lines(memory.body))
    return lines


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(value)
    return "-" if value is None else str(value)


def settings_text(settings: Settings) -> list[str]:
    rows = describe_settings(settings)
    key_w = max(len(key) for key, *_ in rows)  # idle_days_reference is 19: no fixed width
    lines = [f"{'SETTING':<{key_w}} {'FROM':<9} VALUE"]
    for key, value, source, _env in rows:
        shown = scope_text(settings) if key == "memory_dir" else _shown(value)
        lines.append(f"{key:<{key_w}} {source:<9} {shown}")
    return lines


# -- retrieval -------------------------------------------------------------------

def conflict_json(conflict: Conflict, full: bool = True) -> dict[str, Any]:
    """A conflict record as stored (unknown keys kept); a listing drops the two texts."""
    data = dict(conflict.data)
    if not full:
        for side in ("disk", "mine"):
            if isinstance(data.get(side), dict):
                data[side] = {k: v for k, v in data[side].items() if k != "text"}
    return {"version": JSON_VERSION, **data, "id": conflict.id}


def conflicts_text(records: Iterable[Conflict],
                   gone: Mapping[str, tuple[str, ...]] | None = None) -> list[str]:
    """One line per record; ``gone`` (id → sides no longer live) marks moot ones."""
    lines = [part for c in records for part in wrap(
        f"{c.id}  {c.status:<8} {c.kind:<16} {c.file or ' <> '.join(c.memories)}"
        + _moot_mark((gone or {}).get(c.id, ())))]
    return lines or ["no conflicts"]


def _moot_mark(sides: tuple[str, ...]) -> str:
    if not sides:
        return ""
    what = "is no longer a live memory" if len(sides) == 1 else "are no longer live memories"
    return f"  (moot: {', '.join(sides)} {what})"


def conflict_text(conflict: Conflict, columns: int = 80) -> list[str]:
    """A record: its facts, then disk and mine side by side, then a unified diff."""
    import difflib

    from ..files.memory import file_lines

    about = conflict.file or " <> ".join(conflict.memories)
    lines = [f"{conflict.id}  {conflict.kind}  {conflict.status}", f"about    {about}",
             f"writer   {conflict.writer}  at {conflict.created}"]
    if conflict.count > 1:  # identical refusals collapsed into this record
        lines.append(f"refused  {conflict.count} times, last at "
                     f"{conflict.data.get('lastSeen') or conflict.created}")
    lines += [f"reason   {conflict.reason}"] if conflict.reason else []
    lines += [f"decision {conflict.decision}"] if conflict.decision else []
    disk, mine = conflict.side("disk"), conflict.side("mine")
    if not (disk or mine):
        return lines
    left = file_lines(disk.get("text") or "")
    right = file_lines(mine.get("text") or "")
    if mine.get("fields"):
        right = right or [f"set {k}={v}" for k, v in mine["fields"].items()]
    half = max(20, (columns - 3) // 2)
    based_on = mine.get("based_on")  # None: a create, or a merge's other side
    lines += ["", f"{fit('disk ' + str(disk.get('revision'))[:12], half)} | "
                  + ("mine" if based_on is None
                     else f"mine (based on {str(based_on)[:12]})")]
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else ""
        b = right[index] if index < len(right) else ""
        lines.append(f"{fit(a, half)} | {fit(b, half)}".rstrip())
    lines += [""] + [line.rstrip("\n") for line in difflib.unified_diff(
        left, right, "disk", "mine", lineterm="")]
    return lines


def history_text(held: tuple[Version, ...]) -> list[str]:
    """``show NAME --history``: one version a line, newest first, ``*`` the current;
    where each is held (kept, the snapshots) wraps under it."""
    lines = []
    for v in held:
        places = (["current"] if v.current else []) + (["kept"] if v.kept else []) + \
            [f"snapshot {h.snapshot}" for h in v.snapshots]
        seen = v.seen.strftime("%Y-%m-%d %H:%M")
        lines += wrap(f"{'*' if v.current else ' '} {v.revision[:12]}  {v.size:>8} bytes  "
                      f"{seen}  " + ", ".join(places))
    return lines
