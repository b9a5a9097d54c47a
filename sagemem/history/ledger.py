"""The access ledger: how often, and when, each memory was injected, read and used.

``<state>/access.json`` keeps the three kinds apart — ``injected`` (put in front of the
model unasked), ``read`` (opened through ``read``), ``use`` (adopted: ``sagemem use``) —
and never folds them into one score: it serves diagnostics and archiving, not ranking.

Updates hold ``<state>/locks/access.lock`` and rewrite the file atomically, so counts
from concurrent processes all land. ``record`` edits the JSON in place, so keys a newer
sagemem added survive an older one's update. A ledger that cannot be read is moved aside
with a one-line warning and counting starts afresh; a mere ``load`` never moves it.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import FileChangedDuringRead, MemoryNotFound, SagememError, WriteFailed
from ..files.atomic import atomic_write
from ..files.paths import read_regular

ACCESS_FILE = "access.json"
LOCK_FILE = "locks/access.lock"
LOCK_TIMEOUT_SECONDS = 10.0
KINDS = ("injected", "read", "use")
LEDGER_VERSION = 1
MAX_LEDGER_BYTES = 8 * 1024 * 1024
"""Far above the 512 KiB of a memory: tens of thousands of memories fit."""
READ_ATTEMPTS = 3
SHOWN_NAMES = 5


@dataclass(frozen=True)
class Access:
    """One kind of access to one memory: how many times, and the last (ISO 8601, UTC)."""

    count: int = 0
    last: str | None = None


NEVER = Access()


@dataclass(frozen=True)
class MemoryAccess:
    """The three kinds of access to one memory, side by side, never summed."""

    file: str
    injected: Access = NEVER
    read: Access = NEVER
    use: Access = NEVER


def load(state_dir: Path) -> tuple[dict[str, MemoryAccess], list[str]]:
    """The ledger by file name, and warnings; read-only, so an unreadable ledger is
    reported (empty) but left where it is for the next ``record`` to move aside."""
    raw = _read_raw(state_dir / ACCESS_FILE)
    if isinstance(raw, str):
        return {}, [f"{ACCESS_FILE} is unreadable ({raw}); it will be moved aside and "
                    "started afresh on the next update"]
    entries = {file: _entry(file, value) for file, value in raw["memories"].items()}
    skipped = sorted(file for file, entry in entries.items() if entry is None)
    return ({f: e for f, e in entries.items() if e is not None},
            [_skipped_warning(skipped)] if skipped else [])


def _skipped_warning(files: list[str]) -> str:
    shown = ", ".join(files[:SHOWN_NAMES]) + (", …" if len(files) > SHOWN_NAMES else "")
    noun = "entry" if len(files) == 1 else "entries"
    return f"{ACCESS_FILE}: skipped {len(files)} malformed {noun} ({shown})"


def record(state_dir: Path, kind: str, files: Iterable[str], now: datetime) -> list[str]:
    """Count one ``kind`` access to each of ``files`` (a name listed twice counts once)
    at ``now`` (timezone-aware); returns warnings. Safe across processes."""
    if kind not in KINDS:
        raise ValueError(f"unknown access kind {kind!r}; one of {', '.join(KINDS)}")
    stamp, names = _stamp(now), list(dict.fromkeys(files))
    if not names:
        return []
    path = state_dir / ACCESS_FILE
    with _locked(state_dir):
        raw, warnings = _read_for_update(path, now)
        for name in names:
            _count(raw["memories"], name, kind, stamp)
        atomic_write(path, _dumps(raw), create=False)
    return warnings


def record_if_possible(state_dir: Path, kind: str, files: Iterable[str],
                       now: datetime) -> list[str]:
    """``record`` for a reading path (inject, read): a ledger that cannot be written
    (read-only or full state directory) costs one warning, never the read itself."""
    try:
        return record(state_dir, kind, files, now)
    except WriteFailed as exc:
        return [f"the access ledger was not updated ({exc.path}: {exc.reason})"]


def parse_stamp(stamp: str | None) -> datetime | None:
    """A ledger time (``2026-08-02T10:00:00Z``) as an aware UTC datetime; None when it is
    missing or malformed (a hand-edited ledger costs that entry, nothing more)."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _stamp(now: datetime) -> str:
    # A naive datetime is ambiguous (local? UTC?); a wrong "last" would mislead archiving.
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _count(memories: dict[str, Any], name: str, kind: str, stamp: str) -> None:
    """Add one to ``memories[name][kind]``, keeping any keys this version does not know."""
    if not isinstance(memories.get(name), dict):
        memories[name] = {}
    entry = memories[name]
    value = entry.get(kind)
    old = _access(value) or NEVER
    entry[kind] = {**(value if isinstance(value, dict) else {}),
                   "count": old.count + 1, "last": stamp}


def _read_for_update(path: Path, now: datetime) -> tuple[dict[str, Any], list[str]]:
    raw = _read_raw(path)
    if not isinstance(raw, str):
        return raw, []
    aside = _move_aside(path, now)
    return _empty(), [f"{ACCESS_FILE} was unreadable ({raw}); moved it to {aside.name} "
                      "and started afresh"]


def _move_aside(path: Path, now: datetime) -> Path:
    """Keep the unreadable ledger for a person to look at; never overwrite an earlier one."""
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    if os.path.lexists(aside):
        aside = aside.with_name(f"{aside.name}-{secrets.token_hex(3)}")
    try:
        os.replace(path, aside)  # renames a symlink itself; its target is never touched
    except OSError as exc:
        raise WriteFailed(path, f"unreadable and could not be moved aside: {exc.strerror}") \
            from exc
    return aside


def _read_raw(path: Path) -> dict[str, Any] | str:
    """The ledger's JSON object, or why it cannot be used; a missing file is empty."""
    problem = ""
    for _ in range(READ_ATTEMPTS):
        try:
            return _decode(read_regular(path, MAX_LEDGER_BYTES).data)
        except MemoryNotFound:
            return _empty()
        except FileChangedDuringRead as exc:  # a concurrent record replaced it: read again
            problem = str(exc)
        except SagememError as exc:  # a symlink, a FIFO, oversize, permission denied
            return _one_line(str(exc))
    return _one_line(problem)


def _decode(data: bytes) -> dict[str, Any] | str:
    try:
        raw = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        return _one_line(f"not valid JSON: {exc}")
    if not isinstance(raw, dict) or not _is_version(raw.get("version")):
        return f"not a version-{LEDGER_VERSION} ledger object"
    raw.setdefault("memories", {})
    return raw if isinstance(raw["memories"], dict) else '"memories" is not an object'


def _is_version(value: object) -> bool:
    return type(value) is int and value == LEDGER_VERSION  # not True, which == 1


def _entry(file: str, value: object) -> MemoryAccess | None:
    """One memory's accesses, or None when its value is not an object of kinds; a kind
    of the wrong shape counts as never seen, the way ``record`` will treat it."""
    if not isinstance(value, dict):
        return None
    kinds = {kind: _access(value.get(kind)) or NEVER for kind in KINDS}
    return MemoryAccess(file, **kinds)


def _access(value: object) -> Access | None:
    if not isinstance(value, dict):
        return None
    count, last = value.get("count"), value.get("last")
    if type(count) is not int or count < 0 or not isinstance(last, (str, type(None))):
        return None
    return Access(count, last)


def _empty() -> dict[str, Any]:
    return {"version": LEDGER_VERSION, "memories": {}}


def _dumps(raw: dict[str, Any]) -> bytes:
    """Stable bytes: memories sorted by name, so the file diffs well."""
    raw["memories"] = dict(sorted(raw["memories"].items()))
    return (json.dumps(raw, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _one_line(message: str) -> str:
    return " ".join(message.split())


@contextmanager
def _locked(state_dir: Path) -> Iterator[None]:
    """The ledger's own lock, so counting never waits behind a memory write."""
    path = state_dir / LOCK_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(path.parent, exc.strerror or str(exc)) from exc
    from filelock import FileLock  # imported here: `load` never needs it

    lock = FileLock(str(path), timeout=LOCK_TIMEOUT_SECONDS)
    try:
        lock.acquire()
    except TimeoutError:  # filelock's Timeout is a TimeoutError
        raise WriteFailed(path, "another sagemem process holds the ledger lock; try again") \
            from None
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        yield
    finally:
        lock.release()
