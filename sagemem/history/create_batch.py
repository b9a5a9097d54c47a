"""Many new memories created at once: each checked as ``MemoryStore.write(name, text,
None)`` checks one, and MEMORY.md edited once per batch of them.

An import into a fresh folder made one guarded create per memory, and each read, parsed
and rewrote MEMORY.md, listed the folder for the name check, recounted the layer and
made four fsyncs: 1,000 memories took 16.5 s, 3,000 took 140 s. Here, under one lock,
the folder is listed, the layer counted and MEMORY.md read once, and kept up to date as
the batch goes; a batch's files are made durable by one ``os.sync()``
(``atomic.create_files``) and MEMORY.md gets all their lines in one guarded edit.

One intent record names each batch (its files and their revisions, at most
``INTENT_BUDGET`` bytes: about 500 memories): a process killed mid-way leaves some files
made and MEMORY.md not yet edited, and ``recover`` finishes exactly that — each file of
the record that is there with the bytes recorded gets its MEMORY.md line and its
change-log line, once. Nothing is ever overwritten: a name the folder (or the batch)
already has is refused for that item alone.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import IndexTooLarge, SagememError, UnreadableFile, WriteFailed
from ..files import indexfile
from ..files.atomic import create_files, remove_quietly, remove_temp_files
from ..files.memory import Memory
from ..files.paths import INDEX_FILE, MAX_INDEX_BYTES, check_new_name, name_key, with_suffix
from ..files.plural import counted
from ..search.progress import Progress
from ..store import MemoryStore
from ..writes import changelog
from ..writes.caps import body_bytes, check_body, count_memories, refuse_if_full
from ..writes.conflicts import WRITERS
from ..writes.guard import current_memory, refuse_create
from . import journal

INTENT_BUDGET = 48 * 1024
"""Bytes of file names and revisions per intent record: the journal reads no record
past 64 KiB (``MAX_INTENT_BYTES``), and a record's other fields are small."""


@dataclass(frozen=True)
class Created:
    """An item created: its place in the items, the memory as written, and whether
    secrets were redacted from the text given."""

    index: int
    memory: Memory
    redacted: bool


@dataclass(frozen=True)
class Refused:
    """An item not created: its place in the items, its name as given, and the refusal
    a single create would have raised (``MemoryExists``, ``LayerFull``, …)."""

    index: int
    file: str
    error: SagememError


@dataclass(frozen=True)
class CreateManyReport:
    """What ``create_many`` did with each item, in the items' order; ``warnings``: the
    change log could not be written (the memories were created all the same)."""

    created: tuple[Created, ...]
    refused: tuple[Refused, ...]
    warnings: tuple[str, ...] = ()

PROGRESS_EVERY = 100  # items between two progress reports: a bar moves, the loop does not wait


def create_many(store: MemoryStore, items: Sequence[tuple[str, str]], *,
                writer: str = "library", reason: str | None = None,
                progress: Progress | None = None) -> CreateManyReport:
    """Create a new memory of each ``(file, text)`` that can be, under one store lock,
    each item refused alone as ``store.write(file, text, None)`` would refuse it (the
    refusal of a taken name or of merge markers recorded as a conflict first). Raises
    only before anything is written: ``UnfinishedOperation`` while the journal holds an
    intent (``sagemem recover``), or a folder that cannot be listed. ``progress`` is
    told of the items checked and written (``"importing"``)."""
    if writer not in WRITERS:
        raise ValueError(f"writer must be one of {', '.join(WRITERS)}")
    from ..writes.redact import redact_reason

    store.require_directory()
    run = _Run(store, writer, redact_reason(reason))
    given = [run.prepare(number, file, text) for number, (file, text) in enumerate(items)]
    with store.locked():
        journal.require_none_pending(store.state_dir)
        run.look()
        for done, item in enumerate(given, 1):
            run.add(item)
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == len(given)):
                progress(done, len(given), "importing")
        run.flush()
    if run.created:
        store.notice_change()
    return run.report()


@dataclass(frozen=True)
class _Item:
    """An item past the checks that need no lock: its checked name and redacted text."""

    index: int
    file: str
    text: str
    redacted: bool


@dataclass(frozen=True)
class _Ready:
    """An item past every check, about to be written."""

    item: _Item
    memory: Memory
    data: bytes
    line: str
    index_bytes: int
    """What its line adds to MEMORY.md (0: a line already points at its name)."""


class _Run:
    """One ``create_many``: the folder's names, count and MEMORY.md as the batch left
    them, the batch being gathered, and the answers so far."""

    def __init__(self, store: MemoryStore, writer: str, reason: str | None) -> None:
        self.store, self.writer, self.reason = store, writer, reason
        self.created: list[Created] = []
        self.refused: list[Refused] = []
        self.warnings: list[str] = []
        self.batch: list[_Ready] = []
        self.batch_bytes = 0
        self.taken: set[str] = set()
        self.planned: dict[str, Memory] = {}
        self.count = 0
        self.index: tuple[str, set[str]] = ("", set())
        self.index_bytes = 0
        self.newline = "\n"
        self.index_error: SagememError | None = None

    def prepare(self, number: int, name: str, text: str) -> _Item | Refused:
        """The checks ``MemoryStore.write`` makes before the lock, in its order."""
        from ..writes.redact import redact_memory, refuse_secret_name

        try:
            redacted = redact_memory(text).text
            wanted = with_suffix(name)
            self.store.check_size(wanted, redacted.encode("utf-8"))
            check_body(self.store.caps, wanted, body_bytes(redacted))
            file = refuse_secret_name(check_new_name(wanted, self.store.reserved))
        except SagememError as exc:
            return Refused(number, name, exc)
        return _Item(number, file, redacted, redacted != text)

    def look(self) -> None:
        """The folder's names, the layer's count and MEMORY.md, read once (under the lock)."""
        try:
            with os.scandir(self.store.directory) as entries:
                self.taken = {name_key(e.name) for e in entries}
        except OSError as exc:
            raise UnreadableFile(self.store.directory, exc.strerror or str(exc)) from exc
        try:
            hard = self.store.caps.count_caps()[1]
        except SagememError:
            hard = 0  # each create is refused with the setting (refuse_if_full)
        self.count = count_memories(self.store) if hard else 0
        try:
            text = self.store.read_index()[0]
        except SagememError as exc:  # every create refused, as the guard refuses each
            self.index_error = exc
            return
        self._seen_index((text, indexfile.target_keys(text)))

    def _seen_index(self, index: tuple[str, set[str]]) -> None:
        """MEMORY.md as read or written last: its text, the names its lines link, its
        line ending and size, kept so that no item scans it again."""
        self.index = index
        self.newline = "\r\n" if "\r\n" in index[0] else "\n"
        self.index_bytes = len(index[0].encode("utf-8"))

    def add(self, item: _Item | Refused) -> None:
        if isinstance(item, Refused):
            self.refused.append(item)
            return
        try:
            ready = self._checked(item)
        except SagememError as exc:
            self.refused.append(Refused(item.index, item.file, exc))
            return
        cost = len(json.dumps(json.dumps([ready.memory.file, ready.memory.revision])))
        if self.batch and self.batch_bytes + cost > INTENT_BUDGET:
            self.flush()
        self._take(ready, +1)
        self.batch.append(ready)
        self.batch_bytes += cost

    def _checked(self, item: _Item) -> _Ready:
        """The checks the guard makes under the lock, in its order, against the folder
        as the batch leaves it."""
        key = name_key(item.file)
        current = None
        if key in self.taken:
            current = self.planned.get(key) or current_memory(self.store, item.file)
        memory = refuse_create(self.store, item.file, item.text, current,
                               reason=self.reason, writer=self.writer)
        refuse_if_full(self.store.caps, self.store, memory.file, self.count)
        if self.index_error is not None:
            raise self.index_error
        line = indexfile.format_entry(memory.title, memory.file, memory.description)
        added = 0 if key in self.index[1] else len((line + self.newline).encode("utf-8"))
        if self.index_bytes + added > MAX_INDEX_BYTES:
            raise IndexTooLarge(INDEX_FILE, self.index_bytes + added, MAX_INDEX_BYTES)
        return _Ready(item, memory, item.text.encode("utf-8"), line, added)

    def _take(self, ready: _Ready, sign: int) -> None:
        """Count ``ready`` in (+1) or out again (-1: it could not be written)."""
        key = name_key(ready.memory.file)
        if sign > 0:
            self.taken.add(key)
            self.planned[key] = ready.memory
        else:
            self.taken.discard(key)
            self.planned.pop(key, None)
        self.count += sign
        self.index_bytes += sign * ready.index_bytes

    def flush(self) -> None:
        """Write the gathered batch under one intent: its files, then its MEMORY.md
        lines in one edit, then its change-log lines in one append."""
        batch, self.batch, self.batch_bytes = self.batch, [], 0
        if not batch:
            return
        try:
            intent = journal.begin(self.store.state_dir, "create_batch", {
                "file": counted(len(batch), "new memory", "new memories"),
                "files": json.dumps([[r.memory.file, r.memory.revision] for r in batch]),
                "writer": self.writer, "reason": self.reason or ""})
        except SagememError as exc:  # not begun: nothing may be written
            for ready in batch:
                self._refuse(ready, exc)
            return
        made = self._write(batch)
        try:
            self._seen_index(add_index_lines(
                self.store, [(r.memory.file, r.line) for r in made], self.index))
        except SagememError as exc:  # no memory without its line: the files go again
            for ready in made:
                remove_quietly(self.store.directory / ready.memory.file)
                self._refuse(ready, _not_kept(exc, ready.memory.file))
            made = []
        self._done(made)
        try:
            journal.finish(self.store.state_dir, intent)
        except SagememError as exc:  # the work is done; recover only removes the intent
            self.warnings.append(str(exc))

    def _write(self, batch: list[_Ready]) -> list[_Ready]:
        """Create the batch's files; the ones made (a refused one is counted out)."""
        answers = create_files(self.store.directory,
                               [(r.memory.file, r.data) for r in batch])
        made = []
        for ready, problem in zip(batch, answers, strict=True):
            if problem is None:
                made.append(ready)
            else:
                self._refuse(ready, self._after_link(ready, problem))
        return made

    def _after_link(self, ready: _Ready, problem: SagememError) -> SagememError:
        """A name made outside the lock since the listing: refused as the guard refuses
        it, the conflict recorded, once the file there is read."""
        try:
            current = current_memory(self.store, ready.memory.file)
            if current is not None:
                refuse_create(self.store, ready.memory.file, ready.item.text, current,
                              reason=self.reason, writer=self.writer)
        except SagememError as exc:
            return exc
        return problem

    def _refuse(self, ready: _Ready, error: SagememError) -> None:
        self._take(ready, -1)
        self.refused.append(Refused(ready.item.index, ready.memory.file, error))

    def _done(self, made: list[_Ready]) -> None:
        for ready in made:
            self.created.append(Created(ready.item.index, _with_mtime(self.store, ready.memory),
                                        ready.item.redacted))
        warning = log_creates(self.store, [(r.memory.file, r.data) for r in made],
                              writer=self.writer, reason=self.reason)
        if warning is not None:
            self.warnings.append(warning)

    def report(self) -> CreateManyReport:
        return CreateManyReport(tuple(sorted(self.created, key=lambda c: c.index)),
                                tuple(sorted(self.refused, key=lambda r: r.index)),
                                tuple(self.warnings))


def _not_kept(exc: SagememError, file: str) -> SagememError:
    """``add_index_line``'s words for a create whose MEMORY.md line could not be added."""
    if isinstance(exc, WriteFailed):
        return WriteFailed(exc.path, f"{exc.reason}; {file} was not kept")
    return exc


def _with_mtime(store: MemoryStore, memory: Memory) -> Memory:
    """The memory as ``store.write`` returns it: with the new file's mtime."""
    try:
        return replace(memory, mtime=os.stat(store.directory / memory.file).st_mtime)
    except OSError:
        return memory


def add_index_lines(store: MemoryStore, lines: Sequence[tuple[str, str]],
                    seen: tuple[str, set[str]] | None = None) -> tuple[str, set[str]]:
    """Give each new file its MEMORY.md line (``(file, line)``, in order) in one guarded
    edit, unless a line already points at it — ``add_index_line``'s rule. ``seen``: a
    text of MEMORY.md and the names its lines link, reused while MEMORY.md still reads
    so; returns the same of the text now. The caller holds the store lock."""
    now: list[tuple[str, set[str]]] = []

    def edit(text: str) -> str:
        keys = seen[1] if seen is not None and text == seen[0] else indexfile.target_keys(text)
        new = [(name_key(file), line) for file, line in lines if name_key(file) not in keys]
        edited = indexfile.add_entries(text, [line for _, line in new])
        now.append((edited, keys | {key for key, _ in new}))
        return edited

    store.update_index(edit)
    return now[-1]


def log_creates(store: MemoryStore, files: Sequence[tuple[str, bytes]], *, writer: str,
                reason: str | None) -> str | None:
    """The change log's ``create`` line of each ``(file, bytes written)``, in one
    append; a warning when it could not be written."""
    return changelog.record_all(store.state_dir, [
        changelog.entry(file, "create", writer=writer, reason=reason, before=None,
                        after=changelog.facts_of(data)) for file, data in files])


def finish_killed(store: MemoryStore, files: Sequence[tuple[str, str]], *, writer: str,
                  reason: str | None) -> tuple[int, bool]:
    """``recover``'s half of a batch killed mid-way (``files``: its record's names and
    revisions): each file that is there with the bytes recorded gets its MEMORY.md line
    and its change-log line, unless it has them. How many were there, and whether
    MEMORY.md changed. The temporary files it left (each batch writes all of its
    files before it links the first) are removed."""
    if files:
        names = "|".join(re.escape(file) for file, _ in files)
        remove_temp_files(store.directory, f"(?:{names})")  # grouped: only whole names
    made = [m for m in (_made(store, file, revision) for file, revision in files)
            if m is not None]
    before = store.read_index()[0]
    after = add_index_lines(store, [(m.file, indexfile.format_entry(
        m.title, m.file, m.description)) for m in made])[0]
    logged = {(e.file, e.after) for e in changelog.read(store.state_dir).entries
              if e.op == "create"}
    log_creates(store, [(m.file, m.text.encode("utf-8")) for m in made
                        if (m.file, m.revision) not in logged], writer=writer, reason=reason)
    return len(made), after != before


def _made(store: MemoryStore, file: str, revision: str) -> Memory | None:
    """The memory ``file`` if the batch made it: there, spelt so, with its bytes."""
    try:
        if store.existing_name(file) != file:
            return None
        memory = store.get(file)
    except SagememError:
        return None
    return memory if memory.revision == revision else None
