"""``sagemem init``: create a memory directory, its starter MEMORY.md and its state
directory — never overwriting anything a person already has."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemoryExists, MemoryNotFound, SagememError
from . import indexfile
from .atomic import atomic_write, make_folder
from .paths import INDEX_FILE, read_regular
from .state import claim

GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class Updated:
    """A file ``init`` appended to rather than created (an existing .gitignore)."""

    path: Path
    added: str


@dataclass(frozen=True)
class InitReport:
    """What ``init`` created, appended to, and found already there (and left alone)."""

    created: tuple[Path, ...]
    existed: tuple[Path, ...]
    updated: tuple[Updated, ...] = ()
    warnings: tuple[str, ...] = ()  # what init could not do (the rest is done)


def init_directory(memory_dir: Path, state_dir: Path) -> InitReport:
    """Create the memory directory, a starter MEMORY.md and the state directory, which
    records that it belongs to this folder (``files/state.py``), and, when the state
    directory lies inside the memory directory, a .gitignore line that keeps it out of git.

    Never overwrites anything: what already exists is reported and left alone; an
    existing .gitignore only gets the missing line appended (reported as updated).
    """
    created: list[Path] = []
    existed: list[Path] = []
    updated: list[Updated] = []
    for folder in (memory_dir, state_dir):
        _make_dir(folder, created, existed)
    claim(state_dir, memory_dir)  # the state directory is this folder's from now on
    index = memory_dir / INDEX_FILE
    if os.path.lexists(index):
        existed.append(index)
    else:
        try:
            atomic_write(index, indexfile.INDEX_HEADER.encode("utf-8"), create=True)
        except MemoryExists:
            existed.append(index)
        else:
            created.append(index)
    try:
        ignore = _ignore_state_dir(memory_dir, state_dir)
    except SagememError as exc:  # the folders exist by now: say what is left, do not fail
        return InitReport(tuple(created), tuple(existed), tuple(updated),
                          (f".gitignore left alone, add the state directory to it yourself: "
                           f"{exc}",))
    if isinstance(ignore, Updated):
        updated.append(ignore)
    elif ignore is not None:
        (created if ignore[1] else existed).append(ignore[0])
    return InitReport(tuple(created), tuple(existed), tuple(updated))


def _ignore_state_dir(memory_dir: Path, state_dir: Path
                      ) -> tuple[Path, bool] | Updated | None:
    """Keep a state directory that lies inside the memory directory out of git: add
    ``/<state>/`` to the memory directory's .gitignore — appended to an existing one,
    never overwriting it. (.gitignore, True) if the file was created, False if the line
    was there; Updated if it was appended; None when the state directory is elsewhere."""
    memory, state = Path(os.path.abspath(memory_dir)), Path(os.path.abspath(state_dir))
    if memory == state or memory not in state.parents:
        return None
    relative = state.relative_to(memory).as_posix()
    line = f"/{gitignore_escape(relative)}/"
    path = memory / GITIGNORE
    try:
        old = read_regular(path).data
    except MemoryNotFound:
        old = b""
    if any(existing.strip() in (line, line.rstrip("/"), line[1:], line[1:-1])
           for existing in old.decode("utf-8", errors="replace").splitlines()):
        return path, False
    separator = b"\n" if old and not old.endswith(b"\n") else b""
    fresh = not old and not os.path.lexists(path)
    atomic_write(path, old + separator + f"{line}\n".encode(), create=fresh)
    return (path, True) if fresh else Updated(path, line)


def gitignore_escape(path: str) -> str:
    """``path`` as a literal .gitignore pattern: ``[a1]``, ``*``, ``?`` and ``\\`` are
    pattern syntax to git, and a trailing space is dropped unless escaped."""
    escaped = re.sub(r"([\\\[\]*?])", r"\\\1", path)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def _make_dir(folder: Path, created: list[Path], existed: list[Path]) -> None:
    made = make_folder(folder, parents=True, follow_link=True)
    (created if made else existed).append(folder)
