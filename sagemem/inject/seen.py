"""What the model has seen: per session, each file and the revision it last saw, and when.

Claude Code's write gate (``claude_code/gate.py``) refuses to let the model write over a
file that changed since it last read it, so the model's reads record the revision they
returned here, each under its own session: the host's Read tool under the hook's
session id, ``sagemem read``/``search`` and the MCP server only under the session they
are told (``SAGE_MEM_SESSION``). A session is vouched for by its own records alone: a
shared record that any shell or any other agent's server wrote would let one session's
stale write through on the strength of what someone else read (issue 20, item 2), so a
reader that knows no session records nothing. The records of a session live in
``<state>/sessions/seen/<id>.json``, beside the session files and under the same safe
ids (``session.session_file``); they are written atomically and hold at most
``MAX_SEEN_FILES`` files (the oldest go first). An unreadable record file starts
afresh: the gate then knows nothing, so it allows, which is the side a gate must fail on.

Files are keyed by ``name_key`` of their folder-relative path (``user_role.md``,
``archive/old.md``, ``MEMORY.md``), as sagemem compares names everywhere.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import MemoryNotFound, SagememError
from ..files.atomic import atomic_write, make_folder
from ..files.paths import name_key, read_regular
from .session import session_file

SEEN_DIR = "seen"
MAX_SEEN_FILES = 2000
"""Files one session remembers; past it the oldest records go. A session that read more
than this many memory files forgets the first ones, and a write to those is allowed."""
MAX_SEEN_BYTES = 1024 * 1024  # 2,000 records take ~300 kB; a bigger file is not ours
LOCK_WAIT_SECONDS = 1.0
_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Seen:
    """A session's record of one file (none: never seen), and what got in the way."""

    revision: str | None = None
    at: datetime | None = None
    problems: tuple[str, ...] = ()


def seen_file(state_dir: Path, session_id: str) -> Path:
    """Where a session's records live: ``sessions/seen/``, named as its session file."""
    session = session_file(state_dir, session_id)
    return session.parent / SEEN_DIR / session.name


def seen_key(file: str) -> str:
    """The key of a folder-relative file name: the form sagemem compares names in."""
    return name_key(file.removeprefix("./"))


def record_seen(state_dir: Path, session_id: str, revisions: Mapping[str, str], *,
                now: datetime | None = None) -> list[str]:
    """Record that the model of ``session_id`` saw each file at its revision. Returns
    warnings; never raises for a state directory that is read-only, full or broken."""
    if not revisions:
        return []
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="microseconds")
    path = seen_file(state_dir, session_id)
    try:
        _make_seen_dir(state_dir, path)
        with _locked(path):
            records, problem = _load(path)
            for file, revision in revisions.items():
                records[seen_key(file)] = {"revision": revision, "at": stamp}
            _save(path, _newest(records))
    except (OSError, SagememError, ValueError) as exc:  # ValueError: a name not encodable
        return [f"what the model has seen was not recorded ({path}): {exc}"]
    return [problem] if problem else []


def seen_revision(state_dir: Path, session_id: str, file: str) -> str | None:
    """The revision of ``file`` the model of ``session_id`` last saw, by that session's
    own records only (no other session's, and no shared one, vouches for it)."""
    return latest_seen(state_dir, session_id, file).revision


def latest_seen(state_dir: Path, session_id: str, file: str) -> Seen:
    """``seen_revision`` with the record's time, and why the record file
    could not be read, if it could not (the gate logs it)."""
    records, problem = _load(seen_file(state_dir, session_id))
    problems = (problem,) if problem else ()
    record = records.get(seen_key(file))
    if record is None:
        return Seen(problems=problems)
    return Seen(str(record["revision"]), _time_of(record), problems)


def _load(path: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The records in ``path`` (none if it is missing), and why it was unreadable."""
    try:
        data = json.loads(read_regular(path, MAX_SEEN_BYTES).data.decode("utf-8"))
    except MemoryNotFound:
        return {}, None
    except (SagememError, ValueError, RecursionError) as exc:
        return {}, f"{path} unreadable, started afresh ({type(exc).__name__}: {exc})"
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}, f"{path} is not a record of seen files, started afresh"
    return {k: v for k, v in files.items() if isinstance(k, str) and _valid(v)}, None


def _valid(record: object) -> bool:
    return isinstance(record, dict) and isinstance(record.get("revision"), str)


def _time_of(record: Mapping[str, Any]) -> datetime:
    """When a record was made; a missing or garbled time counts as the oldest."""
    try:
        at = datetime.fromisoformat(str(record.get("at")))
    except ValueError:
        return _OLDEST
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _newest(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """At most MAX_SEEN_FILES records, the newest kept: the file stays bounded."""
    if len(records) <= MAX_SEEN_FILES:
        return records
    kept = sorted(records.items(), key=lambda item: _time_of(item[1]))[-MAX_SEEN_FILES:]
    return dict(kept)


def _make_seen_dir(state_dir: Path, path: Path) -> None:
    """``sessions/`` and ``sessions/seen/`` made one at a time, a symlink at either
    refused (UnsafeFile): a link planted there would have every Read of the session
    written wherever it points. The state directory itself may be a link the user set."""
    make_folder(state_dir, follow_link=True)
    for folder in (path.parent.parent, path.parent):
        make_folder(folder, parents=False)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``<id>.json.lock`` while a record is read, changed and written: Claude Code
    runs parallel Reads, and their hooks would otherwise drop each other's records.
    Waits at most LOCK_WAIT_SECONDS, then goes on unlocked (a hook has a time limit)."""
    fd = os.open(path.with_name(path.name + ".lock"),
                 os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _save(path: Path, records: dict[str, dict[str, Any]]) -> None:
    text = json.dumps({"version": 1, "files": records}, ensure_ascii=False, indent=1)
    atomic_write(path, text.encode("utf-8"), create=False)
