"""What a rollback did, and its history: the ``RollbackReport``, its JSON shape, and
``<state>/rollbacks.jsonl``, one such JSON object per rollback — the same object
``rollback --json`` prints.

The line is appended after the files were restored, so failing to write it must not
hide what was done: ``apply_rollback`` then returns its report with ``history_error``
set, and the CLI prints the report (with the undo id) before a one-line error.
"""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..config import JSON_VERSION
from ..errors import MemoryNotFound, WriteFailed
from ..files.atomic import append_line
from ..files.paths import lstat_regular, read_regular
from ..store import MemoryStore
from ..writes import changelog
from .manifest import Snapshot, read_copy

HISTORY_FILE = "rollbacks.jsonl"
MAX_HISTORY_BYTES = 32 * 1024 * 1024
"""Tens of thousands of rollbacks; a bigger file is refused rather than read into memory."""
SKIP_CODES = ("locked", "collision", "conflict", "unreadable", "not_captured", "damaged",
              "not_protected", "ambiguous", "failed")


@dataclass(frozen=True)
class Skip:
    """A file the rollback leaves as it is, and why (``code`` is one of SKIP_CODES)."""

    file: str
    code: str
    reason: str
    conflict_id: str | None = None



@dataclass(frozen=True)
class RollbackReport:
    """What a rollback did (or, for a dry run, would do)."""

    snapshot_id: str
    scope: str
    dry_run: bool
    time: datetime
    protection_id: str | None
    restored: tuple[str, ...]
    moved: tuple[str, ...]
    skipped: tuple[Skip, ...]
    unchanged: int
    left: tuple[str, ...]
    history_error: str | None = None  # set when files changed but the history line failed
    recovered: bool = False  # finishing a rollback that was interrupted (``recover``)




def report_json(report: RollbackReport) -> dict[str, Any]:
    """The stable JSON shape of a report; also the line ``rollbacks.jsonl`` holds."""
    collisions = sum(1 for s in report.skipped if s.code == "collision")
    return {
        "version": JSON_VERSION,
        "time": report.time.isoformat(), "snapshot": report.snapshot_id, "scope": report.scope,
        "dry_run": report.dry_run, "protection": report.protection_id,
        "counts": {"restored": len(report.restored), "moved": len(report.moved),
                   "skipped": len(report.skipped), "collisions": collisions,
                   "unchanged": report.unchanged, "left": len(report.left)},
        "restored": list(report.restored), "moved": list(report.moved),
        "skipped": [{"file": s.file, "code": s.code, "reason": s.reason,
                     "conflict": s.conflict_id} for s in report.skipped],
        "left": list(report.left), "recovered": report.recovered}


def append_history(store: MemoryStore, report: RollbackReport) -> str | None:
    """Append the report's line (the caller holds the lock); None when written, else
    what went wrong — by then files have changed, so "nothing was changed" would lie."""
    line = json.dumps(report_json(report), ensure_ascii=False).encode("utf-8") + b"\n"
    try:
        append_line(store.state_dir / HISTORY_FILE, line)
    except WriteFailed as exc:
        return (f"the rollback was done, but its line could not be written to "
                f"{exc.path} ({exc.reason})")
    return None


def check_history_file(store: MemoryStore) -> None:
    """A symlinked or odd history file: refused before anything changes, not after."""
    with suppress(MemoryNotFound):
        lstat_regular(store.state_dir / HISTORY_FILE)


def rollback_history(store: MemoryStore) -> list[dict[str, Any]]:
    """Every rollback recorded, oldest first; a line that is not a JSON object is skipped.
    Read through the safe path (no symlink, bounded size)."""
    try:
        data = read_regular(store.state_dir / HISTORY_FILE, MAX_HISTORY_BYTES).data
    except MemoryNotFound:
        return []
    return [entry for entry in map(_parse, data.splitlines()) if isinstance(entry, dict)]


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return None


def log_changes(store: MemoryStore, report: RollbackReport, snapshot: Snapshot,
                protection: Snapshot, writer: str) -> None:
    """One change-log line per file the rollback changed (the caller holds the lock):
    a restored file from the protection snapshot's bytes to the snapshot's, a moved one
    off the top level into archive/."""
    reason = f"{'recover: ' if report.recovered else ''}rollback to {snapshot.id}"
    for file in (*report.restored, *report.moved):
        after = _facts(snapshot, file) if file in report.restored else None
        changelog.record(store.state_dir, file, "rollback", writer=writer, reason=reason,
                         before=_facts(protection, file), after=after)


def _facts(snapshot: Snapshot, file: str) -> changelog.Facts | None:
    """A file as ``snapshot`` holds it (None: it holds none); from the manifest alone
    when the copy cannot be read for its line count."""
    entry = snapshot.file(file)
    if entry is None:
        return None
    data = read_copy(snapshot, entry)
    return changelog.facts_of(data) if data is not None else \
        changelog.Facts(entry.sha256, entry.size, 0)
