"""dream's findings and the tidy planner, over real folders made by ``dream_fixture``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dream_fixture import DEPLOY_CHECKLIST, DEPLOY_STEPS, TODAY, make_dream_folder

from sagemem.audit.fix import fix, repaired_texts
from sagemem.audit.report import audit
from sagemem.config import Settings
from sagemem.dream import plan as plan_format
from sagemem.dream.findings import find
from sagemem.dream.tidy import plan
from sagemem.files.body import head_of
from sagemem.files.memory import parse
from sagemem.history.archive import archive_memory
from sagemem.history.locks import lock_memory
from sagemem.store import MemoryStore
from sagemem.writes.conflicts import contradict
from tests.test_audit import fixture_store


def settings_for(store: MemoryStore, **guarded: int) -> Settings:
    return Settings(memory_dir=store.directory, state_dir=store.state_dir,
                    guarded_values=guarded)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


def tidy(store: MemoryStore, **guarded: int) -> plan_format.Plan:
    return plan(store, settings_for(store, **guarded), TODAY)


def ops_by_file(p: plan_format.Plan) -> dict[str, plan_format.Operation]:
    return {o.file: o for o in p.operations}


def body_lines(text: str) -> set[str]:
    return {line.strip() for line in parse(text.encode(), "x.md").body.splitlines()
            if line.strip()}


# -- findings -----------------------------------------------------------------------------

def test_findings_group_the_near_and_the_exact_duplicates(store: MemoryStore) -> None:
    groups = find(store, settings_for(store), TODAY).duplicates
    assert [(g.files, g.exact) for g in groups] == [
        (("project_deploy_checklist.md", "project_deploy_steps.md"), False),
        (("reference_office_wifi.md", "reference_office_wifi_copy.md"), True)]


def test_findings_anchor_relative_dates_on_updated_and_never_guess_one(
        store: MemoryStore) -> None:
    stale = {s.file: s for s in find(store, settings_for(store), TODAY).stale_dates}
    standup = stale["feedback_standup_format.md"]
    assert standup.anchor is not None and standup.anchor.isoformat() == "2026-03-15"
    first = standup.dates[0]
    assert (first.line, first.phrase, first.replacement) == (9, "yesterday", "on 2026-03-14")
    assert stale["user_team_lunch.md"].dates[0].phrase == "昨天"
    gym = stale["user_gym_schedule.md"]
    assert gym.anchor is None and [d.replacement for d in gym.dates] == [""]


def test_findings_name_an_expired_memory_only_past_the_setting(store: MemoryStore) -> None:
    expired = find(store, settings_for(store), TODAY).expired
    assert [(e.file, e.days) for e in expired] == [("project_autumn_promo.md", 200)]
    assert find(store, settings_for(store, dream_expired_days=201), TODAY).expired == ()


def test_findings_list_the_idle_memory_and_skip_it_once_locked(store: MemoryStore) -> None:
    assert [c.file for c in find(store, settings_for(store), TODAY).idle] == \
        ["project_legacy_build.md"]
    lock_memory(store, "project_legacy_build.md")
    found = find(store, settings_for(store), TODAY)
    assert found.idle == ()
    assert [s.file for s in found.skipped] == ["project_legacy_build.md"]
    assert "locked" in found.skipped[0].why


def test_findings_hold_open_contradictions_and_spare_their_memories(
        store: MemoryStore) -> None:
    contradict(store, "project_autumn_promo.md", "project_vendor_contract.md", "which?")
    found = find(store, settings_for(store), TODAY)
    assert [c.files for c in found.contradictions] == [
        ("project_autumn_promo.md", "project_vendor_contract.md")]
    assert found.expired == () and "contradiction" in found.skipped[0].why
    assert "project_autumn_promo.md" not in ops_by_file(tidy(store))


def test_findings_ignore_archived_memories(store: MemoryStore) -> None:
    archive_memory(store, "reference_office_wifi_copy.md", "test")
    found = find(store, settings_for(store), TODAY)
    assert "reference_office_wifi_copy.md" not in found.memories
    assert [g.files for g in found.duplicates] == [
        ("project_deploy_checklist.md", "project_deploy_steps.md")]


def test_findings_repairs_are_the_fixable_link_and_index_problems(store: MemoryStore) -> None:
    repairs = {r.file: r for r in find(store, settings_for(store), TODAY).repairs}
    assert sorted(repairs) == ["MEMORY.md", "reference_release_links.md"]
    assert repairs["MEMORY.md"].kind == "index"
    assert repairs["reference_release_links.md"].kind == "links"


# -- the plan -----------------------------------------------------------------------------

def test_plan_is_the_same_byte_for_byte_for_the_same_folder(tmp_path: Path) -> None:
    a = MemoryStore(make_dream_folder(tmp_path / "a"), tmp_path / "a" / "state")
    b = MemoryStore(make_dream_folder(tmp_path / "b"), tmp_path / "b" / "state")
    assert tidy(a).dumps() == tidy(b).dumps() == tidy(a).dumps()


def test_plan_proposes_each_kind_once_per_file(store: MemoryStore) -> None:
    p = tidy(store)
    files = [o.file for o in p.operations]
    assert len(files) == len(set(files))
    assert {(o.file, o.op, o.kind) for o in p.operations} == {
        ("MEMORY.md", "rewrite", "index"),
        ("feedback_standup_format.md", "rewrite", "dates"),
        ("user_team_lunch.md", "rewrite", "dates"),
        ("project_deploy_steps.md", "rewrite", "duplicate"),
        ("reference_release_links.md", "rewrite", "links"),
        ("project_autumn_promo.md", "archive", "expired"),
        ("project_legacy_build.md", "archive", "idle"),
        ("project_deploy_checklist.md", "archive", "duplicate"),
        ("reference_office_wifi_copy.md", "archive", "duplicate")}
    assert p.planner == "tidy" and p.operations[0].file == "MEMORY.md"


def test_every_operation_names_the_revision_it_was_planned_against(store: MemoryStore) -> None:
    for o in tidy(store).operations:
        now = store.read_index()[1] if o.file == "MEMORY.md" else store.revision(o.file)
        assert o.revision == now and o.reason


def test_the_merged_keeper_holds_every_line_of_both(store: MemoryStore) -> None:
    ops = ops_by_file(tidy(store))
    keeper = ops["project_deploy_steps.md"]
    assert keeper.text is not None and keeper.source == ("project_deploy_checklist.md",)
    assert body_lines(DEPLOY_CHECKLIST) | body_lines(DEPLOY_STEPS) == body_lines(keeper.text)
    assert keeper.text.startswith(DEPLOY_STEPS)  # the keeper's own text, then the new lines
    assert ops["project_deploy_checklist.md"].reason.startswith(
        "merged into project_deploy_steps.md")


def test_a_merge_unions_tags_and_aliases(store: MemoryStore) -> None:
    (store.directory / "project_deploy_checklist.md").write_text(
        DEPLOY_CHECKLIST.replace("tags: [deploy]", "tags: [deploy, ops]"))
    keeper = ops_by_file(tidy(store))["project_deploy_steps.md"]
    assert keeper.text is not None
    merged = parse(keeper.text.encode(), "project_deploy_steps.md")
    assert merged.tags == ("deploy", "release", "ops") and merged.aliases == ("release steps",)
    assert "tags + ops" in keeper.reason


def test_an_exact_copy_is_archived_naming_the_kept_file(store: MemoryStore) -> None:
    ops = ops_by_file(tidy(store))
    assert "reference_office_wifi.md" not in ops  # nothing to add to it
    assert ops["reference_office_wifi_copy.md"].reason.startswith(
        "a copy of reference_office_wifi.md, which is kept")


def test_a_keepers_dates_fold_into_its_merge_rewrite(store: MemoryStore) -> None:
    path = store.directory / "project_deploy_steps.md"
    path.write_text(DEPLOY_STEPS + "The staging cluster was rebuilt yesterday.\n")
    p = tidy(store)
    keeper = ops_by_file(p)["project_deploy_steps.md"]
    assert [o.file for o in p.operations].count("project_deploy_steps.md") == 1
    assert keeper.kind == "duplicate" and keeper.text is not None
    assert "rebuilt on 2026-11-27." in keeper.text and "yesterday" not in keeper.text
    assert "relative date made absolute from updated 2026-11-28" in keeper.reason


def test_dates_rewrite_keeps_every_frontmatter_byte_and_updated(store: MemoryStore) -> None:
    memory = store.get("feedback_standup_format.md")
    rewrite = ops_by_file(tidy(store))["feedback_standup_format.md"]
    assert rewrite.text is not None
    assert rewrite.text.startswith(head_of(memory))
    assert "agreed on this format on 2026-03-14 after" in rewrite.text
    assert parse(rewrite.text.encode(), memory.file).updated == memory.updated
    assert rewrite.reason == ("4 relative dates made absolute from updated 2026-03-15: "
                              "yesterday → on 2026-03-14; Last week → The week of "
                              "2026-03-02; next Monday → 2026-03-16; in a month → in April "
                              "2026")


def test_a_memory_without_updated_is_never_rewritten(store: MemoryStore) -> None:
    p = tidy(store)
    assert "user_gym_schedule.md" not in ops_by_file(p)
    assert any(n.startswith("user_gym_schedule.md: 1 relative date left as written")
               for n in p.notes)


def test_the_still_valid_contract_date_is_left_as_it_is(store: MemoryStore) -> None:
    assert "project_vendor_contract.md" not in ops_by_file(tidy(store))


def test_a_locked_memory_is_never_archived(store: MemoryStore) -> None:
    locked = ("project_autumn_promo.md", "project_legacy_build.md",
              "reference_office_wifi_copy.md", "project_deploy_checklist.md")
    for name in locked:
        lock_memory(store, name)
    ops = ops_by_file(tidy(store))
    assert not [o for o in ops.values() if o.op == "archive" and o.file in locked]
    # a locked duplicate is the one its group keeps: the others merge into it
    assert ops["project_deploy_checklist.md"].op == "rewrite"
    assert ops["project_deploy_steps.md"].reason.startswith(
        "merged into project_deploy_checklist.md")
    assert ops["reference_office_wifi.md"].reason.startswith(
        "a copy of reference_office_wifi_copy.md")


def test_a_group_of_locked_memories_is_left_whole(store: MemoryStore) -> None:
    lock_memory(store, "project_deploy_checklist.md")
    lock_memory(store, "project_deploy_steps.md")
    p = tidy(store)
    assert not [o for o in p.operations if o.file.startswith("project_deploy")]
    assert "project_deploy_checklist.md: a duplicate of project_deploy_steps.md, but " \
           "locked: never archived (sagemem unlock)" in p.notes


def test_links_and_index_rewrites_are_exactly_what_audit_fix_writes(
        store: MemoryStore, tmp_path: Path) -> None:
    ops = ops_by_file(tidy(store))
    copy = tmp_path / "copy"
    shutil.copytree(store.directory, copy / "memory")
    fixed = MemoryStore(copy / "memory", copy / "state")
    fix(fixed, snapshot=False)
    for name in ("MEMORY.md", "reference_release_links.md"):
        assert ops[name].text == (copy / "memory" / name).read_bytes().decode()


def test_an_archived_memory_gets_no_index_line(store: MemoryStore) -> None:
    (store.directory / "MEMORY.md").write_text(
        (store.directory / "MEMORY.md").read_text().replace(
            "- [Legacy build](project_legacy_build.md) — How the old Makefile build of the "
            "desktop client works\n", ""))
    index = ops_by_file(tidy(store))["MEMORY.md"]
    assert index.text is not None and "project_legacy_build.md" not in index.text
    assert "project_vendor_contract.md" in index.text


def test_the_plan_round_trips_through_its_json(store: MemoryStore) -> None:
    p = tidy(store)
    assert plan_format.from_json(p.to_json()) == p
    assert plan_format.loads(p.dumps()).dumps() == p.dumps()


def test_repaired_texts_are_what_fix_writes_on_the_audit_fixture(tmp_path: Path) -> None:
    planned = fixture_store(tmp_path / "planned")
    texts = repaired_texts(planned, audit(planned))
    fixed = fixture_store(tmp_path / "fixed")
    fix(fixed, snapshot=False)
    assert texts and all((fixed.directory / name).read_bytes().decode() == text
                         for name, text in texts.items())
    assert (planned.directory / "MEMORY.md").read_bytes() != \
        (fixed.directory / "MEMORY.md").read_bytes()  # the dry one wrote nothing
