"""Auto-archive candidates: idle days per type, from the ledger first, each with its why."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagemem.config import load_settings
from sagemem.history import ledger
from sagemem.history.candidates import archive_candidates, idle_thresholds
from sagemem.history.locks import lock_memory
from sagemem.store import MemoryStore

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
THRESHOLDS = {"project": 90, "reference": 180, "feedback": 365, "user": 0}


def memory(type_: str, updated: str | None = None) -> str:
    line = f"updated: {updated}\n" if updated else ""
    return f"---\ndescription: a {type_}\nmetadata:\n  type: {type_}\n{line}---\nbody\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    return MemoryStore(directory, tmp_path / "state")


def add(store: MemoryStore, file: str, type_: str, updated: str | None = None,
        mtime: datetime | None = None) -> None:
    path = store.directory / file
    path.write_text(memory(type_, updated))
    stamp = (mtime or NOW).timestamp()
    os.utime(path, (stamp, stamp))


def days_ago(days: int) -> datetime:
    return NOW - timedelta(days=days)


def test_idle_past_its_type_threshold_is_a_candidate_with_why(store: MemoryStore) -> None:
    add(store, "project_old.md", "project", "2026-08-01")
    add(store, "project_new.md", "project", "2026-11-01")
    [candidate] = archive_candidates(store, THRESHOLDS, NOW).candidates
    assert (candidate.file, candidate.idle_days, candidate.threshold, candidate.source) == (
        "project_old.md", 121, 90, "updated")
    assert candidate.why == ("idle 121 days (updated 2026-08-01; never read or used) ≥ "
                             "project threshold 90")


def test_the_threshold_is_inclusive(store: MemoryStore) -> None:
    add(store, "project_edge.md", "project", (NOW - timedelta(days=90)).date().isoformat())
    assert [c.idle_days for c in archive_candidates(store, THRESHOLDS, NOW).candidates] == [90]


def test_a_zero_threshold_means_never(store: MemoryStore) -> None:
    add(store, "user_me.md", "user", "2000-01-01")
    add(store, "reference_x.md", "reference", "2000-01-01")
    found = archive_candidates(store, {**THRESHOLDS, "reference": 0}, NOW).candidates
    assert found == ()


def test_the_last_read_or_use_wins_over_an_older_update(store: MemoryStore) -> None:
    add(store, "project_read.md", "project", "2025-01-01")
    add(store, "project_used.md", "project", "2025-01-01")
    ledger.record(store.state_dir, "read", ["project_read.md"], days_ago(100))
    ledger.record(store.state_dir, "use", ["project_used.md"], days_ago(10))
    [candidate] = archive_candidates(store, THRESHOLDS, NOW).candidates
    assert (candidate.file, candidate.source, candidate.idle_days) == ("project_read.md",
                                                                       "read", 100)
    assert candidate.why == "idle 100 days (last read 2026-08-22) ≥ project threshold 90"


def test_being_injected_is_not_use(store: MemoryStore) -> None:
    add(store, "project_shown.md", "project", "2025-01-01")
    ledger.record(store.state_dir, "injected", ["project_shown.md"], days_ago(1))
    [candidate] = archive_candidates(store, THRESHOLDS, NOW).candidates
    assert candidate.source == "updated"


def test_a_later_update_counts_as_a_sign_of_life(store: MemoryStore) -> None:
    add(store, "project_edited.md", "project", "2026-11-20")
    ledger.record(store.state_dir, "read", ["project_edited.md"], days_ago(300))
    assert archive_candidates(store, THRESHOLDS, NOW).candidates == ()


def test_without_ledger_or_updated_the_mtime_is_used(store: MemoryStore) -> None:
    add(store, "reference_docs.md", "reference", mtime=days_ago(200))
    [candidate] = archive_candidates(store, THRESHOLDS, NOW).candidates
    assert (candidate.source, candidate.idle_days) == ("mtime", 200)
    assert "file modified" in candidate.why


def test_a_locked_memory_is_never_a_candidate(store: MemoryStore) -> None:
    add(store, "project_keep.md", "project", "2020-01-01")
    lock_memory(store, "project_keep")
    report = archive_candidates(store, THRESHOLDS, NOW)
    assert report.candidates == ()
    assert [c.file for c in report.locked] == ["project_keep.md"]


def test_candidates_are_ordered_longest_idle_first_then_by_name(store: MemoryStore) -> None:
    add(store, "project_b.md", "project", "2026-01-01")
    add(store, "project_a.md", "project", "2026-01-01")
    add(store, "feedback_c.md", "feedback", "2020-01-01")
    found = [c.file for c in archive_candidates(store, THRESHOLDS, NOW).candidates]
    assert found == ["feedback_c.md", "project_a.md", "project_b.md"]


def test_archived_memories_are_not_candidates(store: MemoryStore) -> None:
    (store.directory / "archive").mkdir()
    (store.directory / "archive" / "project_gone.md").write_text(memory("project", "2020-01-01"))
    assert archive_candidates(store, THRESHOLDS, NOW).candidates == ()


def test_an_unreadable_ledger_or_memory_is_a_warning(store: MemoryStore) -> None:
    add(store, "project_old.md", "project", "2020-01-01")
    (store.directory / "project_bad.md").write_bytes(b"\xff\xfe")
    store.state_dir.mkdir()
    (store.state_dir / ledger.ACCESS_FILE).write_text("{broken")
    report = archive_candidates(store, THRESHOLDS, NOW)
    assert [c.file for c in report.candidates] == ["project_old.md"]
    assert len(report.warnings) == 2


def test_a_naive_now_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="timezone"):
        archive_candidates(store, THRESHOLDS, datetime(2026, 1, 1))


def test_thresholds_come_from_settings(tmp_path: Path) -> None:
    settings = load_settings(env={"SAGE_MEM_IDLE_DAYS_PROJECT": "30"}, memory_dir=tmp_path,
                             state_dir=tmp_path / "state")
    assert idle_thresholds(settings) == {"user": 0, "feedback": 365, "project": 30,
                                         "reference": 180}
