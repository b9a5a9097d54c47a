"""dream run, undo, recovery: plans applied as guarded writes, the manifest of every
line that went, the loss ceiling, and the rollback point — through real folders."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dream_fixture import make_dream_folder

from sagemem.config import load_settings
from sagemem.dream import runs
from sagemem.dream.plan import Operation, Plan, loads
from sagemem.dream.recover import finish_interrupted
from sagemem.dream.run import dream_run
from sagemem.dream.undo import undo_run
from sagemem.errors import InvalidPlan, RunInProgress, RunNotFound, RunNotUndoable
from sagemem.store import MemoryStore
from sagemem.writes import changelog, conflicts

CONTRACT = "project_vendor_contract.md"
STILL_VALID = "Contract expires 2027-10-03, no auto-renewal."


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


def settings_for(store: MemoryStore, **env: str):
    return load_settings(env=env, memory_dir=store.directory, state_dir=store.state_dir)


def tree(folder: Path) -> dict[str, str]:
    """Every file under the folder (archive/ included, dream/ reports left out) by hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()
            and p.relative_to(folder).parts[0] != "dream"}


def rewrite(store: MemoryStore, file: str, text: str, reason: str = "tidied") -> Operation:
    return Operation("rewrite", file, reason, store.get(file).revision, text, "other")


def without_line(store: MemoryStore, file: str, line: str) -> str:
    text = store.get(file).text
    assert line in text
    return text.replace(line + "\n", "")


def line_number(store: MemoryStore, file: str, line: str) -> int:
    return store.get(file).text.split("\n").index(line) + 1


def test_a_report_changes_nothing_in_the_folder_and_keeps_its_manifest_in_state(store):
    before = tree(store.directory)
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    report = dream_run(store, settings_for(store), plan)
    assert tree(store.directory) == before
    assert not (store.directory / "dream").exists()
    assert report.status == "report"
    assert report.manifest["planned"][0]["file"] == CONTRACT
    assert report.manifest["deleted_facts"][0]["text"] == STILL_VALID
    kept = runs.load_manifest(runs.find_run(store.state_dir, report.run_id))
    assert kept == json.loads(json.dumps(report.manifest))


def test_a_rewrite_dropping_a_valid_line_lists_it_with_its_original_line_number(store):
    number = line_number(store, CONTRACT, STILL_VALID)
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert report.status == "applied"
    assert report.manifest["deleted_facts"] == [
        {"file": CONTRACT, "line": number, "text": STILL_VALID, "archived": False,
         "reworded": False}]
    assert STILL_VALID not in store.get(CONTRACT).text
    human = (store.directory / "dream" / f"{report.run_id}.md").read_text()
    assert f"`{CONTRACT}:{number}` — {STILL_VALID}" in human
    assert "## Facts no longer present (1)" in human
    assert "### Gone (1)" in human


def test_a_rewording_that_changes_a_number_or_a_negation_is_counted_as_dropped(store):
    changed = store.get(CONTRACT).text.replace(STILL_VALID,
                                               "Contract expires 2027-11-03, no auto-renewal.")
    negated = store.get(CONTRACT).text.replace(STILL_VALID, "Contract expires 2027-10-03.")
    for text in (changed, negated):
        report = dream_run(store, settings_for(store), Plan((rewrite(store, CONTRACT, text),)))
        fact, = report.manifest["deleted_facts"]
        assert fact["now"] and fact["reworded"] is False
        assert report.manifest["dropped_lines"] == 1
        assert "→ now (a number or a negation changed): " in report.text


def test_a_line_moved_into_another_memory_is_not_a_lost_fact(store):
    keeper = "project_deploy_steps.md"
    moved = store.get(keeper).text + STILL_VALID + "\n"
    plan = Plan((rewrite(store, keeper, moved),
                 rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID))))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert report.manifest["deleted_facts"] == []


def test_an_archived_memory_s_lines_are_listed_as_archived_not_counted_in_the_loss(store):
    promo = "project_autumn_promo.md"
    plan = Plan((Operation("archive", promo, "expired", store.get(promo).revision,
                           kind="expired"),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    facts = report.manifest["deleted_facts"]
    assert facts and all(f["archived"] and f["file"] == promo for f in facts)
    assert report.manifest["loss_share"] == 0
    assert (store.directory / "archive" / promo).exists()


def test_a_plan_over_the_loss_ceiling_is_refused_and_nothing_is_written(store):
    before = tree(store.directory)
    gutted = [rewrite(store, f, store.get(f).text.split("---\n", 2)[0] + "---\n"
                      + store.get(f).text.split("---\n", 2)[1] + "---\nGone.\n")
              for f in (CONTRACT, "project_legacy_build.md")]
    report = dream_run(store, settings_for(store), Plan(tuple(gutted)), apply=True)
    assert report.status == "refused"
    assert tree(store.directory) == before
    assert report.manifest["loss_share"] > 0.25
    assert report.manifest["worst"][0]["file"] in (CONTRACT, "project_legacy_build.md")
    assert "Refused" in report.manifest["notes"][0]
    assert not (store.directory / "dream").exists()
    assert report.manifest["snapshot"] is None


def test_allow_loss_applies_a_plan_over_the_ceiling(store):
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    refused = dream_run(store, settings_for(store, SAGE_MEM_DREAM_MAX_LOSS_PERCENT="0"), plan,
                        apply=True)
    assert refused.status == "refused"
    applied = dream_run(store, settings_for(store, SAGE_MEM_DREAM_MAX_LOSS_PERCENT="0"), plan,
                        apply=True, allow_loss=True)
    assert applied.status == "applied"


def test_a_memory_edited_after_planning_becomes_a_conflict_and_the_run_goes_on(store):
    stale = rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID))
    promo = "project_autumn_promo.md"
    fine = Operation("archive", promo, "expired", store.get(promo).revision, kind="expired")
    path = store.directory / CONTRACT
    path.write_text(path.read_text() + "Renewal talks start in August.\n")
    report = dream_run(store, settings_for(store), Plan((stale, fine)), apply=True)
    refused, = report.manifest["refused"]
    assert refused["file"] == CONTRACT and refused["conflict_id"]
    record = conflicts.load(store.state_dir, refused["conflict_id"])
    assert record.data["run_id"] == report.run_id
    assert [a["file"] for a in report.manifest["applied"]] == [promo]
    assert "Renewal talks" in path.read_text()


def test_an_archive_without_a_reason_is_refused_a_rewrite_without_one_is_marked(store):
    promo = "project_autumn_promo.md"
    plan = Plan((Operation("archive", promo, "", store.get(promo).revision),
                 rewrite(store, CONTRACT, store.get(CONTRACT).text + "One more line.\n",
                         reason="")))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert report.manifest["refused"][0]["why"].startswith("an archive needs a reason")
    applied, = report.manifest["applied"]
    assert applied["self_described"] is False and applied["bytes"] == len("One more line.\n")
    assert applied["lines"] == 1
    assert "*not self-described*" in report.text


def test_each_applied_operation_is_journaled_as_consolidation_with_the_run_id(store):
    promo = "project_autumn_promo.md"
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),
                 Operation("archive", promo, "expired", store.get(promo).revision)))
    report = dream_run(store, settings_for(store), plan, apply=True)
    lines = [e for e in changelog.read(store.state_dir).entries if e.run == report.run_id]
    assert {(e.file, e.op, e.writer) for e in lines} >= {
        (CONTRACT, "write", "consolidation"), (promo, "archive", "consolidation")}


def test_undo_returns_every_file_byte_for_byte(store):
    before = tree(store.directory)
    promo = "project_autumn_promo.md"
    index_text, index_revision = store.read_index()
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),
                 Operation("archive", promo, "expired", store.get(promo).revision),
                 Operation("create", "user_new_fact.md", "a new memory", None,
                           "---\nname: New fact\ndescription: d\nmetadata:\n  type: user\n"
                           "---\nA new fact.\n"),
                 Operation("rewrite", "MEMORY.md", "index", index_revision,
                           index_text + "- [Extra](extra.md) — x\n", "index")))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert len(report.manifest["applied"]) == 4
    assert tree(store.directory) != before
    undone = undo_run(store, report.run_id[:12])
    after = tree(store.directory)
    created = after.pop("archive/user_new_fact.md")
    assert created and after == before
    assert undone.left == ()
    shown = runs.load_manifest(runs.find_run(store.state_dir, report.run_id))
    assert shown["status"] == "undone"
    with pytest.raises(RunNotUndoable):
        undo_run(store, report.run_id)


def test_undo_leaves_a_file_changed_after_the_run_and_says_so(store):
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    path = store.directory / CONTRACT
    path.write_text(path.read_text() + "Edited after the run.\n")
    undone = undo_run(store, report.run_id)
    assert [s.file for s in undone.left] == [CONTRACT]
    assert "Edited after the run." in path.read_text()


def test_a_report_run_cannot_be_undone_and_an_unknown_run_is_not_found(store):
    report = dream_run(store, settings_for(store), Plan(()))
    with pytest.raises(RunNotUndoable, match="was a report"):
        undo_run(store, report.run_id)
    with pytest.raises(RunNotFound):
        undo_run(store, "19990101")


def test_a_second_run_while_one_applies_is_refused(store):
    with runs.run_lock(store.state_dir):
        plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),))
        with pytest.raises(RunInProgress):
            dream_run(store, settings_for(store), plan, apply=True)


def test_the_folder_s_dream_reports_are_no_memories(store):
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert f"{report.run_id}.md" not in " ".join(store.files())
    from sagemem.audit.report import audit

    assert not [f for f in audit(store).findings if "dream" in f.file]


def test_a_plan_that_is_not_one_is_refused_whole():
    with pytest.raises(InvalidPlan, match="not JSON"):
        loads(b"{oops")
    with pytest.raises(InvalidPlan, match=r"operation 1.*op"):
        loads(b'{"operations": [{"op": "delete", "file": "a.md"}]}')
    with pytest.raises(InvalidPlan, match="revision"):
        loads(b'{"operations": [{"op": "rewrite", "file": "a.md", "text": "x"}]}')


KILLER = textwrap.dedent("""
    import os, signal, sys
    from sagemem.config import load_settings
    from sagemem.dream import apply, run
    from sagemem.dream.plan import loads
    from sagemem.store import MemoryStore

    store = MemoryStore(sys.argv[1], sys.argv[2])
    real = apply.apply_operation
    done = []

    def dying(*args, **kwargs):
        if len(done) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        done.append(1)
        return real(*args, **kwargs)

    run.apply_operation = dying
    plan = loads(open(sys.argv[3], "rb").read())
    run.dream_run(store, load_settings(env={}, memory_dir=store.directory,
                  state_dir=store.state_dir), plan, apply=True)
""")


def test_a_run_killed_mid_way_is_reported_cut_short_and_undone_whole(store, tmp_path):
    before = tree(store.directory)
    files = [CONTRACT, "project_legacy_build.md", "feedback_standup_format.md"]
    plan = Plan(tuple(rewrite(store, f, store.get(f).text + "More.\n") for f in files))
    (tmp_path / "plan.json").write_text(plan.dumps())
    (tmp_path / "killer.py").write_text(KILLER)
    done = subprocess.run([sys.executable, str(tmp_path / "killer.py"), str(store.directory),
                           str(store.state_dir), str(tmp_path / "plan.json")],
                          cwd=Path(__file__).parent.parent, env={**os.environ})
    assert done.returncode == -signal.SIGKILL
    finished, = finish_interrupted(store)
    assert (finished.applied, finished.planned) == (2, 3)
    run_id = finished.run_id
    item = runs.load_manifest(runs.find_run(store.state_dir, run_id))
    assert item["status"] == "interrupted"
    report = (store.directory / "dream" / f"{run_id}.md").read_text()
    assert report.splitlines()[0].startswith("> **Cut short:** this run was interrupted "
                                             "after 2 of 3 operations")
    assert finish_interrupted(store) == []
    undo_run(store, run_id)
    assert tree(store.directory) == before


def test_a_line_whose_dates_were_made_absolute_is_listed_with_its_new_form_not_dropped(store):
    standup = "feedback_standup_format.md"
    from sagemem.dream.dates import absolute_dates

    memory = store.get(standup)
    text = memory.text[: len(memory.text) - len(memory.body)] + absolute_dates(
        memory.body, memory.updated)
    report = dream_run(store, settings_for(store, SAGE_MEM_DREAM_MAX_LOSS_PERCENT="0"),
                       Plan((rewrite(store, standup, text),)), apply=True)
    assert report.status == "applied"
    facts = report.manifest["deleted_facts"]
    assert facts and all("now" in f for f in facts)
    assert report.manifest["dropped_lines"] == 0
    assert "→ now: " in report.text


def test_an_apply_with_nothing_to_do_takes_no_rollback_point_and_leaves_no_report(store):
    report = dream_run(store, settings_for(store), Plan(()), apply=True)
    assert report.status == "applied" and report.manifest["snapshot"] is None
    assert not (store.directory / "dream").exists()
    with pytest.raises(RunNotUndoable, match="applied nothing"):
        undo_run(store, report.run_id)


KILL_AT = textwrap.dedent("""
    import os, signal, sys
    from sagemem.config import load_settings
    from sagemem.dream import run, runs
    from sagemem.dream.plan import loads
    from sagemem.store import MemoryStore

    store = MemoryStore(sys.argv[1], sys.argv[2])
    module, name = {"progress": (runs, "append_progress"),
                    "snapshot": (run, "create_snapshot")}[sys.argv[4]]

    def dying(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(module, name, dying)
    run.dream_run(store, load_settings(env={}, memory_dir=store.directory,
                  state_dir=store.state_dir), loads(open(sys.argv[3], "rb").read()),
                  apply=True)
""")


def killed_at(store: MemoryStore, tmp_path: Path, plan: Plan, where: str) -> None:
    (tmp_path / "plan.json").write_text(plan.dumps())
    (tmp_path / "kill_at.py").write_text(KILL_AT)
    done = subprocess.run([sys.executable, str(tmp_path / "kill_at.py"), str(store.directory),
                           str(store.state_dir), str(tmp_path / "plan.json"), where],
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == -signal.SIGKILL


def test_a_write_killed_before_its_progress_line_is_still_in_the_account_and_undone(
        store, tmp_path):
    before = tree(store.directory)
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    killed_at(store, tmp_path, plan, "progress")
    finished, = finish_interrupted(store)
    assert (finished.applied, finished.planned) == (1, 1)
    item = runs.load_manifest(runs.find_run(store.state_dir, finished.run_id))
    assert [f["text"] for f in item["deleted_facts"]] == [STILL_VALID]
    assert CONTRACT in item["changed"]
    undo_run(store, finished.run_id)
    assert tree(store.directory) == before


def test_a_run_killed_while_taking_its_rollback_point_says_nothing_changed(store, tmp_path):
    before = tree(store.directory)
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),))
    killed_at(store, tmp_path, plan, "snapshot")
    finished, = finish_interrupted(store)
    item = runs.load_manifest(runs.find_run(store.state_dir, finished.run_id))
    assert item["status"] == "interrupted" and item["applied"] == []
    assert "nothing in the folder changed" in item["cut_short"]
    assert tree(store.directory) == before
    with pytest.raises(RunNotUndoable):
        undo_run(store, finished.run_id)


def test_a_plan_naming_a_memory_in_another_case_is_accounted_as_the_file_on_disk(store):
    before = tree(store.directory)
    memory = store.get(CONTRACT)
    shouting = CONTRACT.upper().replace(".MD", ".md")
    plan = Plan((Operation("rewrite", shouting, "shorter", memory.revision,
                           memory.text.replace(STILL_VALID + "\n", "")),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert [f["file"] for f in report.manifest["deleted_facts"]] == [CONTRACT]
    assert CONTRACT in report.manifest["changed"]
    undo_run(store, report.run_id)
    assert tree(store.directory) == before


def test_archiving_more_than_the_ceiling_of_the_folder_s_lines_needs_allow_loss(store):
    before = tree(store.directory)
    plan = Plan(tuple(Operation("archive", f, "tidy", store.get(f).revision)
                      for f in store.files()[:6]))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert report.status == "refused" and report.manifest["archive_share"] > 0.25
    assert "the archives would take" in report.manifest["notes"][0]
    assert tree(store.directory) == before
    applied = dream_run(store, settings_for(store), plan, apply=True, allow_loss=True)
    assert len(applied.manifest["applied"]) == 6


def test_a_secret_in_a_planned_text_never_reaches_the_report_or_the_run_s_files(store):
    secret = "postgres://app:Xk39vQ7mZp2Lw8Rt@db.internal:5432/prod"
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + f"DB: {secret}\n",
                         reason=f"added {secret}"),))
    for apply in (False, True):
        report = dream_run(store, settings_for(store), plan, apply=apply)
        run = runs.find_run(store.state_dir, report.run_id)
        kept = [p.read_text() for p in run.path.iterdir()]
        assert secret not in report.text and not any(secret in t for t in kept)
    assert secret not in store.get(CONTRACT).text
    assert not any(secret in p.read_text() for p in (store.directory / "dream").iterdir())


def test_an_unreadable_memory_is_left_as_it_is_and_said_so(store):
    bad = store.directory / "user_bad_bytes.md"
    bad.write_bytes(b"---\nname: x\n---\n\xff\xfe\n")
    plan = Plan((Operation("archive", bad.name, "tidy", "0" * 64),))
    report = dream_run(store, settings_for(store), plan, apply=True)
    assert report.manifest["refused"][0]["why"].startswith(f"{bad.name} cannot be read")
    assert bad.exists()


def test_the_llm_key_is_taken_out_of_everything_a_model_wrote():
    from sagemem.dream.planners import without_key

    key = "sk-test-0123456789abcdef"
    plan = Plan((Operation("create", "user_x.md", f"because {key}", None, f"text {key}\n"),),
                "llm", (f"note {key}",))
    clean = without_key(plan, key)
    assert key not in clean.dumps() and "<REDACTED:llm_key>" in clean.dumps()


def test_a_plan_too_deep_or_with_a_lone_surrogate_is_refused_whole():
    with pytest.raises(InvalidPlan, match="nested too deeply"):
        loads("[" * 100_000)
    with pytest.raises(InvalidPlan, match="lone surrogate"):
        loads('{"operations": [{"op": "create", "file": "a.md", "text": "a\\ud800b"}]}')


def test_a_run_that_cannot_keep_its_account_mid_way_says_what_may_have_changed(
        store, monkeypatch):
    from sagemem.errors import RunIncomplete, WriteFailed

    before = tree(store.directory)

    def full(*_args, **_kwargs):
        raise WriteFailed(store.state_dir / "dream", "No space left on device")

    monkeypatch.setattr(runs, "append_progress", full)
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),))
    with pytest.raises(RunIncomplete, match="some operations may have been applied") as caught:
        dream_run(store, settings_for(store), plan, apply=True)
    assert "nothing was changed" not in str(caught.value)
    monkeypatch.undo()
    finished, = finish_interrupted(store)
    assert finished.applied == 1
    undo_run(store, finished.run_id)
    assert tree(store.directory) == before


def test_an_index_rewrite_that_unlists_a_live_memory_says_which_line_went(store):
    text, revision = store.read_index()
    kept = "\n".join(line for line in text.split("\n") if CONTRACT not in line
                     and "project_autumn_promo.md" not in line)
    text_without = kept.replace("](project_legacy_build.md)", "](gone.md)")
    plan = Plan((Operation("rewrite", "MEMORY.md", "shorter", revision, text_without,
                           "index"),))
    for apply in (False, True):
        facts = dream_run(store, settings_for(store), plan, apply=apply
                          ).manifest["deleted_facts"]
        assert {f["file"] for f in facts} == {"MEMORY.md"}
        assert any("project_autumn_promo.md" in f["text"] for f in facts)
        assert any("project_legacy_build.md" in f["text"] for f in facts)


def test_a_rewrite_lists_the_frontmatter_fields_it_changes(store):
    memory = store.get(CONTRACT)
    text = memory.text.replace(f"description: {memory.description}", "description: shorter")
    report = dream_run(store, settings_for(store), Plan((rewrite(store, CONTRACT, text),)))
    assert report.manifest["planned"][0]["fields_changed"] == ["description"]
    assert "(fields changed: description)" in report.text


def test_a_plan_applied_twice_is_nothing_to_do_the_second_time(store):
    promo = "project_autumn_promo.md"
    plan = Plan((rewrite(store, CONTRACT, store.get(CONTRACT).text + "More.\n"),
                 Operation("archive", promo, "expired", store.get(promo).revision)))
    dream_run(store, settings_for(store), plan, apply=True)
    records = len(conflicts.list_conflicts(store.state_dir))
    again = dream_run(store, settings_for(store), plan, apply=True)
    assert again.manifest["snapshot"] is None and again.manifest["applied"] == []
    assert [r["why"].split(":")[0] for r in again.manifest["refused"]] == [
        f"{CONTRACT} already reads as planned", f"{promo} is in archive/ already"]
    assert len(conflicts.list_conflicts(store.state_dir)) == records


def test_an_applied_run_reports_its_operations_up_to_the_total(store):
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    calls: list[tuple[int, int, str]] = []
    report = dream_run(store, settings_for(store), plan, apply=True, allow_loss=True,
                       progress=lambda done, total, what: calls.append((done, total, what)))
    assert report.status == "applied"
    assert [(d, t) for d, t, w in calls if w == "applying"] == [(0, 1), (1, 1)]


def test_a_report_only_run_reports_no_progress(store):
    plan = Plan((rewrite(store, CONTRACT, without_line(store, CONTRACT, STILL_VALID)),))
    calls: list[tuple[int, int, str]] = []
    dream_run(store, settings_for(store), plan,
              progress=lambda done, total, what: calls.append((done, total, what)))
    assert calls == []
