"""What a sync remembers between runs, in ``<state>/gitsync.json``, and the change
journal's ``sync`` line.

``gitsync.json`` holds the time of the last journal line a sync's commit message
covered (so the next message covers only what is new), whether the merge-driver hint
was shown (it is shown once), and, while a sync is stopped on a conflict, the commit it
started from, its rollback snapshot, how many commits it pulls (so ``--continue``
reports what came in) and when its rebase began (the conflict records queued since are
its own). It is
a cache of convenience: unreadable or garbled, it reads as empty — a message then covers
the whole journal, which is longer, never wrong.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import SagememError
from ..files.atomic import atomic_write
from ..files.paths import read_state_file
from ..writes import changelog
from ..writes.changelog import Entry

SYNC_FILE = "gitsync.json"


@dataclass(frozen=True)
class SyncState:
    """``covered``: the journal time the last commit message reached; ``hinted``: the
    merge-driver hint was shown; ``stopped_from``/``snapshot``/``pulled``/``started``: a
    stopped sync's start, its snapshot, the commits it pulls, when its rebase began."""

    covered: str | None = None
    hinted: bool = False
    stopped_from: str | None = None
    snapshot: str | None = None
    pulled: int = 0
    started: str | None = None


def load(state_dir: Path) -> SyncState:
    """The saved state; empty when there is none or it cannot be read."""
    try:
        raw = read_state_file(state_dir / SYNC_FILE)
        item: Any = json.loads(raw.decode("utf-8")) if raw is not None else {}
    except (SagememError, ValueError, RecursionError):
        return SyncState()
    if not isinstance(item, dict):
        return SyncState()
    texts = {k: item.get(k) if isinstance(item.get(k), str) else None
             for k in ("covered", "stopped_from", "snapshot", "started")}
    pulled = item.get("pulled")
    return SyncState(hinted=item.get("hinted") is True, **texts,
                     pulled=pulled if type(pulled) is int and pulled > 0 else 0)


def save(state_dir: Path, state: SyncState) -> None:
    """Replace the saved state (the state directory is made by ``init`` or the store)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(state_dir / SYNC_FILE, json.dumps(asdict(state)).encode("utf-8"),
                 create=False)


def update(state_dir: Path, **changes: Any) -> SyncState:
    """Load, change some fields, save; the new state."""
    state = replace(load(state_dir), **changes)
    save(state_dir, state)
    return state


def now() -> str:
    """The time as conflict records stamp their ``created`` (UTC, to the second)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_entries(state_dir: Path, covered: str | None) -> list[Entry]:
    """The journal's lines after ``covered``, oldest first, the sync lines left out."""
    found = changelog.read(state_dir).entries
    return [item for item in reversed(found)
            if item.op != "sync" and (covered is None or item.time > covered)]


def log_sync(state_dir: Path, commit: str, incoming: tuple[str, ...], *, writer: str,
             pushed: bool) -> str | None:
    """The journal's ``sync`` line: the commit reached and what came in. None when
    written, else the warning (a journal that cannot be written never fails a sync)."""
    came = (f"{len(incoming)} file{'s' if len(incoming) != 1 else ''} came in"
            + (f" ({', '.join(incoming[:5])}{', …' if len(incoming) > 5 else ''})"
               if incoming else ""))
    reason = f"reached {commit[:12]}; {came}; {'pushed' if pushed else 'not pushed'}"
    return changelog.record(state_dir, changelog.SYNC_FILE, "sync", writer=writer,
                            reason=reason, before=None, after=None, commit=commit)
