"""MemoryStore: a memory directory, its index and its state directory — the only writer.

Reads go through ``paths.safe_read``. Writes happen under one lock shared by every
process (a filelock in the state directory): the current revision is re-read (the
guard, ``guard.py``), the new bytes go to a uniquely named temporary file in the same
directory, are fsync'd, and replace the file with ``os.replace`` — so a crash at any
instant leaves the old file or the new one, never a torn one. Creating never overwrites:
the temporary file is hard-linked into place, which fails if the name exists.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from .config import STATE_DIR_NAME, Settings
from .errors import (
    DirectoryMissing,
    FileTooLarge,
    InvalidName,
    MemoryExists,
    MemoryNotFound,
    SagememError,
    StaleRevision,
    UnreadableFile,
    UnsafeFile,
    WriteFailed,
)
from .files import indexfile
from .files.atomic import atomic_write, remove_quietly
from .files.fields import TYPES
from .files.memory import Memory, decode, parse, revision_of
from .files.paths import (
    INDEX_FILE,
    MAX_FILE_BYTES,
    MAX_INDEX_BYTES,
    check_name,
    file_name_for,
    name_key,
    reserved_names,
    safe_read,
    with_suffix,
)
from .writes.guard import REQUIRED, Required, guarded_write

if TYPE_CHECKING:
    from filelock import FileLock

    from .search.index import SearchIndex
    from .search.reading import ReadResult
    from .search.retrieve import SearchResponse

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


class MemoryStore:
    """A memory directory and its state directory."""

    def __init__(self, directory: Path | str, state_dir: Path | str | None = None, *,
                 max_bytes: int = MAX_FILE_BYTES) -> None:
        self.directory = Path(os.path.abspath(Path(directory).expanduser()))
        self.state_dir = (Path(os.path.abspath(Path(state_dir).expanduser())) if state_dir
                          else self.directory.parent / STATE_DIR_NAME)
        self.max_bytes = max_bytes
        self._reserved: frozenset[str] | None = None
        self._index: SearchIndex | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        return cls(settings.memory_dir, settings.state_dir)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the search index (and its watcher, if any)."""
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- retrieval (search_memory / read_memory) ----------------------------------

    def search_index(self) -> SearchIndex:
        """The derived search index of this directory, opened on first use."""
        if self._index is None:
            from .search.index import SearchIndex

            self._index = SearchIndex(self)
        return self._index

    def search(self, query: str, scope: str | None = None, limit: int = 10,
               cursor: str | None = None, include_archived: bool = False) -> SearchResponse:
        """The memories that answer ``query``, best first, each with its paragraph;
        archived ones only with ``include_archived`` (each result says ``archived``)."""
        from .search.retrieve import search

        return search(self.search_index(), query, scope=scope, limit=limit, cursor=cursor,
                      include_archived=include_archived)

    def read(self, name: str, start_line: int | None = None, start_byte: int | None = None,
             max_bytes: int | None = None, revision: str | None = None) -> ReadResult:
        """A page of a memory's body by line or byte; ``revision_changed`` if it moved on."""
        from .search.reading import read

        return read(self, name, start_line=start_line, start_byte=start_byte,
                    max_bytes=max_bytes, revision=revision)

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
        """The on-disk spelling of the file ``name`` denotes (names are compared ignoring
        case and Unicode normal form), or None when there is none."""
        folder = self.folder(archived)
        if os.path.lexists(folder / name):
            return name
        key = name_key(name)
        try:
            with os.scandir(folder) as entries:
                return next((e.name for e in entries if name_key(e.name) == key), None)
        except OSError:
            return None

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

    # -- writing ---------------------------------------------------------------

    def lock(self) -> FileLock:
        """The lock every sagemem writer, in any process, holds while it writes."""
        path = self.state_dir / LOCK_FILE
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteFailed(path.parent, exc.strerror or str(exc)) from exc
        from filelock import FileLock  # imported here: read-only commands never need it

        return FileLock(str(path), timeout=LOCK_TIMEOUT_SECONDS)

    def write(self, name: str, content: str | None = None,
              expected_revision: str | Required | None = REQUIRED, *,
              fields: Mapping[str, object] | None = None, reason: str | None = None,
              writer: str = "library", conflict_kind: str | None = "stale_version") -> Memory:
        """Replace a memory's text (or set ``fields`` in it), if it is still at
        ``expected_revision``; ``expected_revision=None`` means "create".

        A refused write raises a ``WriteRefused`` (``StaleRevision`` — also for a file
        deleted meanwhile —, ``MemoryExists``, ``UnresolvedMerge``) whose ``conflict_id``
        names the record holding both sides. ``conflict_kind`` is the kind recorded for a
        revision mismatch (``external_change`` for an editor session); None records
        nothing (a resolution retrying a recorded conflict).
        """
        return guarded_write(self, name, content, expected_revision, fields=fields,
                             reason=reason, writer=writer, conflict_kind=conflict_kind)

    def new(self, *, type: str, name: str, description: str, tags: Sequence[str] = (),
            aliases: Sequence[str] = (), body: str = "", file: str | None = None,
            today: date | None = None) -> Memory:
        """Create ``<type>_<slug>.md`` (never overwriting) and add its line to MEMORY.md."""
        self.require_directory()
        if type not in TYPES:
            raise InvalidName(type, f"type must be one of {', '.join(TYPES)}")
        file = check_name(with_suffix(file) if file else file_name_for(type, name), self.reserved)
        fields = {
            "name": name.strip() or None,
            "description": " ".join(description.split()),
            "type": type,
            "tags": list(tags),
            "aliases": list(aliases),
            "updated": today or date.today(),
        }
        from .files.edit import render_new  # ruamel.yaml is only needed to write

        data = render_new(fields, body).encode("utf-8")
        self.check_size(file, data)
        line = indexfile.format_entry(name.strip() or file[:-3], file, description)
        with self.locked():
            self._refuse_existing(file)
            self.read_index()  # an unreadable MEMORY.md is refused before the file is made
            atomic_write(self.directory / file, data, create=True)
            try:
                self.update_index(lambda text: indexfile.add_entry(text, line))
            except SagememError as exc:  # no memory without its index line: take it back
                remove_quietly(self.directory / file)
                if isinstance(exc, WriteFailed):
                    raise WriteFailed(exc.path, f"{exc.reason}; {file} was not kept") from exc
                raise
        return self.get(file)

    def _refuse_existing(self, name: str) -> None:
        """Creating ``User_X.md`` beside ``user_x.md`` would make two memories one name."""
        on_disk = self.existing_name(name)
        if on_disk is not None:
            raise MemoryExists(on_disk)

    def index_memory(self, memory: Memory) -> None:
        """Add ``memory``'s line to MEMORY.md unless a line already points at it."""
        line = indexfile.format_entry(memory.title, memory.file, memory.description)
        with self.locked():
            self.update_index(lambda text: text if indexfile.has_entry(text, memory.file)
                              else indexfile.add_entry(text, line))

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
        """Write MEMORY.md if it is still at ``expected_revision`` (None: create it)."""
        def unchanged() -> None:
            actual = self.read_index()[1]
            if actual != expected_revision:
                raise StaleRevision(INDEX_FILE, expected_revision, actual)

        atomic_write(self.directory / INDEX_FILE, text.encode("utf-8"),
                     create=expected_revision is None, before_replace=unchanged)

    def notice_change(self) -> None:
        """Tell an open search index that files changed: a watching index must not trust
        its watcher's silence after a write it did not see coming."""
        if self._index is not None:
            self._index.notice_change()


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


