"""Task checkpoints: ``<state>/tasks/<task id>/WORKING.md`` and the handle the block carries.

A long task outlives a context window. Its notes live in WORKING.md, a Markdown file the
agent keeps up to date; the injected block carries only a one-line handle (the task, the
revision, where to read it), so after a session reset the model finds its way back
without the notes eating the budget. The task id comes from ``SAGE_MEM_TASK_ID`` or the
host's session id — never from the question — and is untrusted: ``task_dir`` maps any id
to one directory inside ``<state>/tasks/``.

Parsing is a nudge, not a proof: a done item (``- [x] …``) that names no evidence (a
path, a ``command``, a URL, a test result) is reported as a problem so the agent writes
down how it knows the step is done.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    MemoryExists,
    MemoryNotFound,
    SagememError,
    UnsafeFile,
    WriteFailed,
)
from ..files.atomic import atomic_write
from ..files.memory import decode
from ..files.paths import read_regular
from ..files.revision import revision_of

TASKS_DIR = "tasks"
WORKING_FILE = "WORKING.md"
MAX_TASK_ID = 100
NO_EVIDENCE = "done without evidence (add a path, a command or a test result)"
WORKING_TEMPLATE = """\
# Task {task}

<!-- Items are read by sagemem: `- [ ]` is open, `- [x]` is done.
     A done item names its evidence: a path, a `command`, or a test result. -->

## Goal

What this task must achieve, in one or two sentences.

## Done

- [x] Created this checkpoint with `sagemem task path --create`

## Next

- [ ] The next concrete step
"""

_SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", re.ASCII)
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([ xX])\](?:[ \t]+(.*))?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# Each pattern starts only where a token starts (the lookbehinds): without that, a long
# run of word characters is rescanned from every position, and a 512 KiB line takes hours.
_EVIDENCE = (
    re.compile(r"`[^`]+`"),  # a command or a code span
    re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]*://\S", re.IGNORECASE),  # a URL
    re.compile(r"(?<![\w.~-])[\w.~-]*/[\w.-]"),  # a/b, ./a, ~/a, /etc/x
    # file.md; two characters before the dot so "e.g." is not a file
    re.compile(r"(?<![\w.-])[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?![A-Za-z0-9])"),
    # "not passed" and 未通过 ("did not pass") hold the words but say the opposite.
    re.compile(r"(?<!not )\bpassed\b|\btests? pass(?:es|ing)?\b|\bexit(?: code| status)? 0\b",
               re.IGNORECASE | re.ASCII),
    re.compile(r"\bOK\b", re.ASCII),  # upper case only: "looks ok" is an opinion, not a result
    re.compile(r"(?<!未)(?<!没)(?<!不)(?<!没有)通过"),
)


@dataclass(frozen=True)
class Item:
    """One Markdown task item: its 1-based line, text, and whether it is done with evidence."""

    line: int
    text: str
    done: bool
    evidence: bool


@dataclass(frozen=True)
class Checkpoint:
    """A task's WORKING.md, parsed. ``revision`` is empty when the file was refused."""

    task_id: str
    path: Path
    revision: str
    items: tuple[Item, ...]
    problems: tuple[str, ...]

    @property
    def readable(self) -> bool:
        return bool(self.revision)

    @property
    def open_count(self) -> int:
        return sum(not item.done for item in self.items)

    @property
    def done_count(self) -> int:
        return sum(item.done for item in self.items)

    @property
    def unproven_count(self) -> int:
        """Done items with no evidence: the ones a reader should not take on trust."""
        return sum(item.done and not item.evidence for item in self.items)


def safe_task_name(task_id: str) -> str:
    """The directory name for a task id: itself when plainly safe, else ``id-<digest>``.

    Hostile or odd ids (separators, ``..``, NUL, a leading dot, over 100 characters,
    anything outside ``[A-Za-z0-9._-]``) are hashed instead of refused, so the same id
    always finds the same checkpoint and no id can leave ``<state>/tasks/``.
    """
    if len(task_id) <= MAX_TASK_ID and _SAFE_ID.fullmatch(task_id):
        return task_id
    # surrogatepass: an id taken from os.environ may hold lone surrogates
    digest = hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"id-{digest[:16]}"


def task_dir(state_dir: Path, task_id: str) -> Path:
    """``<state>/tasks/<safe name>/``: where a task's WORKING.md lives."""
    return state_dir / TASKS_DIR / safe_task_name(task_id)


def load_checkpoint(state_dir: Path, task_id: str) -> Checkpoint | None:
    """The task's checkpoint, or None when it has no WORKING.md.

    Never raises for a file it cannot use (a symlink, a FIFO, oversize, not UTF-8): it
    returns an unreadable Checkpoint whose problem says why, because the injector must
    still compose its block and the handle should tell the model what is wrong.
    """
    path = task_dir(state_dir, task_id) / WORKING_FILE
    try:
        for part in (path.parent.parent, path.parent):
            _refuse_link(part)
        data = read_regular(path).data
        text = decode(data, str(path))
    except MemoryNotFound:
        return None
    except SagememError as exc:
        return Checkpoint(task_id, path, "", (), (str(exc),))
    items = parse_items(text)
    return Checkpoint(task_id, path, revision_of(data), items, item_problems(items))


def _refuse_link(path: Path) -> None:
    """The task's directories too must not be links: O_NOFOLLOW guards only the file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # missing or not a directory: the read or write that follows says so
        return
    if stat.S_ISLNK(mode):
        raise UnsafeFile(path, "it is a symlink; sagemem never follows links")


def parse_items(text: str) -> tuple[Item, ...]:
    """Every ``- [ ]`` / ``- [x]`` item outside fenced code, with its 1-based line."""
    items: list[Item] = []
    fence: str | None = None
    # split("\n"), not splitlines(): line numbers must match an editor's, and
    # splitlines() also breaks on form feeds and U+2028.
    for number, line in enumerate(text.split("\n"), start=1):
        marker = _FENCE.match(line)
        if marker:
            fence = _toggle_fence(fence, marker.group(1))
            continue
        match = None if fence else _ITEM.fullmatch(line.rstrip("\r"))
        if match:
            done = match.group(1) != " "
            body = (match.group(2) or "").strip()
            items.append(Item(number, body, done, done and has_evidence(body)))
    return tuple(items)


def _toggle_fence(fence: str | None, marker: str) -> str | None:
    """The fence open after this marker: a checklist shown in a code block is an example."""
    if fence is None:
        return marker
    closes = marker[0] == fence[0] and len(marker) >= len(fence)
    return None if closes else fence


def has_evidence(text: str) -> bool:
    """True when ``text`` names a path, a command, a URL or a test result."""
    return any(pattern.search(text) for pattern in _EVIDENCE)


def item_problems(items: tuple[Item, ...]) -> tuple[str, ...]:
    return tuple(f"line {item.line}: {NO_EVIDENCE}"
                 for item in items if item.done and not item.evidence)


def handle(checkpoint: Checkpoint) -> str:
    """The one line the injected block carries: the task, its revision, where to read it."""
    name = checkpoint.path.parent.name  # the safe name: a raw id could break the block
    if not checkpoint.readable:
        return (f"Task checkpoint: {name} — {checkpoint.path} was not read "
                f"({checkpoint.problems[0]}); fix it, then `sagemem task show`")
    counts = f"{checkpoint.open_count} open, {checkpoint.done_count} done"
    if checkpoint.unproven_count:
        counts += f", {checkpoint.unproven_count} done without evidence"
    return (f"Task checkpoint: {name} (revision {checkpoint.revision[:12]}) — "
            f"read {checkpoint.path}; {counts}")


def ensure_checkpoint(state_dir: Path, task_id: str) -> Path:
    """Create the task's WORKING.md from the template unless it exists; return its path.

    Never overwrites: the template is written to a temporary file and linked into place,
    so a concurrent writer's file, or one the agent already filled in, always wins.
    """
    directory = task_dir(state_dir, task_id)
    for part in (directory.parent, directory):  # one level at a time, never through a link
        _refuse_link(part)
        try:
            part.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteFailed(part, exc.strerror or str(exc)) from exc
    path = directory / WORKING_FILE
    template = WORKING_TEMPLATE.format(task=directory.name)
    with suppress(MemoryExists):  # never overwrite: what is there already wins
        atomic_write(path, template.encode("utf-8"), create=True)
    return path
