"""``dream_auto`` and ``sagemem dream auto``: the gates in their order, each skip cheap, and
only the safe kinds applied — over the dream fixture, time moved with ``now=``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from cli_run import sagemem
from dream_fixture import make_dream_folder

from sagemem.config import Settings, load_settings
from sagemem.dream import auto, runs
from sagemem.dream.auto import dream_auto
from sagemem.errors import UnknownChoice
from sagemem.store import MemoryStore

SAFE = {"dates", "links", "index", "expired"}
LONG_AGO = datetime(2020, 1, 1, tzinfo=timezone.utc).timestamp()


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    """The dream fixture, its files' mtimes set long ago so that only what a test (or a
    run) writes afterwards counts as changed."""
    folder = make_dream_folder(tmp_path)
    for path in folder.iterdir():
        os.utime(path, (LONG_AGO, LONG_AGO))
    return MemoryStore(folder, tmp_path / "state")


def settings_for(store: MemoryStore, **env: str) -> Settings:
    return load_settings(env=env, memory_dir=store.directory, state_dir=store.state_dir)


def now() -> datetime:
    return datetime.now(timezone.utc)


def touch(store: MemoryStore, names: list[str], when: datetime) -> None:
    """A person's edit of ``names`` at ``when`` (their mtime moved there)."""
    for name in names:
        os.utime(store.directory / name, (when.timestamp(), when.timestamp()))


def state(store: MemoryStore) -> dict[str, Any]:
    return json.loads((runs.runs_dir(store.state_dir) / auto.AUTO_FILE).read_text())


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every os.scandir call from now on (each a directory scan)."""
    calls: list[object] = []
    real: Callable[..., Any] = os.scandir

    def counting(path: Any = ".") -> Any:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return calls


def test_the_first_call_runs_and_applies_only_the_safe_kinds(store):
    outcome = dream_auto(store, settings_for(store), now=now())
    assert outcome.ran and outcome.manifest is not None
    kinds = {item["kind"] for item in outcome.manifest["applied"]}
    assert kinds and kinds <= SAFE and {"dates", "expired"} <= kinds
    assert (store.directory / "project_deploy_checklist.md").exists()  # no merge
    assert (store.directory / "project_legacy_build.md").exists()  # no idle archive
    assert (store.directory / "archive" / "project_autumn_promo.md").exists()
    assert "2026-03-14" in (store.directory / "feedback_standup_format.md").read_text()
    assert any("dream auto applies only" in n for n in outcome.manifest["notes"])


def test_auto_kinds_widens_what_is_applied(store):
    wide = settings_for(store, SAGE_MEM_DREAM_AUTO_KINDS="dates,duplicate,idle")
    outcome = dream_auto(store, wide, now=now())
    assert {i["kind"] for i in outcome.manifest["applied"]} == {"dates", "duplicate", "idle"}
    assert (store.directory / "archive" / "project_legacy_build.md").exists()
    assert (store.directory / "project_autumn_promo.md").exists()  # expired not asked


def test_an_unknown_kind_is_one_clear_error_and_nothing_changes(store):
    before = {p.name: p.read_bytes() for p in store.directory.iterdir()}
    with pytest.raises(UnknownChoice, match="dream_auto_kinds names 'merges'"):
        dream_auto(store, settings_for(store, SAGE_MEM_DREAM_AUTO_KINDS="dates,merges"))
    assert {p.name: p.read_bytes() for p in store.directory.iterdir()} == before


def test_the_cli_names_an_unknown_kind_on_one_line(store, monkeypatch):
    monkeypatch.setenv("SAGE_MEM_DREAM_AUTO_KINDS", "merges")
    done = sagemem(store, "dream", "auto")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "merges" in done.stderr and "Traceback" not in done.stderr


def test_a_second_call_right_after_is_skipped_by_the_hours_gate_without_a_scan(store,
                                                                                scans):
    settings, first = settings_for(store), now()
    assert dream_auto(store, settings, now=first).ran
    scans.clear()
    outcome = dream_auto(store, settings, now=first + timedelta(hours=1))
    assert not outcome.ran and "the last run was 60 min ago" in outcome.why
    assert scans == []


def test_with_hours_zero_the_throttle_gate_skips_without_a_scan(store, scans):
    settings = settings_for(store, SAGE_MEM_DREAM_AUTO_HOURS="0")
    first = now()
    assert dream_auto(store, settings, now=first).ran
    scans.clear()
    outcome = dream_auto(store, settings, now=first + timedelta(minutes=3))
    assert not outcome.ran and "scanned 3 min ago" in outcome.why
    assert scans == []


def test_the_state_file_is_read_before_any_scan(store, monkeypatch):
    settings, first = settings_for(store), now()
    assert dream_auto(store, settings, now=first).ran

    def no_scan(*_: object) -> None:
        raise AssertionError("a gated call scanned the folder")

    monkeypatch.setattr(os, "scandir", no_scan)
    assert not dream_auto(store, settings, now=first + timedelta(hours=2)).ran


def test_too_few_changes_skip_and_record_the_scan_time(store, scans):
    settings, first = settings_for(store), now()
    assert dream_auto(store, settings, now=first).ran
    later = first + timedelta(hours=25)
    touch(store, ["user_gym_schedule.md", "project_vendor_contract.md"], later)
    outcome = dream_auto(store, settings, now=later)
    assert not outcome.ran and outcome.why.startswith("2 memories changed")
    assert state(store)["last_scan"] == later.isoformat()
    scans.clear()
    throttled = dream_auto(store, settings, now=later + timedelta(minutes=5))
    assert "scanned 5 min ago" in throttled.why and scans == []


def test_enough_changes_after_the_hours_run_again(store):
    first = now()
    assert dream_auto(store, settings_for(store), now=first).ran
    later = first + timedelta(hours=25)
    touch(store, ["user_gym_schedule.md", "project_vendor_contract.md"], later)
    outcome = dream_auto(store, settings_for(store, SAGE_MEM_DREAM_AUTO_CHANGES="2"),
                         now=later)
    assert outcome.ran, outcome.why


def test_the_run_s_own_writes_are_not_changes_for_the_next_run(store):
    """Bug: the changes counted from the run's start, so the files it rewrote (and
    MEMORY.md) set off another run a day later with nobody having changed anything."""
    settings = settings_for(store, SAGE_MEM_DREAM_AUTO_CHANGES="1")
    first = now()
    assert dream_auto(store, settings, now=first).ran
    outcome = dream_auto(store, settings, now=first + timedelta(hours=25))
    assert not outcome.ran and outcome.why.startswith("0 memories changed")


def test_memory_md_is_not_counted_as_a_changed_memory(store):
    """Bug: MEMORY.md counted as a memory, so every write counted twice."""
    (store.directory / "MEMORY.md").write_text("# Memory index\n")
    outcome = dream_auto(store, settings_for(store, SAGE_MEM_DREAM_AUTO_CHANGES="1"),
                         now=now())
    assert outcome.ran  # the first call: every memory counts
    later = now() + timedelta(hours=25)
    touch(store, ["MEMORY.md"], later)
    skipped = dream_auto(store, settings_for(store, SAGE_MEM_DREAM_AUTO_CHANGES="1"),
                         now=later)
    assert not skipped.ran and skipped.why.startswith("0 memories changed")


def test_a_held_run_lock_skips_before_the_planner_runs(store, monkeypatch):
    """Bug: the tidy planner (a full read and audit of the folder) ran before the lock
    was tried, so a skip under a held lock cost a whole plan."""
    from sagemem.dream import tidy

    def no_plan(*_: object, **__: object) -> None:
        raise AssertionError("planned under a held lock")

    monkeypatch.setattr(tidy, "plan", no_plan)
    before = {p.name: p.read_bytes() for p in store.directory.iterdir() if p.is_file()}
    with runs.run_lock(store.state_dir):
        outcome = dream_auto(store, settings_for(store), now=now())
    assert not outcome.ran and outcome.why == "another consolidation run is applying"
    assert {p.name: p.read_bytes() for p in store.directory.iterdir()
            if p.is_file()} == before


def test_the_cli_runs_then_skips_and_says_so(store):
    first = sagemem(store, "dream", "auto", "--json")
    assert first.returncode == 0, first.stderr
    ran = json.loads(first.stdout)
    assert ran["ran"] and ran["run"]["status"] == "applied"
    again = sagemem(store, "dream", "auto")
    assert again.returncode == 0 and again.stdout.startswith("skipped: the last run was")


def test_the_cli_on_a_missing_folder_is_one_error_line(tmp_path):
    missing = MemoryStore(tmp_path / "nowhere", tmp_path / "state")
    done = sagemem(missing, "dream", "auto")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: memory directory") and done.stderr.count("\n") == 1
