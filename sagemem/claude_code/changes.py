"""A change to one of the host's files, shown as a diff and applied with a way back.

Before sagemem first changes a file it keeps the file's bytes (``<name>.sagemem-backup``;
none when it creates the file) and records what it wrote (``<name>.sagemem-installed``:
whether it created the file, the sha256 of its bytes, the hook objects it put there and
the folders it had to make). Both live in the scope's records folder,
``<scope>/.claude/sagemem-install/``, which ignores itself for git (a ``.gitignore`` of
``*``, as pytest's and mypy's caches do): a project's ``.claude/`` is committed by teams,
and a backup of one machine's file has no place in the repository. ``--undo`` puts the
backup back byte for byte while the file is still what sagemem wrote; otherwise it takes
out exactly the recorded hook objects (``owned.py``), never an entry it did not write.

Installs before the records folder kept both files beside the host file; they are read
there still and moved into the records folder on the next install or undo.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HostConfigError, ReadOnlyFile
from ..files.atomic import atomic_write, make_folder, remove_quietly

BACKUP_SUFFIX = ".sagemem-backup"
RECORD_SUFFIX = ".sagemem-installed"
RECORDS_DIR = "sagemem-install"
"""Under the scope's ``.claude/``: the backups and records of one scope's install."""
IGNORE_ALL = b"# sagemem install's backups and records: never committed\n*\n"


@dataclass(frozen=True)
class OwnedHook:
    """A hook object sagemem put in ``hooks.<event>``, exactly as written; ``new_group``:
    the group around it is sagemem's too (it goes when the hook goes)."""

    event: str
    hook: dict[str, Any]
    new_group: bool = True

    def as_json(self) -> dict[str, Any]:
        return {"event": self.event, "hook": self.hook, "new_group": self.new_group}


@dataclass(frozen=True)
class FileChange:
    """One file's bytes before (None: absent) and after (None: removed) a change, and
    (settings) the hook objects sagemem owns in it afterwards."""

    path: Path
    before: bytes | None
    after: bytes | None
    what: str
    hooks: tuple[OwnedHook, ...] = ()

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
    """What sagemem last wrote to a file it changed. ``hooks`` None: a record from before
    hook objects were recorded (``owned.legacy_hooks`` recognises what such an install
    wrote); ``dirs``: the folders it created, removed again by undo when empty."""

    created: bool
    sha256: str
    hooks: tuple[OwnedHook, ...] | None = ()
    dirs: tuple[str, ...] = field(default_factory=tuple)


def backup_path(path: Path, records: Path) -> Path:
    return records / (path.name + BACKUP_SUFFIX)


def record_path(path: Path, records: Path) -> Path:
    return records / (path.name + RECORD_SUFFIX)


def _legacy(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_record(path: Path, records: Path) -> Record | None:
    """The record of ``path``; None when sagemem never changed it (or it is unreadable:
    then undo takes out only what it can prove is ours, which needs no record)."""
    for where in (record_path(path, records), _legacy(path, RECORD_SUFFIX)):
        try:
            return _parse_record(json.loads(where.read_text("utf-8")))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None


def _parse_record(data: dict[str, Any]) -> Record:
    hooks = data.get("hooks")
    owned = None if hooks is None else tuple(
        OwnedHook(str(h["event"]), dict(h["hook"]), bool(h.get("new_group", True)))
        for h in hooks)
    return Record(bool(data["created"]), str(data["sha256"]), owned,
                  tuple(str(d) for d in data.get("dirs", ())))


def read_backup(path: Path, records: Path) -> bytes | None:
    for where in (backup_path(path, records), _legacy(path, BACKUP_SUFFIX)):
        try:
            return where.read_bytes()
        except (FileNotFoundError, NotADirectoryError):  # a file in a folder's place
            continue  # (``skills/sagemem``) holds no backup: undo must still run
        except OSError as exc:
            raise HostConfigError(where, f"cannot be read ({exc.strerror})") from exc
    return None


def apply_install(changes: Iterable[FileChange], records: Path) -> None:
    """Write each change: first the backup (once: a second install keeps the original),
    then the record, then the file — so a crash at any point leaves a way back. A file
    that cannot be written, or that changed since the plan read it (Claude Code rewrites
    ``~/.claude.json`` while a confirm prompt waits), is refused before any is touched."""
    changes = list(changes)
    _check_records_dir(records)
    for change in changes:
        _check_writable(change.path)
        _unchanged(change)
    for change in changes:
        assert change.after is not None
        _adopt_legacy(change.path, records)
        made = _make_records_dir(records) + _make_folders(change.path.parent)
        record = read_record(change.path, records)
        if record is None and change.before is not None and \
                read_backup(change.path, records) is None:  # a backup alone: the original
            _write(backup_path(change.path, records), change.before, like=change.path)
        created = record.created if record is not None else change.before is None
        dirs = tuple(dict.fromkeys((*(record.dirs if record else ()), *made)))
        _write_record(change.path, records,
                      Record(created, sha256(change.after) or "", change.hooks, dirs))
        _write_checked(change, change.after)


def apply_undo(changes: Iterable[FileChange], forget: Iterable[Path], records: Path) -> None:
    """Write (or remove) each undone file, then drop the backups and records of every
    file in ``forget`` (undo is finished with them) and the folders install made that are
    empty now. As for install, a file changed since the plan read it stops the undo
    before any file is touched."""
    changes, forget = list(changes), list(forget)
    _check_records_dir(records)
    for change in changes:
        _unchanged(change)
    dirs = [d for r in (read_record(p, records) for p in forget) if r is not None
            for d in r.dirs]
    for change in changes:
        if change.after is None:
            _remove_checked(change)
        else:
            _write_checked(change, change.after)
    for path in forget:
        for name in (backup_path(path, records), record_path(path, records),
                     _legacy(path, BACKUP_SUFFIX), _legacy(path, RECORD_SUFFIX)):
            remove_quietly(name)
    _remove_records_dir(records)
    for folder in sorted(set(dirs), key=lambda d: len(Path(d).parts), reverse=True):
        _remove_if_empty(Path(folder))


def _check_records_dir(records: Path) -> None:
    """A symlink in the records folder's place is refused: a backup written through it
    would land wherever it points."""
    if records.is_symlink():
        raise HostConfigError(records, "is a symlink; sagemem keeps its backups only in a "
                                       "real folder there (remove the link)")


def _make_folders(folder: Path) -> tuple[str, ...]:
    """``folder`` and its missing parents made; the ones made, outermost first."""
    if folder.is_dir():
        return ()  # a symlinked ~/.claude (dotfiles) is used, never remade
    missing: list[str] = []
    probe = folder
    while not probe.exists() and probe.parent != probe:
        missing.insert(0, str(probe))
        probe = probe.parent
    make_folder(folder)
    return tuple(missing)


def _make_records_dir(records: Path) -> tuple[str, ...]:
    """The records folder, made with its ``.gitignore`` the first time; the folders made
    (the records folder itself is removed by name, so it is not among them)."""
    if records.is_dir():
        return ()
    made = _make_folders(records.parent)
    make_folder(records, parents=False)
    atomic_write(records / ".gitignore", IGNORE_ALL, create=True)
    return made


def _remove_records_dir(records: Path) -> None:
    """The records folder out once it holds nothing but its ``.gitignore``."""
    try:
        left = sorted(p.name for p in records.iterdir())
    except OSError:
        return
    if left in ([], [".gitignore"]):
        remove_quietly(records / ".gitignore")
        _remove_if_empty(records)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (the user's things), or gone: left
        folder.rmdir()


def _adopt_legacy(path: Path, records: Path) -> None:
    """An older install's backup and record, beside the file, moved into the records
    folder (where undo and the next install look first)."""
    old_record = _legacy(path, RECORD_SUFFIX)
    if not old_record.is_file() or record_path(path, records).exists():
        return
    _make_records_dir(records)
    old_backup = _legacy(path, BACKUP_SUFFIX)
    if old_backup.is_file():
        os.replace(old_backup, backup_path(path, records))
    os.replace(old_record, record_path(path, records))


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


def _write_record(path: Path, records: Path, record: Record) -> None:
    data = {"version": 2, "created": record.created, "sha256": record.sha256,
            "hooks": [h.as_json() for h in record.hooks or ()], "dirs": list(record.dirs)}
    atomic_write(record_path(path, records), (json.dumps(data) + "\n").encode(),
                 create=False)
