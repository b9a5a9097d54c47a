"""MemoryStore: the facade over a memory folder — the one writer's entry point, and search.

``MemoryFolder`` (``files/folder.py``) reads through ``paths.safe_read`` and holds the
lock; the store adds what needs the layers above it: guarded writes (``writes/guard.py``:
the current revision is re-read under the lock, the new bytes go to a uniquely named
temporary file in the same directory, are fsync'd, and replace the file with
``os.replace`` — so a crash at any instant leaves the old file or the new one, never a
torn one), creating memories (hard-linked into place, which fails if the name exists),
and the search index with retrieval and reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from .config import DEFAULT_EMBEDDER, Settings
from .errors import InvalidName, MemoryExists
from .files import indexfile
from .files.atomic import atomic_write
from .files.fields import TYPES
from .files.folder import ARCHIVE_DIR as ARCHIVE_DIR
from .files.folder import IndexUpdate as IndexUpdate
from .files.folder import ListError as ListError
from .files.folder import Listing as Listing
from .files.folder import MemoryFolder
from .files.memory import Memory
from .files.paths import MAX_FILE_BYTES, check_new_name, file_name_for, with_suffix
from .writes import changelog
from .writes.caps import (
    DEFAULT_CAPS,
    Caps,
    body_bytes,
    caps_from_settings,
    check_body,
    refuse_if_full,
)
from .writes.guard import REQUIRED, Required, guarded_write, refuse_long_fields

if TYPE_CHECKING:  # imported where used: a write or a listing never loads the search engine
    from .embed.embedder import Embedder
    from .search.hybrid import Mode
    from .search.index import SearchIndex
    from .search.reading import ReadResult
    from .search.retrieve import SearchResponse
    from .search.vectors import VectorStore
    from .writes.remember import RememberResult

EMBEDDER_DIR = "embedder"  # <state>/embedder/: the embedder's own derived caches


class MemoryStore(MemoryFolder):
    """A memory directory and its state directory: reads, guarded writes and search."""

    def __init__(self, directory: Path | str, state_dir: Path | str | None = None, *,
                 max_bytes: int = MAX_FILE_BYTES, semantic: bool = False,
                 embedder: str = DEFAULT_EMBEDDER,
                 embedder_of: MemoryStore | None = None, caps: Caps = DEFAULT_CAPS) -> None:
        super().__init__(directory, state_dir, max_bytes=max_bytes)
        self._embedder_of = embedder_of
        """A store whose embedder (and its ~80 MB cache) this one uses: the global layer
        the project's, rather than loading a second one inside the prompt hook's budget."""
        self.caps = caps
        """This layer's caps (``writes/caps.py``): a body over the hard cap, or a create
        past the memory count's, is refused before anything is written."""
        self.semantic = semantic
        """Search modes default to hybrid (vectors beside the lexical index) when set."""
        self.embedder_key = embedder
        self._index: SearchIndex | None = None
        self._vectors: VectorStore | None = None
        self._embedder: Embedder | None = None
        self.on_change(self._tell_index)

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        return cls(settings.memory_dir, settings.state_dir, semantic=settings.semantic,
                   embedder=settings.embedder, caps=caps_from_settings(settings))

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the search index (and its watcher, if any)."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None

    # -- retrieval (search_memory / read_memory) ----------------------------------

    def search_index(self) -> SearchIndex:
        """The derived search index of this directory, opened on first use."""
        if self._index is None:
            from .search.index import SearchIndex

            self._index = SearchIndex(self)
        return self._index

    def embedder(self) -> Embedder:
        """The embedder of the ``embedder`` setting (UnknownEmbedder if none is registered)."""
        if self._embedder is None and self._embedder_of is not None:
            self._embedder = self._embedder_of.embedder()
        if self._embedder is None:
            from .embed.embedder import get_embedder

            self._embedder = get_embedder(self.embedder_key, self.state_dir / EMBEDDER_DIR)
        return self._embedder

    def vector_store(self) -> VectorStore:
        """The vectors beside the search index, for the embedder in use."""
        if self._vectors is None:
            from .search.vectors import VectorStore, vectors_path

            embedder = self.embedder()
            self._vectors = VectorStore(vectors_path(self.search_index().path), embedder.name,
                                        embedder.dim)
        return self._vectors

    def _tell_index(self) -> None:
        """A write of ours: an open, watching index must not trust its watcher's silence."""
        if self._index is not None:
            self._index.notice_change()

    def search(self, query: str, scope: str | None = None, limit: int = 10,
               cursor: str | None = None, include_archived: bool = False,
               deadline: float | None = None, mode: Mode | None = None) -> SearchResponse:
        """The memories that answer ``query``, best first, each with its paragraph;
        archived ones only with ``include_archived`` (each result says ``archived``).
        ``deadline`` (``time.monotonic()``) bounds bringing the index up to date: past it,
        the search answers from what is indexed, with a notice. ``mode``: lexical,
        semantic or hybrid (``search/hybrid.py``); by default hybrid when the store is
        ``semantic``, else lexical."""
        mode = mode or ("hybrid" if self.semantic else "lexical")
        if mode == "lexical":
            from .search.retrieve import search

            return search(self.search_index(), query, scope=scope, limit=limit, cursor=cursor,
                          include_archived=include_archived, deadline=deadline)
        from .search.hybrid import search_mode

        return search_mode(self.search_index(), self.vector_store(), self.embedder(), query,
                           mode, scope=scope, limit=limit, cursor=cursor,
                           include_archived=include_archived, deadline=deadline)

    def read(self, name: str, start_line: int | None = None, start_byte: int | None = None,
             max_bytes: int | None = None, revision: str | None = None) -> ReadResult:
        """A page of a memory's body by line or byte; ``revision_changed`` if it moved on."""
        from .search.reading import read

        return read(self, name, start_line=start_line, start_byte=start_byte,
                    max_bytes=max_bytes, revision=revision)

    # -- writing ---------------------------------------------------------------

    def write(self, name: str, content: str | None = None,
              expected_revision: str | Required | None = REQUIRED, *,
              fields: Mapping[str, object] | None = None,
              expected_fields: Mapping[str, object] | None = None, reason: str | None = None,
              writer: str = "library", conflict_kind: str | None = "stale_version",
              run_id: str | None = None) -> Memory:
        """Replace a memory's text (or set ``fields`` in it), if it is still at
        ``expected_revision`` (in full, or its first 8+ characters);
        ``expected_revision=None`` means "create".

        ``fields`` alone need no revision: they are applied, under the lock, to the text
        as it is then, so writers setting different fields never conflict. Give
        ``expected_fields`` (each field's value as you read it, None if unset) to be
        refused with ``StaleField`` when another writer changed one of them meanwhile.

        A refused write raises a ``WriteRefused`` (``StaleRevision`` — also for a file
        deleted meanwhile —, ``MemoryExists``, ``UnresolvedMerge``) whose ``conflict_id``
        names the record holding both sides. ``conflict_kind`` is the kind recorded for a
        revision mismatch (``external_change`` for an editor session); None records
        nothing (a resolution retrying a recorded conflict).

        The layer's caps refuse a body over ``hard_cap_body_bytes`` (``BodyTooLarge``) and
        a create at ``hard_cap_memories`` (``LayerFull``), before anything is written.
        """
        if content is not None:  # the per-file limit first: its error predates the caps
            from .writes.redact import redact_memory  # secrets go before any size check

            content = redact_memory(content).text
            self.check_size(with_suffix(name), content.encode("utf-8"))
            check_body(self.caps, with_suffix(name), body_bytes(content))
        return guarded_write(self, name, content, expected_revision, fields=fields,
                             expected_fields=expected_fields, reason=reason, writer=writer,
                             conflict_kind=conflict_kind, run_id=run_id,
                             before_create=lambda file: refuse_if_full(self.caps, self, file))

    def new(self, *, type: str, name: str, description: str, tags: Sequence[str] = (),
            aliases: Sequence[str] = (), body: str = "", file: str | None = None,
            today: date | None = None, writer: str = "library") -> Memory:
        """Create ``<type>_<slug>.md`` (never overwriting) and add its line to MEMORY.md;
        every text is redacted first (``writes/redact.py``), the file name included;
        refused by the layer's caps like ``write``; ``writer`` (cli, mcp, …) is who the
        change log names."""
        self.require_directory()
        from .writes.redact import redact  # its patterns are compiled on the first write

        name, description, body = (redact(t).text for t in (name, description, body))
        tags, aliases = ([redact(t).text for t in ts] for ts in (tags, aliases))
        file = self.new_file_name(type, name, file)
        fields = {
            "name": name.strip() or None,
            "description": " ".join(description.split()),
            "type": type,
            "tags": list(tags),
            "aliases": list(aliases),
            "updated": today or date.today(),
        }
        refuse_long_fields(file, name, description)
        from .files.edit import render_new  # ruamel.yaml is only needed to write
        from .writes.guard import add_index_line  # the guard's create adds it so too

        data = render_new(fields, body).encode("utf-8")
        self.check_size(file, data)
        check_body(self.caps, file, len(body.encode("utf-8")))
        line = indexfile.format_entry(name.strip() or file[:-3], file, description)
        with self.locked():
            self._refuse_existing(file)
            refuse_if_full(self.caps, self, file)
            self.read_index()  # an unreadable MEMORY.md is refused before the file is made
            atomic_write(self.directory / file, data, create=True)
            add_index_line(self, file, line)  # no memory without its index line
            changelog.record_write(self.state_dir, file, "new", writer=writer, reason=None,
                                   replaced=None, written=data)
        return self.get(file)

    def remember(self, *, type: str, title: str, body: str, description: str | None = None,
                 when: str | None = None, tags: Sequence[str] | None = None,
                 aliases: Sequence[str] | None = None, distinct: bool = False,
                 writer: str = "library", reason: str | None = None,
                 today: date | None = None) -> RememberResult:
        """Save ``title``: update the memory that already has it (same ``when``), or
        create one; a title only similar writes nothing (``writes/remember.py``)."""
        from .writes.remember import remember

        return remember(self, type=type, title=title, body=body, description=description,
                        when=when, tags=tags, aliases=aliases, distinct=distinct,
                        writer=writer, reason=reason, today=today)

    def new_file_name(self, type: str, name: str, file: str | None = None) -> str:
        """The file ``new`` would create: ``file``, or ``<type>_<slug>.md`` from ``name``."""
        if type not in TYPES:
            raise InvalidName(type, f"type must be one of {', '.join(TYPES)}")
        from .writes.redact import refuse_secret_name  # a name is shown everywhere: no secret

        return refuse_secret_name(check_new_name(with_suffix(file) if file else
                                                 file_name_for(type, name), self.reserved))

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


    def index_hook(self, file: str) -> str | None:
        """The hook of ``file``'s MEMORY.md line ("" if it has none), None if unindexed."""
        return indexfile.hook_of(self.read_index()[0], file, self.twins(file))

    def set_index_hook(self, file: str, hook: str) -> bool:
        """Give ``file``'s MEMORY.md line(s) ``hook`` — after its description changed;
        False when no line points at it or the hook already reads so."""
        with self.locked():
            twins = self.twins(file)
            return self.update_index(lambda text: indexfile.set_hook(text, file, hook,
                                                                     twins)) is not None
