"""Keeping a state directory out of git: the one rule is that whenever the state
directory lies inside a git working tree, a ``.gitignore`` in that tree ignores it.

Snapshots, locks, the change journal and the search index are this clone's own records;
committed, they would travel to every other clone and be merged there like memories.
Which directory is ignored, and in which ``.gitignore``:

1. a state directory inside the memory folder (``--state-dir notes/.sage-mem``): the
   memory folder's ``.gitignore`` (as ``init`` always did), ``/<relative path>/``;
2. one under ``<parent>/.sage-mem/folders/`` (a folder's own, ``files/state.py``): the
   whole ``<parent>/.sage-mem`` in ``<parent>/.gitignore`` — every folder beside it
   keeps its state there, and none of it travels;
3. any other (``<parent>/.sage-mem``, an explicit ``--state-dir``) inside a working
   tree: ``/<name>/`` in its parent's ``.gitignore``.

The pattern is anchored and escaped so it matches exactly that directory; an existing
``.gitignore`` only gets the line appended, never rewritten. Git is never run here (the
working tree is found by its ``.git``, ``files/gitroot.py``'s walk): ``init`` calls this,
and ``sagemem sync`` checks the result with ``git check-ignore``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemoryNotFound
from .atomic import atomic_write
from .gitroot import find_dot_git
from .paths import STATE_DIR_NAME, read_regular
from .state import FOLDERS_DIR

GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class Ignore:
    """Where a state directory is ignored: the ``.gitignore`` and its line."""

    gitignore: Path
    line: str


@dataclass(frozen=True)
class IgnoreResult:
    """What ``ignore_state_dir`` did: the ``.gitignore`` was ``created``, ``appended``
    to, or already held the line (both False)."""

    ignore: Ignore
    created: bool
    appended: bool


def ignore_for(memory_dir: Path, state_dir: Path) -> Ignore | None:
    """The ``.gitignore`` and line that keep ``state_dir`` out of git (see the module
    doc), or None when nothing needs ignoring: the state directory is the memory folder
    itself, or lies outside the memory folder and outside any working tree."""
    memory, state = Path(os.path.abspath(memory_dir)), Path(os.path.abspath(state_dir))
    if memory == state:
        return None
    if memory in state.parents:
        return Ignore(memory / GITIGNORE, _line(state.relative_to(memory).as_posix()))
    ignored = _outermost_state(state)
    if not in_work_tree(ignored.parent):
        return None
    return Ignore(ignored.parent / GITIGNORE, _line(ignored.name))


def ignore_state_dir(memory_dir: Path, state_dir: Path) -> IgnoreResult | None:
    """Make sure ``state_dir`` is ignored (see ``ignore_for``): the line is appended to
    the ``.gitignore`` — created if absent — unless it is there already. None when
    nothing needs ignoring. Raises what ``read_regular``/``atomic_write`` raise (a
    symlinked ``.gitignore`` is refused, never followed)."""
    ignore = ignore_for(memory_dir, state_dir)
    if ignore is None:
        return None
    try:
        old = read_regular(ignore.gitignore).data
    except MemoryNotFound:
        old = b""
    if has_line(old.decode("utf-8", errors="replace"), ignore.line):
        return IgnoreResult(ignore, created=False, appended=False)
    separator = b"\n" if old and not old.endswith(b"\n") else b""
    fresh = not old and not os.path.lexists(ignore.gitignore)
    atomic_write(ignore.gitignore, old + separator + f"{ignore.line}\n".encode(), create=fresh)
    return IgnoreResult(ignore, created=fresh, appended=not fresh)


def has_line(text: str, line: str) -> bool:
    """Whether a .gitignore text already holds ``line`` (``/x/``), or its looser forms
    ``/x``, ``x/``, ``x`` that a person may have written for the same directory."""
    forms = (line, line.rstrip("/"), line[1:], line[1:-1])
    return any(existing.strip() in forms for existing in text.splitlines())


def in_work_tree(directory: Path) -> bool:
    """Whether ``directory`` lies in a git working tree: a ``.git`` (a directory, or the
    file of a linked worktree or submodule) at or above it."""
    return find_dot_git(directory) is not None


def gitignore_escape(path: str) -> str:
    """``path`` as a literal .gitignore pattern: ``[a1]``, ``*``, ``?`` and ``\\`` are
    pattern syntax to git, and a trailing space is dropped unless escaped."""
    escaped = re.sub(r"([\\\[\]*?])", r"\\\1", path)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def _line(relative: str) -> str:
    return f"/{gitignore_escape(relative)}/"


def _outermost_state(state: Path) -> Path:
    """``<parent>/.sage-mem`` for a state directory under its ``folders/``; else itself."""
    parent = state.parent
    if parent.name == FOLDERS_DIR and parent.parent.name == STATE_DIR_NAME:
        return parent.parent
    return state
