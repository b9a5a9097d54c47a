"""The archive: ``archive/`` inside the memory directory, where memories go instead of
being deleted — and come back from.

Moving never overwrites: a memory whose name is already taken at the destination is
refused (``NameCollision``), because the file already there may be the only copy of
something. A move and its MEMORY.md line change happen under one hold of the store
lock; if the line cannot be changed the move is undone, so no archived memory is left
with a dangling index line. Every archive, restore and purge is recorded in
``<state>/archive.jsonl`` (see ``archive_log``). Locked memories (``locks``) are never
archived or purged. Before the first move an intent record (``journal``) names the
operation, and it is removed after the log line: a process killed in between leaves it
for ``recover`` to finish.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import (
    MemoryLocked,
    MemoryNotFound,
    MoveIncomplete,
    NameCollision,
    NotArchived,
    SagememError,
    StaleRevision,
    UnsafeFile,
    WriteFailed,
)
from ..files import indexfile
from ..files.atomic import make_folder, temp_name
from ..files.memory import Memory
from ..files.paths import check_name, lstat_regular, name_key, with_suffix
from ..store import IndexUpdate, MemoryStore
from ..writes import changelog
from . import archive_log, journal
from .archive_log import ArchiveEvent
from .locks import LOCKS_FILE as LOCKS_FILE
from .locks import locked_names as locked_names
from .locks import read_locks as read_locks


@dataclass(frozen=True)
class ArchiveResult:
    """What an archive, restore or purge did (or, with ``dry_run``, would do):
    ``index_changed`` says whether a MEMORY.md line was removed or added."""

    event: ArchiveEvent
    index_changed: bool
    dry_run: bool = False

    @property
    def file(self) -> str:
        return self.event.file


def archive_memory(store: MemoryStore, name: str, reason: str, *, by: str = "library",
                   now: datetime | None = None, dry_run: bool = False,
                   run_id: str | None = None,
                   expected_revision: str | None = None) -> ArchiveResult:
    """Move a memory into ``archive/`` and drop its MEMORY.md line; ``reason`` is required.
    With ``expected_revision`` (whole, or a prefix) a memory that moved on since is
    refused (StaleRevision), checked under the lock: a planned archive of an edited
    memory must not carry the edit away unseen.

    Raises MemoryNotFound, MemoryLocked (``locked: …``), NameCollision when archive/
    already holds that name; nothing changes then.
    """
    if not reason.strip():
        raise ValueError("archiving needs a reason (it is recorded in archive.jsonl)")
    record_time = now or datetime.now(timezone.utc)
    wanted = _checked(store, name)
    with store.locked(dry_run=dry_run):
        file = store.existing_name(wanted)
        if file is None:
            raise MemoryNotFound(wanted, store.directory, archived=_archived(store, wanted))
        lstat_regular(store.directory / file)  # never move a symlink or a device
        if expected_revision is not None:
            _refuse_moved_on(store, file, expected_revision)
        _refuse_locked(store, file, "archive")
        _refuse_taken(store, file, into_archive=True)
        record = archive_log.event("archive", file, reason.strip(), by, record_time)

        twins = store.twins(file)

        def edit(text: str) -> str:
            return indexfile.remove_entries(text, file, twins)

        changed = _changes(store, edit)
        if not dry_run:
            changed = _move_with_index(store, record, into_archive=True, edit=edit,
                                       run_id=run_id)
    return ArchiveResult(record, changed, dry_run)


def restore_memory(store: MemoryStore, name: str, *, reason: str = "", by: str = "library",
                   now: datetime | None = None, dry_run: bool = False) -> ArchiveResult:
    """Bring an archived memory back to the top level and give it its MEMORY.md line
    again (title and description from the file), unless a line already points at it.

    Raises NotArchived when it is live (at the top level, not in archive/),
    MemoryNotFound when it is nowhere, NameCollision when the top level already has
    that name; nothing changes then.
    """
    record_time = now or datetime.now(timezone.utc)
    wanted = _checked(store, name)
    with store.locked(dry_run=dry_run):
        file = store.existing_name(wanted, archived=True)
        if file is None and store.existing_name(wanted) is not None:
            raise NotArchived(wanted, store.archive_dir, live=True, action="restore")
        if file is None:
            raise MemoryNotFound(wanted, store.folder(archived=True))
        lstat_regular(store.archive_dir / file)
        _refuse_taken(store, file, into_archive=False)
        record = archive_log.event("restore", file, reason.strip(), by, record_time)
        memory = _archived_memory(store, file)
        twins = store.twins(file)

        def edit(text: str) -> str:
            return with_index_line(text, file, memory, twins)

        changed = _changes(store, edit)
        if not dry_run:
            changed = _move_with_index(store, record, into_archive=False, edit=edit)
    return ArchiveResult(record, changed, dry_run)


def purge_memory(store: MemoryStore, name: str, *, reason: str = "", by: str = "library",
                 now: datetime | None = None, dry_run: bool = False) -> ArchiveResult:
    """Delete an archived memory for good: irreversible, so only files in ``archive/``
    and never a locked one. Its archive.jsonl line is what remains of it.

    Raises NotArchived (also when it is a live memory), MemoryLocked.
    """
    record_time = now or datetime.now(timezone.utc)
    wanted = _checked(store, name)
    with store.locked(dry_run=dry_run):
        file = store.existing_name(wanted, archived=True)
        if file is None:
            raise NotArchived(wanted, store.archive_dir,
                              live=store.existing_name(wanted) is not None)
        _refuse_locked(store, file, "purge")
        lstat_regular(store.archive_dir / file)  # a symlink or a device is never unlinked
        record = archive_log.event("purge", file, reason.strip(), by, record_time)
        if not dry_run:
            _delete_logged(store, record)
    return ArchiveResult(record, False, dry_run)


def _checked(store: MemoryStore, name: str) -> str:
    store.require_directory()
    return check_name(with_suffix(name), store.reserved)


def _archived(store: MemoryStore, name: str) -> bool:
    try:
        return store.existing_name(name, archived=True) is not None
    except UnsafeFile:
        return False


def _refuse_moved_on(store: MemoryStore, file: str, expected: str) -> None:
    actual = store.get(file).revision
    if not actual.startswith(expected):
        raise StaleRevision(file, expected, actual)


def _refuse_locked(store: MemoryStore, file: str, action: str) -> None:
    if name_key(file) in locked_names(store):
        raise MemoryLocked(file, action)


def _refuse_taken(store: MemoryStore, file: str, *, into_archive: bool) -> None:
    target = store.folder(archived=into_archive)
    if _taken(target, file):
        raise NameCollision(file, target)


def _archived_memory(store: MemoryStore, file: str) -> Memory | None:
    """The archived memory, for its index line; None when it cannot be read (too large,
    not UTF-8): it is restored all the same, with a line naming only the file."""
    try:
        return store.get(file, archived=True)
    except SagememError:
        return None


def with_index_line(text: str, file: str, memory: Memory | None,
                    twins: frozenset[str] = frozenset()) -> str:
    """``text`` with a line for ``file``, unless one already points at it."""
    if indexfile.has_entry(text, file, twins):
        return text
    title, hook = (memory.title, memory.description) if memory else (file[:-3], "")
    return indexfile.add_entry(text, indexfile.format_entry(title, file, hook))


def _changes(store: MemoryStore, edit: Callable[[str], str]) -> bool:
    """Whether ``edit`` would change MEMORY.md as it is now (an unreadable one is
    refused here, before anything moves)."""
    text = store.read_index()[0]
    return edit(text) != text


def _move_with_index(store: MemoryStore, record: ArchiveEvent, *, into_archive: bool,
                     edit: Callable[[str], str], run_id: str | None = None) -> bool:
    """Move the file, edit MEMORY.md (guarded: an editor's save since is never lost),
    append the log line; the caller holds the lock. A failure after the move puts
    everything back, or says exactly what is left. True if MEMORY.md changed."""
    intent = journal.begin(store.state_dir, record.action, asdict(record))
    try:
        moved = move_file(store, record.file, into_archive=into_archive)
    except SagememError:  # the move failed whole (see move_without_overwrite): no trace left
        journal.finish(store.state_dir, intent)
        raise
    if not moved:
        journal.finish(store.state_dir, intent)
        raise NameCollision(record.file, store.folder(archived=into_archive))
    update: IndexUpdate | None = None
    try:
        update = store.update_index(edit)
        archive_log.append(store.state_dir, record)
    except SagememError as exc:
        _undo(store, record.file, into_archive, update, exc)  # MoveIncomplete keeps the intent
        journal.finish(store.state_dir, intent)
        raise  # undone: the original error, whose message says nothing was changed
    finally:
        store.notice_change()  # a watching index must not trust its silence now
    changelog.record_move(store.state_dir, store.folder(archived=into_archive) / record.file,
                          record.action, writer=record.by, reason=record.reason, run=run_id)
    journal.finish(store.state_dir, intent)
    return update is not None


def _undo(store: MemoryStore, file: str, into_archive: bool, update: IndexUpdate | None,
          cause: SagememError) -> None:
    """Put MEMORY.md and the file back after ``cause``; if that fails too, raise
    MoveIncomplete naming what is left where."""
    problems = []
    if update is not None:
        try:
            store.undo_index_update(update)
        except (SagememError, OSError) as exc:
            problems.append(f"MEMORY.md could not be put back ({exc})")
    try:
        moved_back = move_file(store, file, into_archive=not into_archive)
        if not moved_back:
            problems.append("the move could not be undone (the name was taken meanwhile)")
    except SagememError as exc:
        moved_back = False
        problems.append(f"the move could not be undone ({exc})")
    if problems:
        where = store.folder(archived=into_archive != moved_back)
        raise MoveIncomplete(file, where, f"{cause}; " + "; ".join(problems)) from cause


def _delete_logged(store: MemoryStore, record: ArchiveEvent) -> None:
    """Rename the file aside, log the purge, then unlink: a failed log puts the file back,
    so no memory disappears without its line in archive.jsonl."""
    source = store.archive_dir / record.file
    aside = source.with_name(temp_name(record.file))  # aside until its log line
    intent = journal.begin(store.state_dir, "purge", {**asdict(record), "aside": aside.name})
    try:
        os.rename(source, aside)
    except OSError as exc:
        journal.finish(store.state_dir, intent)
        raise WriteFailed(source, exc.strerror or str(exc)) from exc
    try:
        archive_log.append(store.state_dir, record)
    except SagememError as exc:
        try:
            os.rename(aside, source)
        except OSError as undo:  # the intent stays: ``recover`` finishes the purge
            raise MoveIncomplete(record.file, aside.parent, f"{exc}; it could not be put back "
                                 f"and is kept as {aside.name} ({undo.strerror or undo})"
                                 ) from exc
        journal.finish(store.state_dir, intent)
        raise
    gone = changelog.file_facts(aside)
    unlink_logged_purge(store, aside, record.file)
    changelog.record(store.state_dir, record.file, "purge", writer=record.by,
                     reason=record.reason, before=gone, after=None)
    journal.finish(store.state_dir, intent)


def unlink_logged_purge(store: MemoryStore, aside: Path, file: str) -> None:
    """The purge is logged: remove the renamed-aside file for good."""
    try:
        os.unlink(aside)
    except FileNotFoundError:
        return
    except OSError as exc:  # logged as purged and out of sight; the audit finds the leftover
        raise WriteFailed(aside, f"{exc.strerror or exc}; {file} is purged but this "
                                 "leftover could not be removed") from exc


def move_file(store: MemoryStore, file: str, *, into_archive: bool) -> bool:
    """Move ``file`` (its on-disk spelling) into ``archive/`` or back out of it.

    Returns False, moving nothing, when the destination already holds that name
    (compared ignoring case and Unicode form). The caller holds ``store.locked()``.
    """
    source_dir = store.folder(archived=not into_archive)
    target_dir = store.folder(archived=into_archive)
    source = source_dir / file
    lstat_regular(source)  # never move a symlink or a device
    if into_archive:
        make_folder(target_dir, parents=False)
    if _taken(target_dir, file):
        return False
    target = target_dir / file
    try:
        move_without_overwrite(source, target)
    except FileExistsError:
        return False
    except OSError as exc:
        raise WriteFailed(target, exc.strerror or str(exc)) from exc
    return True


def _taken(folder: Path, file: str) -> bool:
    key = name_key(file)
    try:
        with os.scandir(folder) as entries:
            return any(name_key(e.name) == key for e in entries)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise WriteFailed(folder, exc.strerror or str(exc)) from exc


def move_without_overwrite(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target`` unless that exists (FileExistsError): a hard link
    then an unlink, as the link fails if the name exists, where a rename would silently
    replace it. Without hard links, the store lock serialises us. All or nothing: when
    the source cannot be unlinked (an immutable folder), the new link is taken back."""
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(str(target)) from None
        os.rename(source, target)
        return
    try:
        os.unlink(source)
    except OSError:
        os.unlink(target)  # two names for one file would be a move half done
        raise
