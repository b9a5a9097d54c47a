"""``sagemem init``: create a memory directory, its starter MEMORY.md and its state
directory — never overwriting anything a person already has."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemoryExists, SagememError
from . import indexfile
from .atomic import atomic_write, make_folder
from .gitignore import GITIGNORE as GITIGNORE
from .gitignore import ignore_state_dir
from .paths import INDEX_FILE
from .state import claim


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
    directory lies inside the memory directory or a git working tree, a .gitignore line
    that keeps it out of git (``files/gitignore.py``).

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
    """Keep the state directory out of git (``files/gitignore.py``: inside the memory
    directory, or inside the working tree holding it). (.gitignore, True) if the file
    was created, False if the line was there; Updated if it was appended; None when
    nothing needs ignoring."""
    done = ignore_state_dir(memory_dir, state_dir)
    if done is None:
        return None
    if done.appended:
        return Updated(done.ignore.gitignore, done.ignore.line)
    return done.ignore.gitignore, done.created


def _make_dir(folder: Path, created: list[Path], existed: list[Path]) -> None:
    made = make_folder(folder, parents=True, follow_link=True)
    (created if made else existed).append(folder)
