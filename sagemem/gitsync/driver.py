"""The merge driver git runs for a memory folder's files: ``%O %A %B %P`` in, the merged
text written into ``%A``, and every conflict also put in sagemem's conflict queue.

Git's contract: ``%O`` holds the base, ``%A`` ours — the result must be written there —,
``%B`` theirs, ``%P`` the path in the repository; exit 0 means merged, anything else a
conflict with the conflicted text left in ``%A``. ``MEMORY.md`` (by its name in ``%P``)
merges as the index, every other file as a memory. During ``git rebase`` git calls the
upstream side "ours" and the commit being replayed "theirs"; the merges are symmetric
but for the order of ours' and theirs' additions, so the result is right either way.

The driver never fails worse than git's own merge would: bytes that are not UTF-8, or
any fault of the merge itself, fall back to ``git merge-file`` over the three files as
git gave them — ours' bytes read before anything is written, so a fallback never merges
sagemem's own marked text again (nested markers) — with one line saying so. A conflict
that cannot be queued is only a warning: the marked file git stops on is the result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..errors import SagememError
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
    conflict record that holds both sides (None when there is none or it failed), why it
    merged as plain text (``git merge-file``; None when it did not) and why the conflict
    was not queued (None when it was, or there was none)."""

    clean: bool
    where: tuple[str, ...] = ()
    conflict_id: str | None = None
    plain: str | None = None
    unqueued: str | None = None


def merge_texts(base: str, ours: str, theirs: str, path: str) -> MergeResult:
    """The merge ``path`` (as git names it) takes: the index's for MEMORY.md, else a
    memory's."""
    if PurePosixPath(path).name == INDEX_FILE:
        return merge_index(base, ours, theirs)
    return merge_memory(base, ours, theirs)


def run_driver(base: Path, ours: Path, theirs: Path, path: str,
               folder: Callable[[], MemoryFolder | None]) -> DriverOutcome:
    """Merge git's three files, write the result into ``ours``, and queue a conflict in
    the state directory of ``folder()`` (asked only then; None: not queued). Any fault of
    sagemem's merge falls back to git's over the original files (``plain`` says why).
    Raises ``OSError`` when git's files cannot be read, or ``ours`` written, and
    ``MergeFailed`` when even git's merge cannot run: ``ours`` is then as git gave it."""
    sides = (base.read_bytes(), ours.read_bytes(), theirs.read_bytes())
    try:
        texts = [side.decode("utf-8") for side in sides]
        result = merge_texts(texts[0], texts[1], texts[2], path)
    except Exception as exc:  # any fault of our merge (issue: never worse than git's)
        return fallback(ours, sides, _why(exc))
    _write_result(ours, result.text.encode("utf-8", errors="surrogateescape"))
    if result.clean:
        return DriverOutcome(True)
    where = tuple(c.where for c in result.conflicts)
    try:
        opened = folder()
        conflict_id = (None if opened is None else
                       queue_conflict(opened, path, (texts[1], texts[2]), result.text, where))
    except Exception as exc:  # the marked file stands; merging again would nest markers
        return DriverOutcome(False, where, unqueued=_why(exc))
    return DriverOutcome(False, where, conflict_id)


def fallback(ours: Path, sides: tuple[bytes, bytes, bytes], why: str) -> DriverOutcome:
    """Git's plain three-way merge of the original ``sides`` (base, ours, theirs) into
    ``ours``. Raises ``MergeFailed`` when even that cannot run (``ours`` left as it was)."""
    merged, conflicted = merge_file_bytes(*sides)
    _write_result(ours, merged)
    return DriverOutcome(not conflicted, ("text",) if conflicted else (), plain=why)


def _why(exc: Exception) -> str:
    """An exception as one line: sagemem's own say what happened; others name their kind
    (a ``KeyError`` alone says only its key)."""
    return str(exc) if isinstance(exc, SagememError) else f"{type(exc).__name__}: {exc}"


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
