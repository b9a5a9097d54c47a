"""The journal: one intent record per multi-file operation in flight, so that a process
killed half way (kill -9, a power cut) never leaves the folder silently half done.

A rollback moves thousands of files, an archive moves a file and then edits MEMORY.md,
a purge renames a file aside and then logs it; each writes its line to a log only at the
end. Before the first file moves, the operation writes ``<state>/journal/<id>.json``
(atomically: a fsync'd temporary file linked into place) naming the operation, its
arguments and its time; it removes the record once its log line is written. A record
still there is an operation that never finished: every command warns about it and
``recover`` (``history.recover``) completes it. Until then ``begin`` refuses a new
operation (``UnfinishedOperation``): one planned against the half-done folder would take
its protection snapshot, and so its undo, from there.

A process killed while it wrote a record leaves the record's temporary file
(``.<id>.json.<random>.sagemem-tmp``) and no record: nothing was begun, so the next
``begin`` and ``recover`` remove it (``remove_leftovers``), under the store lock that
every journal writer holds.

Records are read through the safe path (``paths.read_regular``): a symlink in a
record's place is refused and reported, never followed; a torn or garbled record is
reported as damaged, never a crash.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import SagememError, UnfinishedOperation, WriteFailed
from ..files.atomic import atomic_write, make_folder, remove_temp_files, sync_directory
from ..files.paths import read_regular

JOURNAL_DIR = "journal"
OPERATIONS = ("archive", "archive_batch", "create_batch", "restore", "purge", "rollback")
MAX_INTENT_BYTES = 64 * 1024
"""An intent names a few files and ids; anything bigger is not one of ours."""
_VERSION = 1


@dataclass(frozen=True)
class Intent:
    """An operation begun and not yet finished: ``args`` is what it needs to be finished
    (file names, the snapshot, the protection snapshot, the log event)."""

    id: str
    operation: str
    started: str
    args: dict[str, str] = field(hash=False)

    @property
    def subject(self) -> str:
        """The file or snapshot it is about, for messages."""
        return self.args.get("file") or self.args.get("snapshot") or "?"


@dataclass(frozen=True)
class DamagedIntent:
    """A journal entry that cannot be read: a torn write, a hand edit, a symlink."""

    path: Path
    problem: str


def journal_dir(state_dir: Path) -> Path:
    return state_dir / JOURNAL_DIR


def begin(state_dir: Path, operation: str, args: dict[str, str], *,
          now: datetime | None = None) -> Intent:
    """Record that ``operation`` is about to change files; call it before the first move.
    Raises WriteFailed (or UnsafeFile) when the record cannot be written: the operation
    must then not start, since it could not be finished after a crash; and
    UnfinishedOperation while another intent is pending (see ``require_none_pending``)."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}")
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    intent = Intent(f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{operation}-"
                    f"{secrets.token_hex(3)}", operation, when.isoformat(), dict(args))
    make_folder(state_dir, follow_link=True)  # the state directory is the user's to name
    folder = journal_dir(state_dir)
    make_folder(folder, parents=False)
    remove_leftovers(state_dir)
    require_none_pending(state_dir)
    data = {"version": _VERSION, "id": intent.id, "operation": operation,
            "started": intent.started, "args": intent.args}
    atomic_write(folder / f"{intent.id}.json",
                 json.dumps(data, ensure_ascii=False).encode("utf-8"), create=True)
    return intent


def require_none_pending(state_dir: Path) -> None:
    """Raise UnfinishedOperation if the journal holds any entry, readable or not. The
    caller holds the store lock, so every entry is one a killed process left behind."""
    intents, damaged = pending(state_dir)
    if intents or damaged:
        raise UnfinishedOperation(state_dir, [describe(i) for i in intents]
                                  + [f"unreadable journal entry {d.path.name}" for d in damaged])


def remove_leftovers(state_dir: Path) -> list[str]:
    """Remove the temporary files of records a killed process was writing; their names.
    The caller holds the store lock, so no live writer is using one. Only regular files
    of exactly that pattern go: nothing else in the folder is touched, a link never
    followed."""
    return remove_temp_files(journal_dir(state_dir), r"[^/]+\.json")


def finish(state_dir: Path, intent: Intent) -> None:
    """The operation's log line is written: forget the intent. Raises WriteFailed if the
    record cannot be removed (then ``recover`` finds the work done and only removes it)."""
    path = journal_dir(state_dir) / f"{intent.id}.json"
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from exc
    sync_directory(path.parent)


def pending(state_dir: Path) -> tuple[list[Intent], list[DamagedIntent]]:
    """Every unfinished operation, oldest first, and the entries that cannot be read."""
    folder = journal_dir(state_dir)
    if os.path.islink(folder):
        return [], [DamagedIntent(folder, "it is a symlink; sagemem never follows links")]
    try:
        names = sorted(n for n in os.listdir(folder)
                       if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [DamagedIntent(folder, exc.strerror or str(exc))]
    intents: list[Intent] = []
    damaged: list[DamagedIntent] = []
    for name in names:
        read = _read(folder / name)
        if isinstance(read, Intent):
            intents.append(read)
        else:
            damaged.append(read)
    return intents, damaged


def _read(path: Path) -> Intent | DamagedIntent:
    try:
        raw = read_regular(path, MAX_INTENT_BYTES).data
    except SagememError as exc:
        return DamagedIntent(path, str(exc))
    try:
        item = json.loads(raw.decode("utf-8"))
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return DamagedIntent(path, "not a JSON object (torn or edited)")
    intent = _parse(item)
    if intent is None or f"{intent.id}.json" != path.name:
        return DamagedIntent(path, "not an intent record sagemem wrote")
    return intent


def _parse(item: Any) -> Intent | None:
    if not isinstance(item, dict):
        return None
    id_, operation, started, args = (item.get(k) for k in ("id", "operation", "started",
                                                             "args"))
    if not (isinstance(id_, str) and operation in OPERATIONS and isinstance(started, str)
            and isinstance(args, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in args.items())):
        return None
    return Intent(id_, operation, started, args)


def describe(intent: Intent) -> str:
    """One line: what was interrupted, and when."""
    return f"{intent.operation} of {intent.subject} (started {intent.started})"


def pending_notice(state_dir: Path) -> str | None:
    """The one warning line for a folder with unfinished operations, or None. Never
    raises: a command that only reads must keep working whatever the journal holds."""
    try:
        intents, damaged = pending(state_dir)
    except (SagememError, OSError):
        return None
    if not intents and not damaged:
        return None
    parts = [describe(i) for i in intents[:2]]
    parts += [f"{len(intents) - 2} more"] if len(intents) > 2 else []
    parts += [f"{len(damaged)} unreadable journal entr{'y' if len(damaged) == 1 else 'ies'}"
              ] if damaged else []
    return "an interrupted operation is not finished: " + "; ".join(parts)
