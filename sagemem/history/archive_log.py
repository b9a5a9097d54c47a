"""The archive log: ``<state>/archive.jsonl``, one JSON object per line for every archive,
restore, purge, lock and unlock — when, which file, why, and who asked.

A purged memory is gone; this line is what remains of it, so the log is append-only and
a damaged line (a crash mid-append, a hand edit) costs only itself: it is skipped with a
warning and every other line is still read.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import SagememError
from ..files.atomic import append_line, make_folder
from ..files.paths import read_regular

LOG_FILE = "archive.jsonl"
ACTIONS = ("archive", "restore", "purge", "lock", "unlock")
BY = ("cli", "library", "candidates", "mcp", "memory-tool", "consolidation", "ui")
MAX_LOG_BYTES = 32 * 1024 * 1024
"""Tens of thousands of lines; a bigger file is refused rather than read into memory."""


@dataclass(frozen=True)
class ArchiveEvent:
    """One line of the log: ``time`` is ISO 8601 UTC; ``reason`` may be empty (unlock)."""

    time: str
    action: str
    file: str
    reason: str
    by: str


def stamp(now: datetime) -> str:
    """``now`` as the log writes it; a naive datetime is refused (local or UTC?)."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def event(action: str, file: str, reason: str, by: str, now: datetime) -> ArchiveEvent:
    """One log line; its reason redacted, as every text sagemem keeps."""
    if action not in ACTIONS or by not in BY:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}; by one of {', '.join(BY)}")
    from ..writes.redact import redact_reason

    return ArchiveEvent(stamp(now), action, file, redact_reason(reason) or "", by)


def append(state_dir: Path, record: ArchiveEvent) -> None:
    """Add one line (the caller holds the store lock); see ``atomic.append_line``."""
    line = (json.dumps(asdict(record), ensure_ascii=False) + "\n").encode("utf-8")
    make_folder(state_dir, follow_link=True)  # the state directory is the user's to name
    append_line(state_dir / LOG_FILE, line)


def read_log(state_dir: Path) -> tuple[list[ArchiveEvent], list[str]]:
    """Every event, oldest first, and warnings for the lines that could not be read."""
    path = state_dir / LOG_FILE
    try:
        data = read_regular(path, MAX_LOG_BYTES).data
    except SagememError as exc:
        if not os.path.lexists(path):
            return [], []
        return [], [f"{LOG_FILE} cannot be read: {exc}"]
    events: list[ArchiveEvent] = []
    warnings: list[str] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if raw.strip():
            parsed = _parse(raw)
            if parsed is None:
                warnings.append(f"{LOG_FILE} line {number} is damaged; skipped")
            else:
                events.append(parsed)
    return events, warnings


def _parse(raw: bytes) -> ArchiveEvent | None:
    try:
        item = json.loads(raw.decode("utf-8"))
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return None
    fields = ("time", "action", "file", "reason", "by")
    if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
        return None
    return ArchiveEvent(*(item[f] for f in fields))
