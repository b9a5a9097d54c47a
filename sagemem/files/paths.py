"""The one safe read path, and the rules for memory file names (checking and making them).

Everything that reads a memory file goes through ``safe_read``: name rules (which keep
the path a direct child of the directory), then refusal of symlinks and non-regular
files, then the size
gate (from ``lstat``, so an oversized file is never read in), then a re-check of the
file's identity after reading, so a file swapped in between check and read is
refused instead of returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    FileChangedDuringRead,
    FileTooLarge,
    InvalidName,
    MemoryNotFound,
    ReservedName,
    SagememError,
    SettingsError,
    UnreadableFile,
    UnsafeFile,
)

MAX_FILE_BYTES = 512 * 1024
INDEX_FILE = "MEMORY.md"
STATE_DIR_NAME = ".sage-mem"
"""Beside the memory folder: sage-mem's layout, ``<parent>/.sage-mem``."""
# The index is a list of one line per memory (~150 bytes each): 10,000 memories pass the
# per-memory limit, so it has its own, still bounded, gate.
MAX_INDEX_BYTES = 16 * 1024 * 1024
BUILTIN_RESERVED = (INDEX_FILE, "session-log.md")
RESERVED_FILE = "reserved.json"
MAX_NAME_BYTES = 255
MAX_SLUG_CHARS = 60
SWAP_RETRIES = 5
"""Reads of a file that another writer keeps replacing, before giving up."""
# O_NONBLOCK: a FIFO swapped in after the lstat check must not hang the reader.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


# Windows opens these as devices whatever follows the first dot (``CON.md``, ``nul.md``,
# ``com1.notes.md``): such a file cannot be opened, copied or deleted there, so a folder
# synced or cloned onto Windows breaks. Compared as names are (``name_key``), so a
# superscript ``COM¹`` (NFKC: ``com1``), also a device on Windows, is one too.
WINDOWS_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10)])
DEVICE_NAME_REASON = ("a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any "
                      "extension), where such a file cannot be opened or deleted; choose "
                      "another name")


def name_key(name: str) -> str:
    """The form names are compared in: NFKC-normalised and case-folded (Unicode's
    NFKC_Casefold, near enough), so ``USER_PETS.md``, the full-width ``ｕｓｅｒ_pets.md``
    and a decomposed macOS spelling are all the one name ``user_pets.md``."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def is_device_name(name: str) -> bool:
    """Whether Windows takes ``name`` for a device (``CON.md``, ``nul.md``, ``LPT1``)."""
    return name_key(name).split(".", 1)[0].rstrip(" ") in WINDOWS_DEVICE_NAMES


def same_name_in(directory: Path, name: str) -> list[str]:
    """The entries of ``directory`` that are the name ``name`` (``name_key``), as spelt
    on disk, sorted; OSError when the directory cannot be listed."""
    key = name_key(name)
    with os.scandir(directory) as entries:
        return sorted(e.name for e in entries if name_key(e.name) == key)


def reserved_names(state_dir: Path | None) -> frozenset[str]:
    """Built-in reserved names plus those listed in ``<state>/reserved.json``, as keys."""
    names: list[str] = list(BUILTIN_RESERVED)
    if state_dir is not None:
        names.extend(_read_reserved_file(state_dir / RESERVED_FILE))
    return frozenset(name_key(n) for n in names)


def _read_reserved_file(path: Path) -> list[str]:
    raw = read_state_file(path)
    if raw is None:
        return []
    try:
        data = json.loads(raw.decode("utf-8-sig") or "[]")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        raise SettingsError(path, "must hold a JSON list of file names")
    return data


def read_state_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """A small file of the state directory (settings.json, reserved.json) read through the
    same checks as a memory, or None when it does not exist. Problems are SettingsError."""
    try:
        return read_regular(path, max_bytes).data
    except MemoryNotFound:
        return None
    except SagememError as exc:
        raise SettingsError(path, str(exc)) from exc


def with_suffix(name: str) -> str:
    """Let people say ``user_prefs`` for ``user_prefs.md``."""
    if not name.strip() or name_key(name).endswith(".md"):
        return name
    return name + ".md"


def check_name(name: str, reserved: Iterable[str] = ()) -> str:
    """Return ``name`` unchanged if it may be a memory's file name, else raise InvalidName.

    The name is not normalised here: a file saved in decomposed Unicode (macOS) must be
    read under its own on-disk spelling. Comparisons go through ``name_key``.
    """
    if not name.strip():
        raise InvalidName(name, "empty name")
    if "\x00" in name:  # not a separator, but no file system takes it in a name
        raise InvalidName(name, "no NUL character (\\0): no file system takes it in a name")
    if "/" in name or "\\" in name:
        raise InvalidName(name, "no path separators: memories are top-level files")
    if name.startswith("."):
        raise InvalidName(name, "no leading dot")
    if not name.isprintable():  # control, format (e.g. bidi override) and separator chars
        raise InvalidName(name, "no control characters")
    if not name_key(name).endswith(".md"):
        raise InvalidName(name, "a memory file name ends in .md")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidName(name, f"longer than {MAX_NAME_BYTES} bytes")
    key = name_key(name)
    for reserved_key in reserved:
        if key == reserved_key:
            raise ReservedName(name, reserved_key)
    return name


def check_new_name(name: str, reserved: Iterable[str] = ()) -> str:
    """``check_name`` for a file about to be made (a create, the target of a rename): also
    no Windows device name. Every create path of every surface passes here, so each
    refuses alike. A file of such a name made by hand still reads, so it can be renamed."""
    check_name(name, reserved)
    if is_device_name(name):
        raise InvalidName(name, DEVICE_NAME_REASON)
    return name


def new_file_refusal(path: Path) -> str | None:
    """Why no file may be made at ``path`` — a Windows device name, or a name a file of
    its folder already has in another case or Unicode form — said to whoever writes it
    (an agent host's own Write tool, past sagemem's creates); None when it may."""
    if is_device_name(path.name):
        return f"sagemem: {path.name} is {DEVICE_NAME_REASON}."
    try:
        taken = same_name_in(path.parent, path.name)
    except OSError:
        return None
    if not taken:
        return None
    return (f"sagemem: {path.name} is the name of {taken[0]} in another case or Unicode "
            f"form, and two such files are one name; read {taken[0]} and change it "
            "instead.")


def slugify(text: str) -> str:
    """A file-name slug: lower-case words joined by ``_``; CJK characters are kept."""
    words = re.sub(r"[^\w]+", "_", unicodedata.normalize("NFKC", text).casefold())
    return words.strip("_")[:MAX_SLUG_CHARS].rstrip("_")


def file_name_for(type_: str, name: str) -> str:
    """The conventional file name ``<type>_<slug>.md`` for a new memory."""
    slug = slugify(name)
    if not slug:
        raise InvalidName(name, "gives no usable file name; pass an explicit file name (--file)")
    if slug.startswith(f"{type_}_"):
        slug = slug[len(type_) + 1:]
    return f"{type_}_{slug}.md"


@dataclass(frozen=True)
class FileRead:
    """The bytes of a file and the identity they were read under."""

    data: bytes
    mtime: float
    size: int


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def lstat_regular(path: Path) -> os.stat_result:
    """``lstat`` a path that must be a regular file and not a symlink."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise MemoryNotFound(path.name, path.parent) from None
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from exc
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(path, "it is a symlink; sagemem never follows links")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(path, "not a regular file")
    return st


def safe_read(directory: Path, name: str, *, max_bytes: int = MAX_FILE_BYTES,
              reserved: Iterable[str] = ()) -> FileRead:
    """Read one top-level file of ``directory`` through every safety check."""
    check_name(name, reserved)
    # The name rules (no separators, no leading dot) keep the path a direct child of
    # ``directory``; lstat + O_NOFOLLOW refuse a link as that last component.
    return read_regular(directory / name, max_bytes)


def read_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> FileRead:
    """Read a regular, non-symlink file, size-gated first and identity-checked after.

    A file swapped while it was read is read again, every check included: another
    writer's atomic replace lands between a reader's ``lstat`` and ``open`` now and then,
    and that reader wants the new file, not an error. A file still changing after
    SWAP_RETRIES reads is FileChangedDuringRead, so a busy or hostile file costs
    bounded time."""
    for attempt in range(SWAP_RETRIES - 1):
        try:
            return _read_once(path, max_bytes)
        except FileChangedDuringRead:
            time.sleep(0.001 * (attempt + 1))
    return _read_once(path, max_bytes)


def _read_once(path: Path, max_bytes: int) -> FileRead:
    before = lstat_regular(path)
    if before.st_size > max_bytes:
        raise FileTooLarge(path.name, before.st_size, max_bytes)
    data = _read_checked(path, before, max_bytes)
    return FileRead(data=data, mtime=before.st_mtime, size=len(data))


def read_chunks(path: Path, chunk_size: int = 1 << 16) -> Iterator[bytes]:
    """A regular, non-symlink file of any size, chunk by chunk (bounded memory): for
    hashing and for a snapshot's exact copy, which must not stop at the size gate.
    A file replaced while it is read raises FileChangedDuringRead after its last chunk."""
    before = lstat_regular(path)
    fd = _open_checked(path, before)
    try:
        while chunk := os.read(fd, chunk_size):
            yield chunk
        after = os.fstat(fd)
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)
    if _identity(after) != _identity(before):
        raise FileChangedDuringRead(path)


def file_sha256(path: Path) -> str:
    """The sha256 of a regular file of any size, read in chunks (bounded memory); a
    symlink or device is UnsafeFile, a missing file MemoryNotFound."""
    digest = hashlib.sha256()
    for chunk in read_chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def _open_checked(path: Path, before: os.stat_result) -> int:
    """Open without following a link, and only the file ``before`` describes."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno in (getattr(os, "ELOOP", -1), getattr(os, "EMLINK", -1)):
            raise UnsafeFile(path, "it became a symlink; sagemem never follows links") from exc
        raise UnreadableFile(path, exc.strerror or str(exc)) from exc
    try:
        if _identity(os.fstat(fd)) != _identity(before):
            raise FileChangedDuringRead(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_checked(path: Path, before: os.stat_result, max_bytes: int) -> bytes:
    fd = _open_checked(path, before)
    try:
        data = _read_at_most(fd, max_bytes + 1)
        after = os.fstat(fd)
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileTooLarge(path.name, len(data), max_bytes)
    if _identity(after) != _identity(before) or len(data) != before.st_size:
        raise FileChangedDuringRead(path)
    try:
        if _identity(os.lstat(path)) != _identity(before):
            raise FileChangedDuringRead(path)
    except FileNotFoundError:
        raise FileChangedDuringRead(path) from None
    return data


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
