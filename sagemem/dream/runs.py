"""Where consolidation runs are kept: ``<state>/dream/<run id>/``, one folder per run.

A run's folder holds its plan (``plan.json``, the texts it meant to write), its status
(``run.json``: ``applying`` while it writes, then what became of it), the operations it
has applied so far (``progress.jsonl``, one line each, appended as they land — what a
killed run leaves behind), and its manifest (``manifest.json`` for programs,
``report.md`` for people). The state directory is sagemem's own: a file there that is
not what sagemem wrote (a link, garbage, an oversized file) makes that run unreadable,
reported, never followed or trusted.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import RunInProgress, RunNotFound, SagememError, WriteFailed
from ..files.atomic import append_line, atomic_write, make_folder
from ..files.ids import resolve_id
from ..files.paths import read_regular

RUNS_DIR = "dream"
LOCK_FILE = ".run.lock"
PLAN_FILE = "plan.json"
STATUS_FILE = "run.json"
PROGRESS_FILE = "progress.jsonl"
MANIFEST_FILE = "manifest.json"
REPORT_FILE = "report.md"
MAX_RECORD_BYTES = 256 * 1024 * 1024
"""A manifest lists every lost line of a run over a whole folder; bigger is not ours."""
STATUSES = ("report", "refused", "applying", "applied", "interrupted", "undone")


@dataclass(frozen=True)
class RunFolder:
    """One run's folder in the state directory."""

    run_id: str
    path: Path

    def file(self, name: str) -> Path:
        return self.path / name


def runs_dir(state_dir: Path) -> Path:
    return state_dir / RUNS_DIR


def new_run_id(now: datetime | None = None) -> str:
    """``20261202T031500.123456Z-3f9a2c``: sorts by time (to the microsecond, so two
    runs of one second list in order), unique across processes."""
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{secrets.token_hex(3)}"


def create_run(state_dir: Path, run_id: str) -> RunFolder:
    make_folder(state_dir, follow_link=True)  # the state directory is the user's to name
    make_folder(runs_dir(state_dir), parents=False)
    path = runs_dir(state_dir) / run_id
    make_folder(path, parents=False)
    return RunFolder(run_id, path)


def write_json(run: RunFolder, name: str, data: dict[str, Any]) -> None:
    """Replace one of the run's records atomically: a kill leaves the old one or the new."""
    body = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
    atomic_write(run.file(name), body, create=False)


def write_text(run: RunFolder, name: str, text: str) -> None:
    atomic_write(run.file(name), text.encode("utf-8"), create=False)


def append_progress(run: RunFolder, item: dict[str, Any]) -> None:
    """One applied operation, appended as it lands (one write, synced)."""
    append_line(run.file(PROGRESS_FILE),
                json.dumps(item, ensure_ascii=False).encode("utf-8") + b"\n")


def read_json(run: RunFolder, name: str) -> dict[str, Any] | None:
    """A record of the run, or None when it is missing; unreadable → SagememError."""
    path = run.file(name)
    if not os.path.lexists(path):
        return None
    data = read_regular(path, MAX_RECORD_BYTES).data
    try:
        item = json.loads(data)
    except ValueError:
        raise WriteFailed(path, "is not the JSON sagemem wrote; remove the run's folder "
                                "if it is damaged") from None
    if not isinstance(item, dict):
        raise WriteFailed(path, "is not the JSON object sagemem wrote")
    return item


def read_progress(run: RunFolder) -> list[dict[str, Any]]:
    """The applied operations a run recorded; a torn last line (a kill mid-append) is
    dropped, it names an operation whose write may not have landed either."""
    path = run.file(PROGRESS_FILE)
    if not os.path.lexists(path):
        return []
    items = []
    for raw in read_regular(path, MAX_RECORD_BYTES).data.splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def run_ids(state_dir: Path) -> list[str]:
    """Every run's id, oldest first (ids sort by time)."""
    folder = runs_dir(state_dir)
    if os.path.islink(folder) or not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries
                      if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))


def find_run(state_dir: Path, given: str) -> RunFolder:
    """The run ``given`` names (its whole id or a start only it has); RunNotFound."""
    run_id = resolve_id(given.strip(), run_ids(state_dir), RunNotFound, runs_dir(state_dir))
    return RunFolder(run_id, runs_dir(state_dir) / run_id)


def folder_of(state_dir: Path, run_id: str) -> RunFolder:
    return RunFolder(run_id, runs_dir(state_dir) / run_id)


def load_manifest(run: RunFolder) -> dict[str, Any] | None:
    """The run's manifest, or None for a run that never wrote one (killed early)."""
    return read_json(run, MANIFEST_FILE)


def readable_manifests(state_dir: Path) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(run id, manifest or None, problem or None) for every run, oldest first."""
    for run_id in run_ids(state_dir):
        run = folder_of(state_dir, run_id)
        try:
            yield run_id, load_manifest(run), None
        except SagememError as exc:
            yield run_id, None, str(exc)


@contextmanager
def run_lock(state_dir: Path) -> Iterator[None]:
    """Held while a run applies: a second run is refused (RunInProgress), never queued;
    a killed run's lock is gone with its process, which is how ``recover`` tells a run
    that is still applying from one that was killed."""
    from filelock import FileLock, Timeout

    make_folder(state_dir, follow_link=True)
    make_folder(runs_dir(state_dir), parents=False)
    lock = FileLock(str(runs_dir(state_dir) / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunInProgress(state_dir) from None
    except OSError as exc:
        raise WriteFailed(runs_dir(state_dir), exc.strerror or str(exc)) from exc
    try:
        yield
    finally:
        lock.release()
