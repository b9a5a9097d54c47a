"""``sagemem dream plan|run|history|show|undo`` and ``sagemem recover`` through the real
surface: subprocesses as a shell runs them, and in-process over the same folders (the
dream fixture and a copy of ``sample_memory/``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_run import Result, one_line_error, sagemem, store_runner
from dream_fixture import DEPLOY_CHECKLIST, DEPLOY_STEPS, make_dream_folder
from scripted_llm import ScriptedLlm, answer, llm_server, tool_calls

from sagemem.dream.plan import Operation, Plan
from sagemem.store import MemoryStore

__all__ = ["llm_server"]  # the fixture, imported for pytest to find

ROOT = Path(__file__).parent.parent
CONTRACT = "project_vendor_contract.md"
LEGACY = "project_legacy_build.md"
READ_TOOLS = {"list_memories", "read_memory"}
WRITE_TOOLS = {"rewrite_memory", "create_memory", "archive_memory"}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


@pytest.fixture
def sample(tmp_path: Path) -> MemoryStore:
    shutil.copytree(ROOT / "sample_memory", tmp_path / "sample")
    return MemoryStore(tmp_path / "sample", tmp_path / "sample-state")


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], store: MemoryStore):
    return store_runner(capsys, store)


def tree(folder: Path) -> dict[str, str]:
    """Every file under the folder but the dream/ reports, by hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()
            and p.relative_to(folder).parts[0] != "dream"}


def ok_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def body_lines(text: str) -> list[str]:
    return text.split("---\n", 2)[2].splitlines()


def gutted(store: MemoryStore, *files: str) -> Plan:
    """A plan rewriting each file to one line: far over the 25% ceiling."""
    ops = []
    for file in files:
        memory = store.get(file)
        head = memory.text[: len(memory.text) - len(memory.body)]
        ops.append(Operation("rewrite", file, "shortened", memory.revision, head + "Gone.\n"))
    return Plan(tuple(ops))


# -- report, show, history -------------------------------------------------------------

def test_a_report_run_changes_no_file_and_prints_the_markdown_report(store):
    before = tree(store.directory)
    done = sagemem(store, "dream", "run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("# Consolidation run ")
    assert "report only: nothing in the folder changed" in done.stdout
    assert tree(store.directory) == before and not (store.directory / "dream").exists()


def test_run_json_carries_the_manifest_and_show_returns_the_same(store):
    item = ok_json(sagemem(store, "dream", "run", "--json"))
    assert {"run_id", "applied", "refused", "deleted_facts", "loss_share"} <= item.keys()
    assert item["status"] == "report" and item["applied"] == [] and item["planned"]
    fact = item["deleted_facts"][0]
    assert {"file", "line", "text"} <= fact.keys() and isinstance(fact["line"], int)
    assert ok_json(sagemem(store, "dream", "show", item["run_id"], "--json")) == item
    shown = sagemem(store, "dream", "show", item["run_id"][:17])
    assert shown.stdout.startswith(f"# Consolidation run {item['run_id']}")


def test_history_lists_a_run_in_text_and_json(store, cli):
    run_id = json.loads(cli("dream", "run", "--json").out)["run_id"]
    text = cli("dream", "history")
    assert text.code == 0 and text.out.startswith(run_id) and "report" in text.out
    rows = json.loads(cli("dream", "history", "--json").out)["runs"]
    assert [(r["run_id"], r["status"], r["planner"]) for r in rows] == [
        (run_id, "report", "tidy")]


def test_history_of_a_folder_with_no_runs_says_so(cli):
    assert cli("dream", "history").out.startswith("no consolidation runs yet")


def test_plan_prints_the_brief_and_changes_nothing(store, cli):
    before = tree(store.directory)
    assert cli("dream", "plan").code == 0
    assert json.loads(cli("dream", "plan", "--json").out)
    assert tree(store.directory) == before


# -- apply with the tidy planner ---------------------------------------------------------

def test_apply_tidies_the_fixture_and_loses_no_line(store):
    done = sagemem(store, "dream", "run", "--apply", "--json")
    item = ok_json(done)
    assert item["status"] == "applied" and item["refused"] == []
    folder = store.directory
    standup = (folder / "feedback_standup_format.md").read_text()
    assert "on 2026-03-14" in standup and "yesterday" not in standup
    lunch = (folder / "user_team_lunch.md").read_text()
    assert "2026年6月9日" in lunch and "昨天" not in lunch
    merged = (folder / "project_deploy_steps.md").read_text()
    for line in {*body_lines(DEPLOY_CHECKLIST), *body_lines(DEPLOY_STEPS)}:
        assert line in merged.splitlines(), line
    for gone in ("project_deploy_checklist.md", "project_autumn_promo.md", LEGACY,
                 "reference_office_wifi_copy.md"):
        assert not (folder / gone).exists() and (folder / "archive" / gone).exists()
    index = (folder / "MEMORY.md").read_text()
    assert "project_retired_runbook.md" not in index and CONTRACT in index
    assert b"\r\n" not in (folder / "reference_release_links.md").read_bytes()
    assert (folder / "dream" / f"{item['run_id']}.md").read_text().startswith(
        f"# Consolidation run {item['run_id']}")


def test_applied_writes_show_in_the_log_as_consolidation(store, cli):
    assert cli("dream", "run", "--apply").code == 0
    log = cli("log").out
    assert "consolidation" in log and "feedback_standup_format.md" in log
    assert all("consolidation" in line for line in log.splitlines()
               if line.startswith("20"))


def test_a_second_apply_plans_nothing_new(store, cli):
    assert cli("dream", "run", "--apply").code == 0
    after = tree(store.directory)
    again = json.loads(cli("dream", "run", "--apply", "--json").out)
    assert again["operations"] == [] and tree(store.directory) == after


def test_undo_returns_every_file_byte_for_byte(store):
    before = tree(store.directory)
    run_id = ok_json(sagemem(store, "dream", "run", "--apply", "--json"))["run_id"]
    assert tree(store.directory) != before
    done = sagemem(store, "dream", "undo", run_id, "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"undid run {run_id}: ")
    assert tree(store.directory) == before  # tidy creates no file: nothing in archive/
    shown = ok_json(sagemem(store, "dream", "show", run_id, "--json"))
    assert shown["status"] == "undone"


def test_the_sample_folder_is_applied_and_undone_byte_for_byte(sample):
    before = tree(sample.directory)
    item = ok_json(sagemem(sample, "dream", "run", "--apply", "--json"))
    assert item["applied"] and tree(sample.directory) != before
    assert sagemem(sample, "dream", "undo", item["run_id"], "--yes").returncode == 0
    assert tree(sample.directory) == before


# -- plan files, stdin, the ceiling ------------------------------------------------------

def test_a_plan_file_is_applied(store, tmp_path):
    memory = store.get(CONTRACT)
    plan = Plan((Operation("rewrite", CONTRACT, "one more fact", memory.revision,
                           memory.text + "Renewal talks start in August.\n"),))
    (tmp_path / "plan.json").write_text(plan.dumps())
    item = ok_json(sagemem(store, "dream", "run", "--planner", str(tmp_path / "plan.json"),
                           "--apply", "--json"))
    assert [a["file"] for a in item["applied"]] == [CONTRACT]
    assert "Renewal talks" in (store.directory / CONTRACT).read_text()


def test_a_plan_on_stdin_is_reported(store, cli):
    memory = store.get(CONTRACT)
    plan = Plan((Operation("rewrite", CONTRACT, "one more fact", memory.revision,
                           memory.text + "More.\n"),))
    result = cli("dream", "run", "--planner", "-", "--json", stdin=plan.dumps())
    item = json.loads(result.out)
    assert item["status"] == "report" and item["planned"][0]["file"] == CONTRACT
    assert "More." not in (store.directory / CONTRACT).read_text()


def test_a_plan_over_the_ceiling_exits_1_changes_nothing_and_allow_loss_applies_it(
        store, tmp_path):
    (tmp_path / "plan.json").write_text(gutted(store, CONTRACT, LEGACY).dumps())
    before = tree(store.directory)
    refused = sagemem(store, "dream", "run", "--planner", str(tmp_path / "plan.json"),
                      "--apply")
    assert refused.returncode == 1
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ceiling" in errors[0] and "Traceback" not in refused.stderr
    assert tree(store.directory) == before and not (store.directory / "dream").exists()
    applied = sagemem(store, "dream", "run", "--planner", str(tmp_path / "plan.json"),
                      "--apply", "--allow-loss", "--json")
    assert ok_json(applied)["status"] == "applied"
    assert (store.directory / CONTRACT).read_text().endswith("---\nGone.\n")


# -- bad input: one error line, nothing changed ------------------------------------------

def unchanged_error(store: MemoryStore, *args: str, stdin: str | None = None) -> str:
    before = tree(store.directory)
    done = sagemem(store, *args, stdin=stdin)
    message = one_line_error(Result(done.returncode, done.stdout, done.stderr))
    assert tree(store.directory) == before
    return message


def test_a_missing_plan_file_is_one_error(store, tmp_path):
    message = unchanged_error(store, "dream", "run", "--apply", "--planner",
                              str(tmp_path / "nope.json"))
    assert "nope.json" in message


def test_a_plan_that_is_not_json_is_one_error(store, tmp_path):
    (tmp_path / "bad.json").write_text("{oops")
    assert "not JSON" in unchanged_error(store, "dream", "run", "--apply", "--planner",
                                         str(tmp_path / "bad.json"))
    assert "not JSON" in unchanged_error(store, "dream", "run", "--apply", "--planner", "-",
                                         stdin="{oops")


def test_an_unknown_op_is_one_error(store, tmp_path):
    (tmp_path / "op.json").write_text('{"operations": [{"op": "delete", "file": "a.md"}]}')
    assert '"op" must be one of' in unchanged_error(
        store, "dream", "run", "--apply", "--planner", str(tmp_path / "op.json"))


def test_show_of_no_such_run_is_one_error(store):
    assert "nosuchrun" in unchanged_error(store, "dream", "show", "nosuchrun")


def test_undo_of_a_report_run_is_one_error(store, cli):
    run_id = json.loads(cli("dream", "run", "--json").out)["run_id"]
    assert "was a report" in unchanged_error(store, "dream", "undo", run_id, "--yes")


def test_a_missing_memory_folder_is_one_error(tmp_path):
    missing = MemoryStore(tmp_path / "nowhere", tmp_path / "state")
    for args in (("dream", "run"), ("dream", "run", "--apply"), ("dream", "plan")):
        done = sagemem(missing, *args)
        assert "does not exist" in one_line_error(Result(done.returncode, done.stdout,
                                                         done.stderr))
    assert not (tmp_path / "nowhere").exists()


def test_history_show_and_undo_of_a_missing_memory_folder_are_one_error(tmp_path):
    """Bug: history printed "no consolidation runs yet" and exited 0, show and undo said
    "no consolidation run" — a mistyped --dir looked like a folder never tidied."""
    missing = MemoryStore(tmp_path / "nowhere", tmp_path / "state")
    for args in (("dream", "history"), ("dream", "show", "2026"),
                 ("dream", "undo", "2026", "--yes")):
        done = sagemem(missing, *args)
        assert "does not exist" in one_line_error(Result(done.returncode, done.stdout,
                                                         done.stderr)), args


def test_an_apply_while_another_run_holds_the_lock_is_one_error(store):
    from sagemem.dream import runs

    with runs.run_lock(store.state_dir):
        unchanged_error(store, "dream", "run", "--apply")


def test_the_llm_planner_with_no_endpoint_is_one_error(store):
    assert "SAGE_MEM_DREAM_LLM_URL" in unchanged_error(store, "dream", "run", "--planner",
                                                       "llm")


# -- the LLM planner end to end ------------------------------------------------------------

@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLlm) -> ScriptedLlm:
    monkeypatch.setenv("SAGE_MEM_DREAM_LLM_URL", llm_server.url)
    monkeypatch.setenv("SAGE_MEM_DREAM_LLM_MODEL", "test-model")
    monkeypatch.setenv("SAGE_MEM_DREAM_LLM_KEY", "sk-test-0123456789abcdef")
    return llm_server


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def test_llm_report_offers_only_read_tools_and_changes_nothing(store, llm_env):
    llm_env.script = [answer('{"operations": []}')]
    before = tree(store.directory)
    item = ok_json(sagemem(store, "dream", "run", "--planner", "llm", "--json"))
    assert item["status"] == "report" and item["planner"] == "llm"
    assert tool_names(llm_env.chat_requests[0].body) == READ_TOOLS
    assert llm_env.chat_requests[0].headers["Authorization"] == (
        "Bearer sk-test-0123456789abcdef")
    assert tree(store.directory) == before


def test_llm_apply_offers_write_tools_and_applies_the_queued_operations(store, llm_env):
    legacy = store.get(LEGACY).revision
    llm_env.script = [tool_calls(("archive_memory", {"file": LEGACY, "revision": legacy,
                                                     "reason": "the build is retired",
                                                     "kind": "idle"})),
                      answer("Done.")]
    item = ok_json(sagemem(store, "dream", "run", "--planner", "llm", "--apply", "--json"))
    assert tool_names(llm_env.chat_requests[0].body) == READ_TOOLS | WRITE_TOOLS
    assert [(a["op"], a["file"]) for a in item["applied"]] == [("archive", LEGACY)]
    assert (store.directory / "archive" / LEGACY).exists()


def test_llm_with_an_unknown_model_is_one_error_and_no_chat(store, llm_env):
    llm_env.models = ["other-model"]
    assert "test-model" in unchanged_error(store, "dream", "run", "--planner", "llm")
    assert llm_env.chat_requests == []


# -- a run killed mid-way ------------------------------------------------------------------

KILLER = textwrap.dedent("""
    import os, signal, sys
    from sagemem.cli import main
    from sagemem.dream import run

    real = run.apply_operation
    done = []

    def dying(*args, **kwargs):
        if len(done) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        done.append(1)
        return real(*args, **kwargs)

    run.apply_operation = dying
    main(["--dir", sys.argv[1], "--state-dir", sys.argv[2], "dream", "run", "--apply"])
""")


def test_a_killed_run_is_reported_by_recover_and_undone(store, tmp_path):
    before = tree(store.directory)
    (tmp_path / "killer.py").write_text(KILLER)
    killed = subprocess.run([sys.executable, str(tmp_path / "killer.py"), str(store.directory),
                             str(store.state_dir)], cwd=ROOT, env={**os.environ},
                            capture_output=True, timeout=60, check=False)
    assert killed.returncode == -signal.SIGKILL
    done = sagemem(store, "recover")
    assert done.returncode == 0, done.stderr
    line, = [x for x in done.stdout.splitlines() if "dream run" in x]
    assert "interrupted after 3 of 9 operations" in line
    run_id = line.split("dream run ")[1].split(":")[0]
    shown = ok_json(sagemem(store, "dream", "show", run_id, "--json"))
    assert shown["status"] == "interrupted" and len(shown["applied"]) == 3
    assert (store.directory / "dream" / f"{run_id}.md").read_text().startswith(
        "> **Cut short:**")
    assert sagemem(store, "recover").stdout.strip() == "nothing to recover"
    assert sagemem(store, "dream", "undo", run_id, "--yes").returncode == 0
    assert tree(store.directory) == before


def test_a_report_sizes_the_index_rewrite_as_the_run_applies_it(store, cli):
    planned = json.loads(cli("dream", "run", "--json").out)["planned"]
    applied = json.loads(cli("dream", "run", "--apply", "--json").out)["applied"]
    size = {(o["file"], o["bytes"], o["lines"]) for o in planned if o["file"] == "MEMORY.md"}
    assert size == {(o["file"], o["bytes"], o["lines"]) for o in applied
                    if o["file"] == "MEMORY.md"}
