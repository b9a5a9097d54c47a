"""A change to one of the host's files, shown as a diff and applied with a way back.

Before sagemem first changes a file it keeps the file's bytes beside it
(``<file>.sagemem-backup``; none when it creates the file) and records what it wrote
(``<file>.sagemem-installed``: whether it created the file, the sha256 of its bytes).
Both sit beside the file on purpose: the host's files belong to no memory folder, and a
person looking at ``settings.json`` sees where its old bytes are. ``--undo`` puts the
backup back byte for byte while the file is still what sagemem wrote.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import HostConfigError, ReadOnlyFile
from ..files.atomic import atomic_write, make_folder, remove_quietly

BACKUP_SUFFIX = ".sagemem-backup"
RECORD_SUFFIX = ".sagemem-installed"


@dataclass(frozen=True)
class FileChange:
    """One file's bytes before (None: absent) and after (None: removed) a change."""

    path: Path
    before: bytes | None
    after: bytes | None
    what: str

    def diff(self) -> str:
        """A unified diff of the change, as ``--dry-run`` prints it."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, "/dev/null" if self.before is None
                                     else str(self.path), "/dev/null" if self.after is None
                                     else str(self.path))
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class Record:
    """What sagemem last wrote to a file it changed."""

    created: bool
    sha256: str


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_record(path: Path) -> Record | None:
    """The record beside ``path``; None when sagemem never changed it (or it is unreadable:
    then undo falls back to taking our entries out, which needs no record)."""
    try:
        data = json.loads(record_path(path).read_text("utf-8"))
        return Record(bool(data["created"]), str(data["sha256"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_backup(path: Path) -> bytes | None:
    try:
        return backup_path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HostConfigError(backup_path(path), f"cannot be read ({exc.strerror})") from exc


def apply_install(changes: Iterable[FileChange]) -> None:
    """Write each change: first the backup (once: a second install keeps the original),
    then the record, then the file — so a crash at any point leaves a way back. A file
    that cannot be written, or that changed since the plan read it (Claude Code rewrites
    ``~/.claude.json`` while a confirm prompt waits), is refused before any is touched."""
    changes = list(changes)
    for change in changes:
        _check_writable(change.path)
        _unchanged(change)
    for change in changes:
        assert change.after is not None
        make_folder(change.path.parent)
        record = read_record(change.path)
        if record is None and change.before is not None:
            _write(backup_path(change.path), change.before, like=change.path)
        created = record.created if record is not None else change.before is None
        _write_record(change.path, Record(created, sha256(change.after) or ""))
        _write_checked(change, change.after)


def apply_undo(changes: Iterable[FileChange], forget: Iterable[Path]) -> None:
    """Write (or remove) each undone file, then drop the backups and records of every
    file in ``forget``: undo is finished with them. As for install, a file changed since
    the plan read it stops the undo before any file is touched."""
    changes = list(changes)
    for change in changes:
        _unchanged(change)
    for change in changes:
        if change.after is None:
            _remove_checked(change)
        else:
            _write_checked(change, change.after)
    for path in forget:
        remove_quietly(backup_path(path))
        remove_quietly(record_path(path))


def _check_writable(path: Path) -> None:
    """A read-only file is its owner's "do not change this": refused up front, so no
    backup or half of an install is left behind."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not mode & stat.S_IWUSR:
        raise ReadOnlyFile(path, stat.S_IMODE(mode))


def _write_checked(change: FileChange, data: bytes) -> None:
    """Replace the file, unless it changed since it was read (Claude Code rewrites
    ``~/.claude.json`` while it runs): then nothing is written and the user runs again."""
    atomic_write(change.path, data, create=False,
                 before_replace=lambda: _unchanged(change))


def _remove_checked(change: FileChange) -> None:
    _unchanged(change)
    try:
        change.path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise HostConfigError(change.path, f"cannot be removed ({exc.strerror})") from exc


def _unchanged(change: FileChange) -> None:
    try:
        now: bytes | None = change.path.read_bytes()
    except FileNotFoundError:
        now = None
    if now != change.before:
        raise HostConfigError(change.path, "changed while sagemem was editing it (is Claude "
                                           "Code running?); run the command again")


def _write(path: Path, data: bytes, *, like: Path) -> None:
    """A backup, as private as the file it copies (``~/.claude.json`` may hold tokens)."""
    atomic_write(path, data, create=False)
    os.chmod(path, like.stat().st_mode & 0o777)


def _write_record(path: Path, record: Record) -> None:
    text = json.dumps({"version": 1, "created": record.created, "sha256": record.sha256})
    atomic_write(record_path(path), (text + "\n").encode(), create=False)
