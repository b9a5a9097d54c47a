"""``archive``, ``restore``, ``purge``, ``lock``, ``unlock``, ``locks`` and
``archive candidates`` from the shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from sagemem.cli import base as cli
from sagemem.store import MemoryStore
from tests.cli_run import Run, one_line_error, store_runner

RESULT_KEYS = {"version", "time", "action", "file", "reason", "by", "index_changed", "dry_run"}
CANDIDATE_KEYS = {"file", "type", "idle_days", "threshold", "last_active", "source", "why"}




@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    store = MemoryStore(directory, tmp_path / "state")
    store.new(type="project", name="Deploy", description="How we deploy", body="kubectl\n")
    store.new(type="project", name="Old", description="An old plan", body="ancient\n",
              today=date(2020, 1, 1))
    store.new(type="user", name="Prefs", description="Tea, not coffee",
              today=date(2020, 1, 1))
    return store


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend stdin is a terminal, so the commands ask."""
    monkeypatch.setattr(cli, "interactive", lambda: True)



def tree(store: MemoryStore) -> dict[str, bytes]:
    return {str(p.relative_to(store.directory.parent)): p.read_bytes()
            for p in sorted(store.directory.parent.rglob("*"))
            if p.is_file() and "locks" not in p.parts and "index" not in p.parts}


def here(store: MemoryStore, file: str) -> bool:
    return (store.directory / file).exists()


def archived(store: MemoryStore, file: str) -> bool:
    return (store.archive_dir / file).exists()


# -- archive / restore --------------------------------------------------------------------


def test_archive_then_restore(run: Run, store: MemoryStore) -> None:
    result = run("archive", "project_deploy", "--reason", "shipped")
    assert (result.code, result.out) == (0, "archived  project_deploy.md  (index line removed)\n")
    assert archived(store, "project_deploy.md") and not here(store, "project_deploy.md")
    result = run("restore", "project_deploy")
    assert (result.code, result.out) == (0, "restored  project_deploy.md  (index line added)\n")
    assert "(project_deploy.md)" in (store.directory / "MEMORY.md").read_text()


def test_archive_json_is_the_log_line_and_what_changed(run: Run) -> None:
    data = json.loads(run("archive", "project_deploy", "--reason", "x", "--json").out)
    assert set(data) == RESULT_KEYS
    assert (data["action"], data["file"], data["reason"], data["by"]) == (
        "archive", "project_deploy.md", "x", "cli")


def test_archive_without_a_reason_is_a_usage_error(run: Run, store: MemoryStore) -> None:
    assert "--reason" in one_line_error(run("archive", "project_deploy"), 2)
    assert here(store, "project_deploy.md")


def test_archive_of_a_locked_memory_says_locked(run: Run, store: MemoryStore) -> None:
    assert run("lock", "project_deploy").code == 0
    err = one_line_error(run("archive", "project_deploy", "--reason", "x", "--yes"))
    assert err.startswith("error: locked: project_deploy.md")
    assert here(store, "project_deploy.md")


@pytest.mark.parametrize("args", [
    pytest.param(["archive", "project_nope", "--reason", "x"], id="archive"),
    pytest.param(["restore", "project_nope"], id="restore"),
    pytest.param(["purge", "project_nope", "--yes"], id="purge"),
    pytest.param(["lock", "project_nope"], id="lock"),
    pytest.param(["unlock", "project_nope"], id="unlock"),
])
def test_an_unknown_memory_is_one_line_exit_1(run: Run, args: list[str]) -> None:
    assert "project_nope.md" in one_line_error(run(*args))


def test_name_collisions_move_nothing(run: Run, store: MemoryStore) -> None:
    run("archive", "project_deploy", "--reason", "x")
    (store.directory / "project_deploy.md").write_text("a new one\n")
    before = tree(store)
    assert "already exists" in one_line_error(run("restore", "project_deploy", "--yes"))
    assert "already exists" in one_line_error(run("archive", "project_deploy", "--reason", "y"))
    assert tree(store) == before


@pytest.mark.parametrize("args", [
    ["archive", "project_deploy", "--reason", "x", "--dry-run"],
    ["lock", "project_deploy", "--dry-run"],
])
def test_dry_run_changes_nothing(run: Run, store: MemoryStore, args: list[str]) -> None:
    before = tree(store)
    result = run(*args)
    assert result.code == 0 and result.out.startswith("would")
    assert tree(store) == before


def test_on_a_terminal_archive_asks_and_no_keeps_it(run: Run, store: MemoryStore,
                                                    terminal: None) -> None:
    result = run("archive", "project_deploy", "--reason", "x", stdin="n\n")
    assert result.code == 1 and "archive project_deploy.md (reason: x)?" in result.err
    assert here(store, "project_deploy.md")
    assert run("archive", "project_deploy", "--reason", "x", stdin="y\n").code == 0
    assert archived(store, "project_deploy.md")


def test_a_terminal_question_is_skipped_with_yes(run: Run, store: MemoryStore,
                                                 terminal: None) -> None:
    result = run("archive", "project_deploy", "--reason", "x", "--yes", "--json")
    assert result.code == 0 and json.loads(result.out)["file"] == "project_deploy.md"


def test_a_memory_named_candidates_is_reachable_with_md(run: Run, store: MemoryStore) -> None:
    (store.directory / "candidates.md").write_text("---\ndescription: x\n---\n")
    assert run("archive", "candidates.md", "--reason", "x").code == 0
    assert archived(store, "candidates.md")


def test_archive_candidates_with_a_reason_is_a_usage_error(run: Run) -> None:
    assert "candidates.md" in one_line_error(run("archive", "candidates", "--reason", "x"), 2)


def test_apply_without_candidates_listing_is_a_usage_error(run: Run, store: MemoryStore) -> None:
    err = one_line_error(run("archive", "project_deploy", "--reason", "x", "--apply"), 2)
    assert "--apply: only with `archive candidates`" in err
    assert not archived(store, "project_deploy.md")


# -- purge --------------------------------------------------------------------------------


def test_purge_off_a_terminal_needs_yes(run: Run, store: MemoryStore) -> None:
    run("archive", "project_deploy", "--reason", "x")
    assert "--yes" in one_line_error(run("purge", "project_deploy"), 2)
    assert archived(store, "project_deploy.md")
    result = run("purge", "project_deploy", "--yes", "--json")
    assert result.code == 0 and json.loads(result.out)["action"] == "purge"
    assert not archived(store, "project_deploy.md")


def test_purge_asks_saying_it_is_irreversible(run: Run, store: MemoryStore,
                                             terminal: None) -> None:
    run("archive", "project_deploy", "--reason", "x", "--yes")
    result = run("purge", "project_deploy", stdin="n\n")
    assert result.code == 1 and "irreversible" in result.err
    assert archived(store, "project_deploy.md")


def test_purge_of_a_live_memory_is_refused_before_asking(run: Run, store: MemoryStore,
                                                         terminal: None) -> None:
    err = one_line_error(run("purge", "project_deploy", stdin="y\n"))
    assert "not archived" in err and "archive it first" in err
    assert here(store, "project_deploy.md")


def test_purge_of_a_locked_memory_is_refused(run: Run, store: MemoryStore) -> None:
    run("archive", "project_deploy", "--reason", "x")
    run("lock", "project_deploy")
    assert one_line_error(run("purge", "project_deploy", "--yes")).startswith("error: locked:")
    assert archived(store, "project_deploy.md")


# -- locks --------------------------------------------------------------------------------


def test_lock_unlock_and_list(run: Run) -> None:
    assert run("lock", "user_prefs").out == "locked  user_prefs.md\n"
    assert run("lock", "user_prefs").out == "already locked  user_prefs.md  (nothing to do)\n"
    listed = json.loads(run("locks", "--json").out)
    assert [(lk["file"], lk["where"]) for lk in listed["locks"]] == [("user_prefs.md", "memory")]
    assert run("locks").out.startswith("user_prefs.md  locked since ")
    assert run("unlock", "user_prefs").out == "unlocked  user_prefs.md\n"
    assert run("unlock", "user_prefs").out == "not locked  user_prefs.md  (nothing to do)\n"
    assert run("locks").out == "(no locked memories)\n"


def test_lock_json(run: Run) -> None:
    assert json.loads(run("lock", "user_prefs", "--json").out) == {
        "version": 1, "file": "user_prefs.md", "locked": True, "changed": True,
        "dry_run": False}


def test_a_malformed_locks_file_is_one_line_exit_1(run: Run, store: MemoryStore) -> None:
    (store.state_dir / "locked.json").write_text("{oops")
    assert "locked.json" in one_line_error(run("lock", "user_prefs"))
    assert "locked.json" in one_line_error(run("archive", "project_deploy", "--reason", "x"))


# -- candidates ---------------------------------------------------------------------------


def test_candidates_list_says_why(run: Run) -> None:
    result = run("archive", "candidates")
    assert result.code == 0
    lines = result.out.splitlines()
    first = " ".join(result.out.split("\nidle-days")[0].split())  # wrapped at 80 columns
    assert first.startswith("project_old.md [project] idle ")
    assert first.endswith("(updated 2020-01-01; never read or used) ≥ project threshold 90")
    assert lines[-1] == ("idle-days thresholds: user never, feedback 365, project 90, "
                         "reference 180")


def test_candidates_json(run: Run, store: MemoryStore) -> None:
    run("lock", "project_old")
    data = json.loads(run("archive", "candidates", "--json").out)
    assert data["candidates"] == [] and data["thresholds"]["project"] == 90
    assert set(data["locked"][0]) == CANDIDATE_KEYS


def test_candidate_thresholds_come_from_settings(run: Run, store: MemoryStore) -> None:
    (store.state_dir / "settings.json").write_text('{"idle_days_user": 30}')
    files = [c["file"] for c in json.loads(run("archive", "candidates", "--json").out)
             ["candidates"]]
    assert files == ["project_old.md", "user_prefs.md"]


def test_apply_off_a_terminal_needs_yes(run: Run, store: MemoryStore) -> None:
    assert "--yes" in one_line_error(run("archive", "candidates", "--apply"), 2)
    assert here(store, "project_old.md")


def test_apply_dry_run_says_what_would_go(run: Run, store: MemoryStore) -> None:
    result = run("archive", "candidates", "--apply", "--dry-run")
    assert result.out.startswith("would archive  project_old.md")
    assert here(store, "project_old.md")


def test_apply_with_yes_archives_all_with_their_why(run: Run, store: MemoryStore) -> None:
    (store.state_dir / "settings.json").write_text('{"idle_days_user": 30}')
    data = json.loads(run("archive", "candidates", "--apply", "--yes", "--json").out)
    assert data["applied"] == {"archived": ["project_old.md", "user_prefs.md"], "skipped": [],
                               "failed": []}
    log = [json.loads(line) for line in
           (store.state_dir / "archive.jsonl").read_text().splitlines()]
    assert {e["by"] for e in log} == {"candidates"}
    assert log[0]["reason"].startswith("idle ")


def test_apply_asks_per_memory(run: Run, store: MemoryStore, terminal: None) -> None:
    (store.state_dir / "settings.json").write_text('{"idle_days_user": 30}')
    result = run("archive", "candidates", "--apply", stdin="n\ny\n")
    assert result.code == 0 and "[y/n/a(ll)/q(uit)]" in result.err
    assert here(store, "project_old.md") and archived(store, "user_prefs.md")


def test_apply_quit_stops_and_all_takes_the_rest(run: Run, store: MemoryStore,
                                                terminal: None) -> None:
    (store.state_dir / "settings.json").write_text('{"idle_days_user": 30}')
    data = json.loads(run("archive", "candidates", "--apply", "--json", stdin="q\n").out)
    assert data["applied"]["skipped"] == ["project_old.md", "user_prefs.md"]
    data = json.loads(run("archive", "candidates", "--apply", "--json", stdin="a\n").out)
    assert data["applied"]["archived"] == ["project_old.md", "user_prefs.md"]


def test_apply_ends_with_a_summary_even_when_every_answer_is_no(
        run: Run, store: MemoryStore, terminal: None) -> None:
    # click's prompt echoes the space after the question through input(), to stdout
    result = run("archive", "candidates", "--apply", stdin="n\n")
    assert result.code == 0 and result.out.strip() == "0 archived, 1 skipped"
    result = run("archive", "candidates", "--apply", stdin="q\n")
    assert result.out.strip() == "0 archived, 1 skipped"
    assert here(store, "project_old.md")


def test_a_failed_candidate_costs_no_other(run: Run, store: MemoryStore) -> None:
    (store.state_dir / "settings.json").write_text('{"idle_days_user": 30}')
    store.archive_dir.mkdir()
    (store.archive_dir / "project_old.md").write_text("taken\n")
    result = run("archive", "candidates", "--apply", "--yes")
    assert result.code == 1 and "project_old.md" in result.err
    assert result.out.endswith("1 archived, 0 skipped, 1 failed\n")
    assert archived(store, "user_prefs.md") and here(store, "project_old.md")


# -- search, list, show -------------------------------------------------------------------


@pytest.mark.parametrize("args", [("show", "user_prefs"), ("list",), ("search", "tea"),
                                  ("locks",)], ids=" ".join)
def test_read_commands_run_with_a_warning_under_an_illegal_idle_setting(
        run: Run, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    monkeypatch.setenv("SAGE_MEM_IDLE_DAYS_USER", "-5")
    result = run(*args)
    assert result.code == 0, result
    warning = [line for line in result.err.splitlines() if line.startswith("warning: ")]
    assert len(warning) == 1 and "SAGE_MEM_IDLE_DAYS_USER = '-5'" in warning[0]


@pytest.mark.parametrize("args", [(), ("--apply", "--yes"), ("--apply", "--dry-run")],
                         ids=" ".join)
def test_candidates_refuse_an_illegal_idle_setting_and_archive_nothing(
        run: Run, store: MemoryStore, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...]) -> None:
    monkeypatch.setenv("SAGE_MEM_IDLE_DAYS_USER", "-5")
    result = run("archive", "candidates", *args)
    assert result.code == 1 and result.out == ""
    assert result.err.splitlines()[-1].startswith("error: SAGE_MEM_IDLE_DAYS_USER = '-5'")
    assert here(store, "project_old.md") and here(store, "user_prefs.md")


def test_search_includes_the_archive_only_when_asked(run: Run) -> None:
    run("archive", "project_deploy", "--reason", "x")
    assert json.loads(run("search", "kubectl", "--json").out)["results"] == []
    results = json.loads(run("search", "kubectl", "--include-archived", "--json").out)["results"]
    assert [(r["file"], r["archived"]) for r in results] == [("project_deploy.md", True)]
    assert "(archived)" in run("search", "kubectl", "--include-archived").out


def test_inject_never_includes_archived_memories(run: Run) -> None:
    run("archive", "project_deploy", "--reason", "x")
    assert "kubectl" not in run("inject", "how do we deploy with kubectl").out


def test_list_and_show_still_see_archived_memories(run: Run) -> None:
    run("archive", "project_deploy", "--reason", "x")
    listed = {m["file"]: m["archived"] for m in json.loads(run("list", "--json").out)["memories"]}
    assert listed["project_deploy.md"] is True
    assert "project_deploy.md" not in run("list", "--active").out
    assert json.loads(run("show", "project_deploy", "--archived", "--json").out)["archived"]
    assert "it is archived" in one_line_error(run("show", "project_deploy"))


def test_commands_in_a_real_process(store: MemoryStore, tmp_path: Path) -> None:
    base = [sys.executable, "-m", "sagemem", "--dir", str(store.directory),
            "--state-dir", str(store.state_dir)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    done = subprocess.run([*base, "archive", "project_deploy", "--reason", "x", "--json"],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                          check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["action"] == "archive"
    refused = subprocess.run([*base, "purge", "project_deploy"], capture_output=True,
                             text=True, env=env, stdin=subprocess.DEVNULL, check=False)
    assert refused.returncode == 2 and refused.stderr.startswith("error: ")
    assert archived(store, "project_deploy.md")


def test_archiving_a_case_twin_keeps_the_other_files_index_line(store: MemoryStore) -> None:
    # PROJECT_DEPLOY.md made by hand beside project_deploy.md: archiving (or renaming) it
    # took project_deploy.md's MEMORY.md line, spelt exactly so: lines match ignoring case.
    twin = store.directory / "PROJECT_DEPLOY.md"
    twin.write_text("---\nname: Deploy copy\ndescription: a copy\n---\nkubectl\n")
    index = (store.directory / "MEMORY.md").read_text()
    sagemem = [sys.executable, "-m", "sagemem", "--dir", str(store.directory),
               "--state-dir", str(store.state_dir)]
    done = subprocess.run([*sagemem, "archive", "PROJECT_DEPLOY", "--reason", "a copy"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "archived  PROJECT_DEPLOY.md\n"  # no line of its own to remove
    assert (store.directory / "MEMORY.md").read_text() == index
    assert "(project_deploy.md)" in index
    audit = subprocess.run([*sagemem, "audit", "--json"], capture_output=True, text=True,
                           timeout=60, check=False)
    assert "not_in_index" not in audit.stdout
