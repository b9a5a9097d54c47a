"""Many memories archived at once: each file moved as ``archive_memory`` moves it, and
MEMORY.md edited once for all of them.

A consolidation run's first pass over an old folder can archive thousands of memories;
one at a time, each rewrote a 10,000-line MEMORY.md (and rescanned ``archive/``), so
2,500 archives took minutes. Here one intent record names the batch (at most
``BATCH_FILES`` files, so the record stays small): a process killed mid-way leaves
files moved and MEMORY.md not yet edited, and ``recover`` finishes exactly that — the
lines of the files that did move are removed and logged, the others were never touched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

from ..errors import (
    InvalidArgument,
    MemoryLocked,
    MemoryNotFound,
    NameCollision,
    SagememError,
    StaleRevision,
)
from ..files import indexfile
from ..files.paths import check_name, lstat_regular, name_key, with_suffix
from ..store import MemoryStore
from ..writes import changelog
from . import archive_log, journal
from .archive import move_file
from .archive_log import ArchiveEvent
from .locks import locked_names

BATCH_FILES = 200
"""Files per intent record: ~250 bytes each keeps it well under the journal's 64 KiB."""


@dataclass(frozen=True)
class ArchiveItem:
    """One memory to archive, why, and (optionally) the revision it must still be at."""

    file: str
    reason: str
    expected_revision: str | None = None


def archive_many(store: MemoryStore, items: Sequence[ArchiveItem], *, by: str = "library",
                 run_id: str | None = None, now: datetime | None = None
                 ) -> list[SagememError | None]:
    """Archive every item that can be, each refused alone as ``archive_memory`` would
    refuse it (missing, locked, moved on, its name taken in archive/); one answer per
    item, in order: None when it was archived, else the refusal. Raises only when
    MEMORY.md cannot be edited (every move of that batch is then put back)."""
    when = now or datetime.now(timezone.utc)
    answers: list[SagememError | None] = [None] * len(items)
    store.require_directory()
    with store.locked():
        journal.require_none_pending(store.state_dir)
        taken = _archive_keys(store)
        locked = locked_names(store)
        ready: list[tuple[int, ArchiveEvent]] = []
        for number, item in enumerate(items):
            try:
                file = _checked(store, item, locked, taken)
            except SagememError as exc:
                answers[number] = exc
                continue
            ready.append((number, archive_log.event("archive", file, item.reason.strip(), by,
                                                    when)))
        for start in range(0, len(ready), BATCH_FILES):
            for number, problem in _batch(store, ready[start:start + BATCH_FILES], run_id,
                                          taken):
                answers[number] = problem
    store.notice_change()
    return answers


def _archive_keys(store: MemoryStore) -> set[str]:
    folder = store.folder(archived=True)
    return {name_key(name) for name in store.files(archived=True)} if folder.is_dir() else set()


def _checked(store: MemoryStore, item: ArchiveItem, locked: frozenset[str],
             taken: set[str]) -> str:
    """The on-disk name of ``item``'s memory, or the refusal archive_memory would give."""
    if not item.reason.strip():
        raise InvalidArgument("reason", "archiving needs one (it is recorded in "
                                        "archive.jsonl)")
    wanted = check_name(with_suffix(item.file), store.reserved)
    file = store.existing_name(wanted)
    if file is None:
        raise MemoryNotFound(wanted, store.directory)
    lstat_regular(store.directory / file)
    if item.expected_revision is not None:
        actual = store.get(file).revision
        if not actual.startswith(item.expected_revision):
            raise StaleRevision(file, item.expected_revision, actual)
    if name_key(file) in locked:
        raise MemoryLocked(file, "archive")
    if name_key(file) in taken:
        raise NameCollision(file, store.folder(archived=True))
    return file


def _batch(store: MemoryStore, batch: list[tuple[int, ArchiveEvent]], run_id: str | None,
           taken: set[str]) -> list[tuple[int, SagememError | None]]:
    """Move one batch under one intent, then edit MEMORY.md once and log each move."""
    events = [event for _, event in batch]
    intent = journal.begin(store.state_dir, "archive_batch",
                           {"events": json.dumps([asdict(e) for e in events]),
                            "file": f"{len(events)} memories"})
    answers: list[tuple[int, SagememError | None]] = []
    moved: list[ArchiveEvent] = []
    for number, event in batch:
        try:
            ok = move_file(store, event.file, into_archive=True)
        except SagememError as exc:
            answers.append((number, exc))
            continue
        if not ok:
            answers.append((number, NameCollision(event.file, store.folder(archived=True))))
            continue
        taken.add(name_key(event.file))
        moved.append(event)
        answers.append((number, None))
    try:
        drop_index_lines(store, [e.file for e in moved])
    except SagememError:
        for event in moved:  # put back: the batch's refusal says nothing changed
            move_file(store, event.file, into_archive=False)
        journal.finish(store.state_dir, intent)
        raise
    log_moves(store, moved, run_id)
    journal.finish(store.state_dir, intent)
    return answers


def drop_index_lines(store: MemoryStore, files: Sequence[str]) -> bool:
    """Remove the MEMORY.md lines of ``files`` in one edit; True if MEMORY.md changed."""
    if not files:
        return False
    twins = {file: store.twins(file) for file in files}
    return store.update_index(lambda text: indexfile.remove_entries_of(text, twins)) is not None


def log_moves(store: MemoryStore, moved: Sequence[ArchiveEvent], run_id: str | None,
              *, once: bool = False) -> None:
    """The archive log's line and the change log's line of each move (``once``: unless
    the archive log already holds it — ``recover`` finishing a killed batch)."""
    held = set(archive_log.read_log(store.state_dir)[0]) if once else set()
    for event in moved:
        if event in held:
            continue
        archive_log.append(store.state_dir, event)
        changelog.record_move(store.state_dir, store.folder(archived=True) / event.file,
                              "archive", writer=event.by, reason=event.reason, run=run_id)
