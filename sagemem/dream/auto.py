"""``dream auto``: consolidation for cron or a session hook, gated cheapest first.

A hook runs it before every session, so almost every call must cost almost nothing:
(1) the time since the last run, from one small file (``<state>/dream/auto.json``), is
under ``dream_auto_hours`` → stop; (2) a scan ran less than ``dream_auto_scan_minutes``
ago → stop (the throttle between scans); (3) one directory scan (stat only) counts the
memories changed since the last run ended (the run's own writes are not changes):
fewer than ``dream_auto_changes`` → stop; (4) the run lock, tried and let go: another
run applying → stop. Only then is the tidy planner run, and only its
operations of the kinds in ``dream_auto_kinds`` (by default the safe ones: dates,
links, index, expired archives) are applied — never a merge or an idle archive unless
configured — under the same loss ceiling as any run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ..config import Settings
from ..errors import RunInProgress, SagememError, UnknownChoice
from ..files.atomic import atomic_write, make_folder
from ..files.paths import name_key, read_regular
from ..store import MemoryStore
from . import runs
from .plan import KINDS

AUTO_FILE = "auto.json"


@dataclass(frozen=True)
class AutoOutcome:
    """Whether ``dream auto`` ran; ``why`` it stopped or what it did; the run's manifest."""

    ran: bool
    why: str
    manifest: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ran": self.ran, "why": self.why, "run": self.manifest}


def auto_kinds(settings: Settings) -> tuple[str, ...]:
    """The kinds ``dream auto`` applies; an unknown one is refused, never ignored."""
    kinds = tuple(k.strip() for k in settings.dream_auto_kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise UnknownChoice("dream_auto_kinds", "SAGE_MEM_DREAM_AUTO_KINDS", unknown, KINDS)
    return kinds


def dream_auto(store: MemoryStore, settings: Settings, *, now: datetime | None = None,
               today: date | None = None) -> AutoOutcome:
    """Run the gates, then (if they all pass) an applying tidy run of the allowed kinds."""
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    store.require_directory()
    kinds = auto_kinds(settings)
    state = _read_state(store)
    last_run = _time(state.get("last_run"))
    if last_run is not None and when - last_run < timedelta(hours=settings.dream_auto_hours):
        return AutoOutcome(False, f"the last run was {_ago(when - last_run)} ago (runs every "
                                  f"{settings.dream_auto_hours} h)")
    last_scan = _time(state.get("last_scan"))
    throttle = timedelta(minutes=settings.dream_auto_scan_minutes)
    if last_scan is not None and when - last_scan < throttle:
        return AutoOutcome(False, f"the folder was scanned {_ago(when - last_scan)} ago")
    changed = _changed_since(store, _time(state.get("changes_after")) or last_run)
    if changed < settings.dream_auto_changes:
        _write_state(store, {**state, "last_scan": when.isoformat()})
        return AutoOutcome(False, f"{changed} memories changed since the last run (a run "
                                  f"needs {settings.dream_auto_changes})")
    try:
        with runs.run_lock(store.state_dir):
            pass  # tried before planning: a held lock must cost no tidy plan (bug: it did)
        return _run(store, settings, kinds, when, today or when.date())
    except RunInProgress:
        return AutoOutcome(False, "another consolidation run is applying")


def _run(store: MemoryStore, settings: Settings, kinds: tuple[str, ...],
         when: datetime, today: date) -> AutoOutcome:
    from .run import dream_run
    from .tidy import plan as tidy_plan

    proposed = tidy_plan(store, settings, today)
    kept = tuple(o for o in proposed.operations if o.kind in kinds)
    left = len(proposed.operations) - len(kept)
    others = [f"{o.kind} {o.op} of {o.file}" for o in proposed.operations
              if o.kind not in kinds]
    shown = "; ".join(others[:10]) + (f"; and {len(others) - 10} more" if left > 10 else "")
    notes = (f"dream auto applies only {', '.join(kinds)}; left for `sagemem dream run`: "
             f"{shown}",) if left else ()
    plan = replace(proposed, planner="tidy (auto)", operations=kept)
    report = dream_run(store, settings, plan, apply=True, now=when, notes=notes)
    # Changes count from the run's end, in the files' own clock: counted from ``when``,
    # the run's own rewrites were "changes" that set off the next run (bug: they did).
    ended = max(when, datetime.now(timezone.utc))
    _write_state(store, {"last_run": when.isoformat(), "last_scan": when.isoformat(),
                         "changes_after": ended.isoformat(), "last_run_id": report.run_id})
    applied = len(report.manifest["applied"])
    if report.status == "applied" and not applied:
        said = "nothing to apply"
    else:
        said = f"{report.status}, {applied} applied"
    return AutoOutcome(True, f"run {report.run_id}: {said}", dict(report.manifest))


def _changed_since(store: MemoryStore, since: datetime | None) -> int:
    """Memories whose file changed after ``since`` (all of them on the first run): one
    scan of the folder's top level, stat only, never following a link. MEMORY.md (and
    every reserved name) is no memory: every write touches it, counting each twice."""
    cutoff = since.timestamp() if since is not None else float("-inf")
    reserved = store.reserved
    count = 0
    with os.scandir(store.directory) as entries:
        for entry in entries:
            if (not name_key(entry.name).endswith(".md") or entry.name.startswith(".")
                    or name_key(entry.name) in reserved):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime > cutoff:
                    count += 1
            except OSError:
                continue
    return count


def _read_state(store: MemoryStore) -> dict[str, Any]:
    path = runs.runs_dir(store.state_dir) / AUTO_FILE
    try:
        data = json.loads(read_regular(path, 64 * 1024).data)
    except (SagememError, ValueError):
        return {}  # missing or damaged: the gates then let one run through, which rewrites it
    return data if isinstance(data, dict) else {}


def _write_state(store: MemoryStore, state: dict[str, Any]) -> None:
    make_folder(store.state_dir, follow_link=True)
    make_folder(runs.runs_dir(store.state_dir), parents=False)
    atomic_write(runs.runs_dir(store.state_dir) / AUTO_FILE,
                 json.dumps(state).encode("utf-8"), create=False)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _ago(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h"
