"""Atomic file writes: a crash at any instant leaves the old file or the new one.

New bytes go to a uniquely named temporary file in the same directory, are fsync'd, and
replace the target with ``os.replace`` — or, to create, are hard-linked into place,
which fails rather than overwrite. Any OS failure leaves the old file untouched and no
temporary file behind.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from .errors import MemoryExists, WriteFailed

TMP_SUFFIX = ".sagemem-tmp"
"""Every temporary file sagemem writes is ``.<name>.<random>.sagemem-tmp`` (the audit
reports leftovers of an interrupted write by this pattern)."""


def atomic_write(path: Path, data: bytes, *, create: bool,
                 before_replace: Callable[[], None] | None = None) -> None:
    """Write ``data`` to ``path`` through a fsync'd temporary file in the same directory.

    ``create=True`` refuses to overwrite (MemoryExists); otherwise the file is replaced
    atomically. Any OS failure leaves the old file untouched and no temporary behind.
    ``before_replace`` runs once the bytes are synced, just before the rename; whatever
    it raises cancels the write.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TMP_SUFFIX}")
    try:
        _write_synced(tmp, data, _mode_of(path))
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        if before_replace is not None:
            before_replace()
        if create:
            _link_new(tmp, path)
        else:
            os.replace(tmp, path)
        _sync_directory(path.parent)
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from exc
    finally:
        remove_quietly(tmp)


def _mode_of(path: Path) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return 0o644


def _write_synced(tmp: Path, data: bytes, mode: int) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        remove_quietly(tmp)
        raise
    os.close(fd)


def _link_new(tmp: Path, path: Path) -> None:
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise MemoryExists(path.name) from None
    except OSError:  # a file system without hard links: the store lock still serialises us
        if os.path.lexists(path):
            raise MemoryExists(path.name) from None
        os.replace(tmp, path)


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the data itself is synced
    finally:
        os.close(fd)


def remove_quietly(path: Path) -> None:
    """Best-effort cleanup: on a read-only or vanished file system there is nothing to undo."""
    with suppress(OSError):
        os.unlink(path)
