"""Contradictions as injection sees them: which memories an open contradiction record
keeps out, and which records are moot because one side is no longer a live memory.

The records themselves (``contradict`` makes one) live in the conflict queue
(``conflicts.py``); this module only reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SagememError
from ..files.paths import check_name, read_regular
from .conflicts import CONFLICTS_DIR, MAX_RECORDS, Conflict

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder


def open_contradictions(state_dir: Path) -> list[tuple[str, str]]:
    """Pairs of memory files in open contradiction records; unreadable records are skipped."""
    directory = state_dir / CONFLICTS_DIR
    if not directory.is_dir() or directory.is_symlink():
        return []
    pairs = []
    for path in sorted(directory.glob("*.json"))[:MAX_RECORDS]:
        pair = _contradiction(path)
        if pair is not None:
            pairs.append(pair)
    return pairs


def _contradiction(path: Path) -> tuple[str, str] | None:
    try:
        record = json.loads(read_regular(path).data.decode("utf-8"))
    except (SagememError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != "contradiction":
        return None
    if record.get("status", "open") != "open":
        return None
    names = record.get("memories") or record.get("files")
    if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names):
        return names[0], names[1]
    return None


def disputed(store: MemoryFolder) -> set[str]:
    """The memories an open contradiction keeps out of injection: both sides of each one
    whose two sides are still live memories. Archiving the other side once left the live
    one out for good, though nothing disputed it any more."""
    return {name for pair in disputed_pairs(store) for name in pair}


def disputed_pairs(store: MemoryFolder) -> list[tuple[str, str]]:
    """The open contradictions whose two sides are still live memories, one pair each:
    what the status card counts (one record, not its two memories)."""
    return [pair for pair in open_contradictions(store.state_dir) if not gone_sides(store, pair)]


def moot_sides(store: MemoryFolder, record: Conflict) -> tuple[str, ...]:
    """The sides of an open contradiction that are no longer live memories; empty for
    any other record. A moot record stays open, and is shown as moot."""
    if record.kind != "contradiction" or record.status != "open":
        return ()
    return gone_sides(store, record.memories)


def gone_sides(store: MemoryFolder, memories: Iterable[str]) -> tuple[str, ...]:
    """Which of ``memories`` are not in the folder's top level (archived, deleted, or no
    memory name at all). None when the folder itself is missing: a wrong ``--dir`` must
    not call every contradiction moot."""
    if not store.directory.is_dir():
        return ()
    return tuple(name for name in memories if not _live(store, name))


def _live(store: MemoryFolder, name: str) -> bool:
    try:  # a record is untrusted JSON: its names only ever name a top-level file
        return store.existing_name(check_name(name, store.reserved)) is not None
    except SagememError:
        return False
