"""Reading another tool's files, bounded and never through a link: the one read path
of every importer.

A reader takes only what lies under the folder the user pointed at (``root``): the walk
never enters a symlinked folder nor reads a symlinked file (``files/paths.read_regular``
refuses the last component, ``inside`` every folder on the way), at most
``MAX_SOURCE_FILES`` files are taken, each at most ``MAX_FILE_BYTES`` (a memory's own
limit). A file that cannot be read is a ``Skipped`` with its reason, never a crash.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import (
    FileChangedDuringRead,
    FileTooLarge,
    ImportSourceError,
    MemoryNotFound,
    UnreadableFile,
    UnsafeFile,
)
from ..files.paths import MAX_FILE_BYTES, read_regular
from ..transfer.incoming import Skipped

MAX_SOURCE_FILES = 5000
"""Files one import reads at most: ten times a large sagemem folder, so a real source
fits, and a home directory pointed at by mistake costs seconds, not minutes."""
MAX_DEPTH = 12
"""Folders deep a walk goes; deeper ones are not entered (a note says so)."""


def read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of one regular source file, through the size gate; ImportSourceError
    says what is wrong with it as a source file (the store's own errors speak of
    memories: "no memory named …", "split it into smaller memories")."""
    try:
        return read_regular(path, max_bytes).data
    except MemoryNotFound:
        reason = "no such file"
    except FileTooLarge as exc:
        reason = f"it is {exc.size:,} bytes, over the {_size(max_bytes)} an import reads"
    except (UnsafeFile, UnreadableFile) as exc:
        reason = exc.reason  # "it is a symlink; …", "not a regular file", an OS error
    except FileChangedDuringRead:
        reason = "it kept changing while it was read; try again"
    raise ImportSourceError(path, reason) from None


def read_text(path: Path) -> str:
    """The UTF-8 text of one regular source file (``read_bytes``); bytes that are not
    UTF-8 are ImportSourceError too."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportSourceError(path, f"not UTF-8 text (bad byte at offset {exc.start})"
                                ) from None


def try_read(path: Path, origin: str) -> str | Skipped:
    """``read_text``, or the Skipped that says why the file could not be read."""
    try:
        return read_text(path)
    except ImportSourceError as exc:
        return Skipped(origin, exc.reason)


def _size(limit: int) -> str:
    mib, kib = 1024 ** 2, 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit // kib} KiB"


def require_folder(path: Path, what: str) -> Path:
    """``path`` as an absolute folder the user pointed at, or ImportSourceError."""
    folder = Path(os.path.abspath(path.expanduser()))
    if not folder.is_dir():
        state = "does not exist" if not folder.exists() else "is not a folder"
        raise ImportSourceError(folder, f"{state}; point at {what}")
    return folder


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (absolute, normalised) lies under ``root`` with no symlink on
    the way: every folder from ``root`` down is checked with ``lstat``."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    current = root
    for part in relative.parts[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def markdown_files(root: Path, *, skip_hidden: bool = True) -> tuple[list[Path], list[str]]:
    """Every ``*.md`` file under ``root`` (sorted by relative path, so the same folder
    gives the same batch), and notes on what the bounds left out. Symlinks — files or
    folders — are never followed; hidden entries (``.git``, a tool's own state) are
    left out when ``skip_hidden``."""
    found: list[Path] = []
    notes: list[str] = []
    _walk(root, 0, found, notes, skip_hidden)
    found.sort(key=lambda p: p.relative_to(root).as_posix())
    if len(found) > MAX_SOURCE_FILES:
        notes.append(f"more than {MAX_SOURCE_FILES} files: only the first "
                     f"{MAX_SOURCE_FILES} were read")
        found = found[:MAX_SOURCE_FILES]
    return found, notes


def _walk(folder: Path, depth: int, found: list[Path], notes: list[str],
          skip_hidden: bool) -> None:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        notes.append(f"{folder}: not listed ({exc.strerror or exc})")
        return
    for entry in entries:
        if skip_hidden and entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if depth + 1 >= MAX_DEPTH:
                notes.append(f"{entry.path}: deeper than {MAX_DEPTH} folders, not read")
            else:
                _walk(Path(entry.path), depth + 1, found, notes, skip_hidden)
        elif entry.name.lower().endswith(".md") and len(found) <= MAX_SOURCE_FILES:
            found.append(Path(entry.path))

