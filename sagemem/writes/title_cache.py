"""Every live memory's titles, for the near-duplicate check, without parsing 10,000 files.

``sagemem new`` (and the memory tool's ``create``) refuse a title close to an existing
memory's (``remember.refuse_near_duplicate``). Parsing every file's frontmatter for that
made ``new`` at 10,000 memories take 2.4 s against 0.3 s with ``--distinct``. So each
memory's ``TitleCard`` (``close_titles.py``: name, former names, description, ``when``,
``invalid_at``, and their words) is kept in ``<state>/titles.json``, keyed by what a
change to the file changes: its name, size, ``mtime_ns``, ``ctime_ns`` and inode. One
directory scan and an ``lstat`` of each file find what changed; only those are read.

Never trusted blindly:

- a file whose key differs (an editor's save keeping the size still moves ``mtime``; a
  file replaced by one of the same size and mtime has another inode or ``ctime``) is
  read again; a file changed within ``RACY_SECONDS`` of the scan is read every time and
  not cached, as git does with its index: a second write in the same clock tick would
  keep every key;
- a cache that cannot be read, is a symlink, is over ``MAX_CACHE_BYTES``, is not the
  JSON this module writes, or was made by another ``similar.WORDS_VERSION`` is ignored
  and rebuilt; an entry of the wrong shape is read again. It is JSON, never a pickle:
  a hostile state file can cost time, bounded by its size, not run code;
- it is written only into an existing state directory that is not a link, atomically
  (a temporary file and a rename, ``files/atomic.py``), and a failure to write it costs
  only the next run's time.
"""

from __future__ import annotations

import json
import os
import stat
import time
from contextlib import suppress
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from ..errors import SagememError
from ..files.atomic import atomic_write
from ..files.memory import parse
from ..files.paths import read_regular, safe_read
from .close_titles import TitleCard, card_of
from .similar import WORDS_VERSION

CACHE_FILE = "titles.json"
FORMAT = 1
MAX_CACHE_BYTES = 64 << 20
"""A cache of 10,000 memories is about 3 MB; one past 64 MiB was not written here, and
reading it would cost a hostile state directory's owner seconds, so it is ignored."""
RACY_SECONDS = 2.0
"""A file modified this recently is not cached: mtime and ctime have a clock tick's
resolution (2 s on FAT), and an edit in the tick of the scan could keep every key."""

REWRITE_AFTER = 32
"""Files read again before the cache is rewritten: rewriting 10,000 entries (about 6 MB)
costs more than reading 32 files, and each ``new`` adds one (the entries dropped with
their files wait for the next rewrite; they match no file, so they are never used)."""

Key = list[int]
"""size, mtime_ns, ctime_ns, inode: a list, as the cache's JSON gives it back."""


class Folder(Protocol):
    """What the cache needs of a store (``MemoryFolder`` is one): ``writes`` sits below
    the store, so it names what it uses."""

    directory: Path
    state_dir: Path
    max_bytes: int

    def files(self, archived: bool = False) -> list[str]: ...


def live_cards(store: Folder, today: date) -> tuple[TitleCard, ...]:
    """The cards of the store's live top-level memories (not past ``invalid_at``), in the
    order ``store.list`` gives them; a file that cannot be read is left out, as the
    listing reports it rather than listing it."""
    names = store.files()
    path = store.state_dir / CACHE_FILE
    cached = _load(path)
    now_ns = time.time_ns()
    fresh: dict[str, list[Any]] = {}
    cards: list[TitleCard] = []
    keys = _keys(store.directory, names)
    read_again = 0
    for name in names:  # the hot loop of a ``new``: 10,000 turns, kept plain
        key, entry = keys.get(name), cached.get(name)
        card = _decode(name, entry[4]) if entry is not None and entry[:4] == key else None
        if card is None:
            card, entry = _read(store, name, key, now_ns)
            read_again += entry is not None
        if card is not None and (card.invalid_at is None or card.invalid_at > today):
            cards.append(card)
        if entry is not None:
            fresh[name] = entry
    if read_again >= min(REWRITE_AFTER, len(fresh)) and read_again:
        _save(store.state_dir, path, fresh)
    return tuple(cards)


def _read(store: Folder, name: str, key: Key | None, now_ns: int
          ) -> tuple[TitleCard | None, list[Any] | None]:
    """``name``'s card read from the file, and the entry to cache (None: not cached —
    a file changed in the last ``RACY_SECONDS``); (None, None) for a file the listing
    reports rather than lists."""
    if key is None:
        return None, None
    try:
        read = safe_read(store.directory, name, max_bytes=store.max_bytes)
    except SagememError:  # the listing reports it; a card never stands in for it
        return None, None
    memory = parse(read.data, name)
    card = card_of(memory, memory.invalid_at)
    racy = now_ns - key[1] < RACY_SECONDS * 1e9  # key[1]: mtime_ns
    return card, None if racy else [*key, _encode(card)]


def _keys(directory: Path, names: list[str]) -> dict[str, Key]:
    """What a change to each file changes (size, mtime, ctime, inode), from ``lstat``
    through one directory descriptor; a link or anything not a regular file has none
    (the safe read refuses those)."""
    keys: dict[str, Key] = {}
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return keys
    try:
        for name in names:
            try:
                st = os.lstat(name, dir_fd=fd)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                keys[name] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    finally:
        os.close(fd)
    return keys


# -- the cache file --------------------------------------------------------------------

def _load(path: Path) -> dict[str, list[Any]]:
    """The entries of the cache at ``path``; {} for one missing, unreadable, a link, too
    large, malformed or of another words version — it is then rebuilt."""
    try:
        data = json.loads(read_regular(path, MAX_CACHE_BYTES).data)
    except (SagememError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or data.get("words") != WORDS_VERSION or not isinstance(data.get("files"), dict):
        return {}
    return {name: entry for name, entry in data["files"].items()
            if isinstance(entry, list) and len(entry) == 5}


def _save(state_dir: Path, path: Path, entries: dict[str, list[Any]]) -> None:
    """Write the cache, only into a state directory that exists and is no link, and only
    over a regular file; a failure is not the caller's: the cache is a shortcut."""
    if not state_dir.is_dir() or os.path.islink(state_dir) or not _replaceable(path):
        return
    data = json.dumps({"format": FORMAT, "words": WORDS_VERSION, "files": entries},
                      ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with suppress(SagememError):
        atomic_write(path, data, create=False)


def _replaceable(path: Path) -> bool:
    """Missing or a regular file: a link or anything else in its place is left alone."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _encode(card: TitleCard) -> list[Any]:
    """A card as one flat list (JSON reads and ``_decode`` checks it fastest so): name,
    description, when, invalid_at, the number of former names, them, each title's
    ``Text`` (squashed, words), then ``both``'s (two nulls without a description)."""
    both = card.both or (None, None)
    return [card.name, card.description, card.when,
            card.invalid_at.isoformat() if card.invalid_at else None,
            len(card.former_names), *card.former_names,
            *(part for text in card.titles for part in text), *both]


def _decode(file: str, raw: Any) -> TitleCard | None:
    """A card from its cache entry, or None when the entry is not one this module wrote
    (then the file is read again): every value is checked, so a hostile entry costs a
    read of the file, never an exception further on."""
    if type(raw) is not list or len(raw) < 9 or type(raw[4]) is not int:
        return None
    count = raw[4]
    if count < 0 or len(raw) != 9 + 3 * count or type(raw[1]) is not str \
            or set(map(type, raw[5:-2])) != {str} \
            or not {*map(type, (raw[0], raw[2], raw[3]))} <= _OPTIONAL \
            or (raw[-2] is None) != (raw[-1] is None) or not {*map(type, raw[-2:])} <= _OPTIONAL:
        return None
    try:
        expires = date.fromisoformat(raw[3]) if raw[3] is not None else None
    except ValueError:
        return None
    texts = iter(raw[5 + count:-2])
    return TitleCard(file, raw[0], raw[1], raw[2], tuple(raw[5:5 + count]), expires,
                     tuple(zip(texts, texts, strict=False)),
                     (raw[-2], raw[-1]) if raw[-2] is not None else None)


_OPTIONAL = {str, type(None)}
