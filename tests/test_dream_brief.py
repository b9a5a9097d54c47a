"""The brief ``dream plan`` prints for an agent: its JSON shape and its text."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from dream_fixture import TODAY, make_dream_folder

from sagemem.config import Settings
from sagemem.dream import plan as plan_format
from sagemem.dream.brief import APPLY, SECTIONS, Brief, build_brief
from sagemem.history import ledger
from sagemem.history.locks import lock_memory
from sagemem.inject.session import session_file
from sagemem.store import MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


def brief_of(store: MemoryStore) -> Brief:
    return build_brief(store, Settings(memory_dir=store.directory, state_dir=store.state_dir),
                       TODAY)


def test_the_brief_json_has_every_section_the_format_and_the_apply_command(
        store: MemoryStore) -> None:
    data = brief_of(store).to_json()
    assert data["version"] == 1 and data["today"] == "2026-12-02" and data["memories"] == 11
    assert set(SECTIONS) <= set(data) and data["apply"] == APPLY
    assert APPLY == "sagemem dream run --planner PLAN.json --apply"
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data  # plain JSON values


def test_each_section_names_its_files_and_their_revisions(store: MemoryStore) -> None:
    data = brief_of(store).to_json()
    [near, exact] = data["duplicates"]
    assert near["files"] == ["project_deploy_checklist.md", "project_deploy_steps.md"]
    assert near["suggested_keeper"] == "project_deploy_steps.md" and not near["exact"]
    assert near["revisions"]["project_deploy_steps.md"] == \
        store.revision("project_deploy_steps.md")
    assert [m["text"] for m in near["memories"]] == [
        store.get(f).text for f in near["files"]]
    assert exact["exact"] and exact["suggested_keeper"] == "reference_office_wifi.md"
    dated = {item["file"]: item for item in data["stale_dates"]}
    assert dated["user_gym_schedule.md"]["anchor"] is None
    assert dated["user_gym_schedule.md"]["dates"][0]["replacement"] is None
    assert dated["feedback_standup_format.md"]["anchor"] == "2026-03-15"
    assert [(e["file"], e["days_since"]) for e in data["expired"]] == [
        ("project_autumn_promo.md", 200)]
    assert [i["file"] for i in data["idle"]] == ["project_legacy_build.md"]
    fixes = {(i["file"], i["fixable"]) for i in data["links_index"]}
    assert fixes == {("MEMORY.md", True), ("reference_release_links.md", True),
                     ("reference_release_links.md", False)}
    for section in SECTIONS:
        for item in data[section]:
            assert "file" in item or "files" in item


def test_a_locked_idle_memory_is_listed_as_skipped_with_why(store: MemoryStore) -> None:
    lock_memory(store, "project_legacy_build.md")
    data = brief_of(store).to_json()
    assert data["idle"] == []
    assert data["skipped"][0]["file"] == "project_legacy_build.md"
    assert "locked" in data["skipped"][0]["why"]


def test_the_plan_format_example_holds_each_op_and_is_a_valid_plan(
        store: MemoryStore) -> None:
    spec = brief_of(store).to_json()["plan_format"]
    example = plan_format.from_json(spec["example"])
    assert sorted(o.op for o in example.operations) == ["archive", "create", "rewrite"]
    assert spec["format"] == plan_format.FORMAT and spec["kinds"] == list(plan_format.KINDS)


def test_the_text_shows_each_section_the_format_and_the_command(store: MemoryStore) -> None:
    text = brief_of(store).as_text()
    for heading in ("## Duplicates (2)", "## Stale relative dates (3)", "## Expired (1)",
                    "## Idle (1)", "## Links and index (3)", "## Open contradictions (0)",
                    "## Skipped (0)", "## Plan format"):
        assert heading in text
    assert "line 9: 'yesterday' → 'on 2026-03-14'" in text
    assert "no updated: no anchor, leave these as written" in text
    assert f"@{store.revision('project_autumn_promo.md')[:12]}" in text
    assert text.rstrip().endswith(APPLY)


def test_the_text_writes_control_characters_out(store: MemoryStore) -> None:
    path = store.directory / "project_deploy_steps.md"
    path.write_text(path.read_text() + "Then \x1b[2Jclear the screen.\n")
    text = brief_of(store).as_text()
    assert "\x1b" not in text and "Then \\x1b[2Jclear the screen." in text


def test_injections_and_session_state_never_change_the_brief(store: MemoryStore) -> None:
    before = brief_of(store).to_json()
    ledger.record(store.state_dir, "injected", ["project_legacy_build.md"],
                  datetime(2026, 12, 1, tzinfo=timezone.utc))
    session = session_file(store.state_dir, "s1")
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_text(json.dumps({"injected": "SESSION-ONLY TEXT"}))
    after = brief_of(store).to_json()
    assert after == before and "SESSION-ONLY" not in json.dumps(after)
