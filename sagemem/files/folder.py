"""MemoryFolder: a memory directory and its state directory, read through the safe path.

Everything below the write guard needs the folder and nothing more: listing and reading
memories (``paths.safe_read``), the one lock every writer in any process holds
(a filelock in the state directory), the size limit, and guarded edits of ``MEMORY.md``.
``MemoryStore`` (``sagemem/store.py``) builds on it with guarded writes and search.

A folder also tells whoever listens that its files changed (``notice_change``): a
watching search index must not trust its watcher's silence after a write it did not see
coming, and the writers that know of a write sit below the index that needs to hear it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    AmbiguousName,
    DirectoryMissing,
    FileTooLarge,
    IndexTooLarge,
    MemoryNotFound,
    SagememError,
    StaleRevision,
    UnreadableFile,
    UnsafeFile,
    WriteFailed,
)
from . import indexfile
from .atomic import atomic_write
from .memory import Memory, decode, parse
from .paths import (
    INDEX_FILE,
    MAX_FILE_BYTES,
    MAX_INDEX_BYTES,
    check_name,
    name_key,
    reserved_names,
    safe_read,
    same_name_in,
    with_suffix,
)
from .revision import revision_of
from .state import check_owner, claim, default_state_dir

if TYPE_CHECKING:
    from filelock import FileLock

ARCHIVE_DIR = "archive"
LOCK_FILE = "locks/store.lock"
LOCK_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class ListError:
    """A file that could not be listed as a memory, and why (the others still are)."""

    file: str
    error: SagememError
    archived: bool = False


@dataclass(frozen=True)
class Listing:
    """Every memory that could be read, and every file that could not."""

    memories: tuple[Memory, ...]
    errors: tuple[ListError, ...]


class MemoryFolder:
    """A memory directory and its state directory."""

    def __init__(self, directory: Path | str, state_dir: Path | str | None = None, *,
                 max_bytes: int = MAX_FILE_BYTES) -> None:
        self.directory = Path(os.path.abspath(Path(directory).expanduser()))
        if state_dir:  # another folder's state directory is refused before any use
            self.state_dir = Path(os.path.abspath(Path(state_dir).expanduser()))
            check_owner(self.state_dir, self.directory)
        else:
            self.state_dir = default_state_dir(self.directory)
        self.max_bytes = max_bytes
        self._reserved: frozenset[str] | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def archive_dir(self) -> Path:
        return self.directory / ARCHIVE_DIR

    @property
    def reserved(self) -> frozenset[str]:
        """Reserved names as comparison keys (built-in plus ``<state>/reserved.json``)."""
        if self._reserved is None:
            self._reserved = reserved_names(self.state_dir)
        return self._reserved

    def require_directory(self) -> None:
        if not self.directory.is_dir():
            raise DirectoryMissing(self.directory, exists=os.path.lexists(self.directory))

    # -- reading ---------------------------------------------------------------

    def folder(self, archived: bool = False) -> Path:
        """The memory directory, or its ``archive/``; a symlinked archive is refused."""
        if not archived:
            return self.directory
        if os.path.islink(self.archive_dir):
            raise UnsafeFile(self.archive_dir, "it is a symlink; sagemem never follows links")
        return self.archive_dir

    def files(self, archived: bool = False) -> list[str]:
        """Names, as spelt on disk, of the top-level ``*.md`` files that may be memories."""
        self.require_directory()
        folder = self.folder(archived)
        if archived and not folder.is_dir():
            return []
        try:
            with os.scandir(folder) as entries:
                names = [e.name for e in entries if _looks_like_memory(e.name)]
        except OSError as exc:
            raise UnreadableFile(folder, exc.strerror or str(exc)) from exc
        return sorted(n for n in names if name_key(n) not in self.reserved)

    def existing_name(self, name: str, *, archived: bool = False) -> str | None:
        """The on-disk spelling of the file ``name`` denotes, or None when there is none.

        Names are compared as ``name_key`` does (case, Unicode form, full-width letters), so
        every surface resolves a name to the same file: the file spelt exactly so first;
        else the only file of that key; two or more (``USER_PETS.md`` beside
        ``user_pets.md``, made outside sagemem) are AmbiguousName, never a guess that
        would depend on the directory's order."""
        folder = self.folder(archived)
        if os.path.lexists(folder / name):
            return name
        try:
            matches = same_name_in(folder, name)
        except OSError:
            return None
        if len(matches) > 1:
            raise AmbiguousName(name, folder, tuple(matches))
        return matches[0] if matches else None

    def twins(self, file: str) -> frozenset[str]:
        """The other live files that are ``file``'s name (``name_key``), spelt otherwise:
        a case collision made outside sagemem. Their own MEMORY.md lines stay theirs
        (``indexfile.points_at``)."""
        try:
            return frozenset(same_name_in(self.directory, file)) - {file}
        except OSError:
            return frozenset()

    def get(self, name: str, *, archived: bool = False) -> Memory:
        """Read and parse one memory through the safe read path."""
        self.require_directory()
        name = check_name(with_suffix(name), self.reserved)
        on_disk = self.existing_name(name, archived=archived)
        if on_disk is None:
            in_archive = not archived and self._in_archive(name)
            raise MemoryNotFound(name, self.folder(archived), archived=in_archive)
        return self._read(on_disk, archived)

    def _read(self, name: str, archived: bool) -> Memory:
        read = safe_read(self.folder(archived), name, max_bytes=self.max_bytes)
        return parse(read.data, name, mtime=read.mtime, archived=archived)

    def _in_archive(self, name: str) -> bool:
        try:
            return self.existing_name(name, archived=True) is not None
        except UnsafeFile:
            return False

    def list(self, *, include_archived: bool = True, type: str | None = None,
             tag: str | None = None, active: bool = False, today: date | None = None
             ) -> Listing:
        """Every memory (optionally of one type, with one tag, or only active ones: not
        archived, not past ``invalid_at``); a file that cannot be read is reported and
        never hides the others."""
        self.require_directory()
        memories: list[Memory] = []
        errors: list[ListError] = []
        for archived in [False, True] if include_archived and not active else [False]:
            try:
                names = self.files(archived=archived)
            except SagememError as exc:
                if not archived:
                    raise
                errors.append(ListError(ARCHIVE_DIR + "/", exc, archived))
                continue
            for name in names:
                try:
                    memories.append(self._read(name, archived))
                except SagememError as exc:
                    errors.append(ListError(name, exc, archived))
        wanted = _Filter(type, tag.casefold() if tag else None, active, today or date.today())
        return Listing(tuple(m for m in memories if wanted.keeps(m)), tuple(errors))

    def revision(self, name: str) -> str | None:
        """The current revision of a memory, or None if it does not exist."""
        try:
            return self.get(name).revision
        except MemoryNotFound:
            return None

    # -- the lock and MEMORY.md --------------------------------------------------

    def lock(self) -> FileLock:
        """The lock every sagemem writer, in any process, holds while it writes; the
        state directory is claimed for this folder first (``files/state.py``)."""
        path = self.state_dir / LOCK_FILE
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteFailed(path.parent, exc.strerror or str(exc)) from exc
        claim(self.state_dir, self.directory)
        from filelock import FileLock  # imported here: read-only commands never need it

        return FileLock(str(path), timeout=LOCK_TIMEOUT_SECONDS)

    def check_size(self, name: str, data: bytes) -> None:
        """Refuse bytes over the size limit before anything is written: a file the safe
        read path would refuse to read must never be made."""
        if len(data) > self.max_bytes:
            raise FileTooLarge(name, len(data), self.max_bytes)

    @contextmanager
    def locked(self, *, dry_run: bool = False) -> Iterator[None]:
        """Hold the store lock (every writer, in any process, takes it to write). A dry
        run writes nothing, so it takes no lock: it neither waits for a writer nor
        creates the state directory just to hold a lock file."""
        if dry_run:
            yield
            return
        lock = self.lock()
        try:
            lock.acquire()
        except TimeoutError:  # filelock's Timeout is a TimeoutError
            raise WriteFailed(Path(lock.lock_file),
                              "another sagemem process holds the write lock; try again") from None
        except OSError as exc:
            raise WriteFailed(Path(lock.lock_file), exc.strerror or str(exc)) from exc
        try:
            yield
        finally:
            lock.release()

    def read_index(self) -> tuple[str, str | None]:
        """MEMORY.md's text and revision; the starter text and None when there is none."""
        try:
            read = safe_read(self.directory, INDEX_FILE, max_bytes=MAX_INDEX_BYTES)
        except MemoryNotFound:
            return indexfile.INDEX_HEADER, None
        return decode(read.data, INDEX_FILE), revision_of(read.data)

    def check_index_room(self, line: str) -> None:
        """Refuse (``IndexTooLarge``) before a memory is written whose MEMORY.md ``line``
        would take the index past ``MAX_INDEX_BYTES``: a memory without its line is the
        audit's ``not_in_index``, so the check comes first."""
        text = self.read_index()[0]
        size = len(indexfile.add_entry(text, line).encode("utf-8"))
        if size > MAX_INDEX_BYTES:
            raise IndexTooLarge(INDEX_FILE, size, MAX_INDEX_BYTES)

    def update_index(self, edit: Callable[[str], str]) -> IndexUpdate | None:
        """Apply ``edit`` to MEMORY.md's text and write the result, guarded like a memory:
        if MEMORY.md changed between the read and the rename (an editor saving it), the
        write is refused with StaleRevision and that edit is kept. None when ``edit``
        changes nothing. The caller holds ``store.locked()``."""
        text, revision = self.read_index()
        new_text = edit(text)
        if new_text == text:
            return None
        self._write_index(new_text, revision)
        return IndexUpdate(text, revision, revision_of(new_text.encode("utf-8")))

    def undo_index_update(self, update: IndexUpdate) -> None:
        """Put MEMORY.md back as ``update`` found it, unless it changed since (then
        StaleRevision: the newer text is kept). The caller holds ``store.locked()``."""
        if update.before_revision is not None:
            self._write_index(update.before, update.after_revision)
            return
        actual = self.read_index()[1]
        if actual != update.after_revision:
            raise StaleRevision(INDEX_FILE, update.after_revision, actual)
        try:  # there was no MEMORY.md before: remove the one just created
            os.unlink(self.directory / INDEX_FILE)
        except OSError as exc:
            raise WriteFailed(self.directory / INDEX_FILE, exc.strerror or str(exc)) from exc

    def _write_index(self, text: str, expected_revision: str | None) -> None:
        """Write MEMORY.md if it is still at ``expected_revision`` (None: create it), and
        never past ``MAX_INDEX_BYTES``: an index sagemem would then refuse to read."""
        data = text.encode("utf-8")
        if len(data) > MAX_INDEX_BYTES:
            raise IndexTooLarge(INDEX_FILE, len(data), MAX_INDEX_BYTES)

        def unchanged() -> None:
            actual = self.read_index()[1]
            if actual != expected_revision:
                raise StaleRevision(INDEX_FILE, expected_revision, actual)

        atomic_write(self.directory / INDEX_FILE, data,
                     create=expected_revision is None, before_replace=unchanged)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever a sagemem writer in this process changed files."""
        self._listeners.append(listener)

    def notice_change(self) -> None:
        """Files changed (a write of ours): tell every listener, e.g. a watching index."""
        for listener in self._listeners:
            listener()


@dataclass(frozen=True)
class IndexUpdate:
    """What ``update_index`` replaced: the text and revision before, the revision after."""

    before: str
    before_revision: str | None
    after_revision: str


@dataclass(frozen=True)
class _Filter:
    type: str | None
    tag: str | None
    active: bool
    today: date

    def keeps(self, memory: Memory) -> bool:
        return ((self.type is None or memory.type == self.type)
                and (self.tag is None or self.tag in (t.casefold() for t in memory.tags))
                and not (self.active and (memory.archived or memory.is_invalid(self.today))))


def _looks_like_memory(name: str) -> bool:
    return name_key(name).endswith(".md") and not name.startswith(".")


