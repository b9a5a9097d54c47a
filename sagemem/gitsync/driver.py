"""The merge driver git runs for a memory folder's files: ``%O %A %B %P`` in, the merged
text written into ``%A``, and every conflict also put in sagemem's conflict queue.

Git's contract: ``%O`` holds the base, ``%A`` ours — the result must be written there —,
``%B`` theirs, ``%P`` the path in the repository; exit 0 means merged, anything else a
conflict with the conflicted text left in ``%A``. ``MEMORY.md`` (by its name in ``%P``)
merges as the index, every other file as a memory. During ``git rebase`` git calls the
upstream side "ours" and the commit being replayed "theirs"; the merges are symmetric
but for the order of ours' and theirs' additions, so the result is right either way.

The driver never fails worse than git's own merge would: bytes that are not UTF-8, or
any fault of the merge itself, fall back to ``git merge-file`` over the three files
(markers, non-zero exit) with one line saying so (``fallback``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..files.paths import INDEX_FILE
from ..files.revision import revision_of
from ..writes import conflicts
from .merge_index import merge_index
from .merge_memory import merge_memory
from .merge_text import MergeResult, merge_file_bytes

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder

WRITER = "git"


@dataclass(frozen=True)
class DriverOutcome:
    """What the driver did: merged cleanly or not, the places it could not merge, the
    conflict record that holds both sides (None when there is none or it failed)."""

    clean: bool
    where: tuple[str, ...] = ()
    conflict_id: str | None = None


def merge_texts(base: str, ours: str, theirs: str, path: str) -> MergeResult:
    """The merge ``path`` (as git names it) takes: the index's for MEMORY.md, else a
    memory's."""
    if PurePosixPath(path).name == INDEX_FILE:
        return merge_index(base, ours, theirs)
    return merge_memory(base, ours, theirs)


def run_driver(base: Path, ours: Path, theirs: Path, path: str,
               folder: Callable[[], MemoryFolder | None]) -> DriverOutcome:
    """Merge git's three files, write the result into ``ours``, and queue a conflict in
    the state directory of ``folder()`` (asked only then; None: not queued). Raises
    ``MergeFailed`` (git cannot merge), ``UnicodeDecodeError`` (not text) or ``OSError``:
    the caller falls back."""
    sides = [p.read_bytes().decode("utf-8") for p in (base, ours, theirs)]
    result = merge_texts(sides[0], sides[1], sides[2], path)
    _write_result(ours, result.text.encode("utf-8", errors="surrogateescape"))
    if result.clean:
        return DriverOutcome(True)
    where = tuple(c.where for c in result.conflicts)
    conflict_id = None
    if (opened := folder()) is not None:
        conflict_id = queue_conflict(opened, path, (sides[1], sides[2]), result.text, where)
    return DriverOutcome(False, where, conflict_id)


def fallback(base: Path, ours: Path, theirs: Path) -> bool:
    """Git's plain three-way merge of the files, into ``ours``: True when it was clean.
    Raises ``MergeFailed`` when even that cannot run (``ours`` is then left as it was)."""
    merged, conflicted = merge_file_bytes(base.read_bytes(), ours.read_bytes(),
                                          theirs.read_bytes())
    _write_result(ours, merged)
    return not conflicted


def queue_conflict(folder: MemoryFolder, path: str, sides: tuple[str, str], marked: str,
                   where: tuple[str, ...]) -> str:
    """An ``unresolved_merge`` record holding both sides whole (ours as ``disk``, theirs
    as ``mine``), so ``sagemem conflicts`` shows the merge git stopped on. Its disk
    revision is the marked text's, the file git leaves: ``conflicts resolve --keep mine``
    then writes theirs whole over it."""
    name = folder_name(folder, path)
    ours, theirs = sides
    reason = f"git merge of {path}: both sides changed {', '.join(where)}"
    revision = revision_of(marked.encode("utf-8", errors="surrogateescape"))
    record = conflicts.create(folder, "unresolved_merge", name, writer=WRITER, reason=reason,
                              disk=(revision, ours),
                              mine={"based_on": None, "text": theirs, "side": "theirs",
                                    "merge": {"path": path, "where": list(where)}})
    return record.id


def folder_name(folder: MemoryFolder, path: str) -> str:
    """``path`` (relative to the repository's top, where git runs the driver) as a name
    in the memory folder (``archive/x.md`` for an archived one); the path itself when it
    lies outside."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(folder.directory).as_posix()
    except ValueError:
        return path


def folder_of(path: str, top: Path) -> Path | None:
    """The memory folder ``path`` lies in: the nearest directory above it, up to the
    repository's ``top``, whose ``.gitattributes`` holds install's ``MARK`` line. None
    when there is none (the attributes were written by hand)."""
    from .install import ATTRIBUTES_FILE, MARK

    here = Path(os.path.abspath(top / path)).parent
    top = Path(os.path.abspath(top))
    while here.is_relative_to(top):
        attributes = here / ATTRIBUTES_FILE
        if attributes.is_file() and not attributes.is_symlink() and _marked(attributes, MARK):
            return here
        if here == top:
            break
        here = here.parent
    return None


def _marked(attributes: Path, mark: str) -> bool:
    try:
        text = attributes.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(line.startswith(mark) for line in text.splitlines())


def _write_result(ours: Path, data: bytes) -> None:
    """Replace git's ``%A`` file whole: a temporary beside it, then ``os.replace``, so a
    kill never leaves it torn."""
    temporary = ours.with_name(f"{ours.name}.sagemem-{os.getpid()}")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, ours)
    finally:
        temporary.unlink(missing_ok=True)
