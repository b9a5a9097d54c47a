"""Renaming a memory: its file and its MEMORY.md line(s) move together, never overwriting.

A rename is a move inside the folder, so it follows the archive's rules (``archive.py``):
the target name must be free (compared ignoring case and Unicode form, as every name
is), the move is a hard link then an unlink so a name taken meanwhile is never
replaced, a symlink or device is never moved, and a locked memory keeps its name (its
lock is held by name: renaming it would quietly unlock it). The file moves and its
index lines are retargeted under one hold of the store lock; if the index cannot be
changed the file is moved back, so no index line is left dangling.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import (
    MemoryLocked,
    MemoryNotFound,
    MoveIncomplete,
    NameCollision,
    SagememError,
    WriteFailed,
)
from ..files import indexfile
from ..files.paths import check_name, check_new_name, lstat_regular, name_key, with_suffix
from ..store import MemoryStore
from ..writes import changelog
from .archive import move_without_overwrite
from .locks import locked_names


@dataclass(frozen=True)
class Renamed:
    """What a rename did: ``file`` became ``new_file``; ``index_changed`` says whether a
    MEMORY.md line was retargeted."""

    file: str
    new_file: str
    index_changed: bool


def rename_memory(store: MemoryStore, name: str, new_name: str, *, writer: str = "library"
                  ) -> Renamed:
    """Rename the live memory ``name`` to ``new_name`` and retarget its MEMORY.md lines.

    Raises MemoryNotFound, MemoryLocked (action ``rename``), NameCollision when
    ``new_name`` is taken (also by ``name`` itself in another case), InvalidName for a
    name the rules refuse; nothing changes then.
    """
    store.require_directory()
    wanted = check_name(with_suffix(name), store.reserved)
    from ..writes.redact import refuse_secret_name  # a file name cannot be redacted

    target = refuse_secret_name(check_new_name(with_suffix(new_name), store.reserved))
    with store.locked():
        file = store.existing_name(wanted)
        if file is None:
            raise MemoryNotFound(wanted, store.directory)
        lstat_regular(store.directory / file)  # never move a symlink or a device
        if name_key(file) in locked_names(store):
            raise MemoryLocked(file, "rename")
        if store.existing_name(target) is not None:
            raise NameCollision(target, store.directory)
        store.read_index()  # an unreadable MEMORY.md is refused before anything moves
        twins = store.twins(file)  # a case twin's own line stays its own
        _move(store, file, target)
        try:
            update = store.update_index(
                lambda text: indexfile.retarget_entries(text, file, target, twins))
        except SagememError as exc:
            _move_back(store, file, target, exc)
            raise
        finally:
            store.notice_change()
        changelog.record_move(store.state_dir, store.directory / target, "rename",
                              writer=writer, reason=None, renamed_from=file)
    return Renamed(file, target, update is not None)


def _move(store: MemoryStore, file: str, target: str) -> None:
    try:
        move_without_overwrite(store.directory / file, store.directory / target)
    except FileExistsError:
        raise NameCollision(target, store.directory) from None
    except OSError as exc:
        raise WriteFailed(store.directory / target, exc.strerror or str(exc)) from exc


def _move_back(store: MemoryStore, file: str, target: str, cause: SagememError) -> None:
    """Undo the move after ``cause``; if that fails too, say where the file is."""
    try:
        move_without_overwrite(store.directory / target, store.directory / file)
    except OSError as exc:
        raise MoveIncomplete(target, store.directory, f"{cause}; it could not be renamed "
                             f"back to {file} ({exc.strerror or exc})") from cause
