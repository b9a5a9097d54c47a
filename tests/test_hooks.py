"""The Claude Code hook: recorded-looking payloads fed through a real subprocess.

Claude Code only sees the process: its stdout (one JSON object, or nothing) and its exit
code (always 0 — exit 2 would block the user's prompt). So most tests run the hook as
Claude Code does and look at exactly those; a few call ``claude_code`` in-process for
cases a subprocess cannot set up cheaply.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MEMORY_TEXT, write_memory

from sagemem.claude_code.hook import MAX_STDIN_BYTES, claude_code

CONTEXT_LIMIT = 10_000  # Claude Code's own limit, written out rather than imported
SESSION = "5c1d0e52-3b8f-4a7e-9d61-0f2b7c9a4e13"
CAT_QUESTION = "what is my cat called?"
DB_QUESTION = "what database does the ledger use?"
VERIFY_QUESTION = "we settled on Postgres for the ledger database last time, right?"
MIGRATION_QUESTION = "how do we roll back a failed database migration?"
UNRELATED_QUESTION = "explain quantum chromodynamics on a lattice"
# `hook` is registered in cli/agent.py separately; until then the same function runs directly.

def prompt_payload(prompt: Any, session: str = SESSION, **extra: Any) -> dict[str, Any]:
    """A UserPromptSubmit payload shaped like the ones Claude Code sends."""
    return {"session_id": session, "transcript_path": f"/home/u/.claude/projects/x/{session}.jsonl",
            "cwd": "/home/u/src/ledgerly", "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra}


def session_start(source: str, session: str = SESSION) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": f"/home/u/.claude/projects/x/{session}.jsonl",
            "cwd": "/home/u/src/ledgerly", "hook_event_name": "SessionStart", "source": source}


def memory(name: str, description: str, body: str, type_: str = "project") -> str:
    return MEMORY_TEXT.format(name=name, description=description, type=type_, body=body)


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "user_pets.md", memory(
        "Pets", "The user's pets: a cat called Miso.", "The user's cat is called Miso.\n",
        "user"))
    write_memory(directory, "project_database.md", memory(
        "Ledger database", "We chose Postgres 16 as the ledger database.",
        "We settled on Postgres 16 for the ledger database, not MySQL.\n"))
    return directory


@pytest.fixture
def huge_memory_dir(tmp_path: Path) -> Path:
    """Thirty long memories that all answer the migration question, among sixty others
    (retrieval weighs words by rarity: words every file shares would match nothing)."""
    directory = tmp_path / "huge"
    directory.mkdir()
    for n in range(60):
        write_memory(directory, f"user_note_{n:02d}.md", memory(
            f"Note {n}", f"Note {n} about topic{n}.", f"Notes on topic{n}.\n", "user"))
    for n in range(30):
        sentence = (f"Step {n}: to roll back a failed database migration, run the down "
                    f"migration {n} and restore the snapshot taken before it. ")
        write_memory(directory, f"project_migration_{n:02d}.md", memory(
            f"Migration rollback {n}", f"How to roll back failed database migration {n}.",
            sentence * 60 + "\n"))
    return directory


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def run_hook(payload: Any, memory_dir: Path, state_dir: Path,
             **settings: str) -> subprocess.CompletedProcess[bytes]:
    """Run the hook as Claude Code does: payload on stdin, a fresh process."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    env = {**os.environ, "SAGE_MEM_DIR": str(memory_dir), "SAGE_MEM_STATE_DIR": str(state_dir),
           **settings}
    argv = [sys.executable, "-m", "sagemem", "--dir", str(memory_dir),
            "--state-dir", str(state_dir), "hook", "claude-code"]
    return subprocess.run(argv, input=data, capture_output=True, env=env, timeout=60,
                          check=False)


def context_of(result: subprocess.CompletedProcess[bytes]) -> str:
    """The additionalContext of a hook run that must have printed exactly one JSON object."""
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.decode("utf-8"))
    assert list(data) == ["hookSpecificOutput"]
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def assert_silent(result: subprocess.CompletedProcess[bytes]) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""


def log_lines(state_dir: Path) -> list[str]:
    log = state_dir / "logs" / "hook.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_prompt_matching_a_memory_prints_one_json_object(memory_dir: Path,
                                                          state_dir: Path) -> None:
    context = context_of(run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir))
    assert "### user_pets.md:" in context
    assert "Miso" in context
    assert log_lines(state_dir) == []


def test_huge_memories_fit_under_claude_codes_limit(huge_memory_dir: Path,
                                                    state_dir: Path) -> None:
    context = context_of(run_hook(prompt_payload(MIGRATION_QUESTION), huge_memory_dir,
                                  state_dir))
    assert len(context) < CONTEXT_LIMIT
    assert "### project_migration_" in context
    assert "…(truncated)" in context  # shorter cuts, marked, rather than a blind cut
    assert "left out" in context  # the status card says what did not fit, and where it is


def test_unrelated_question_prints_nothing(memory_dir: Path, state_dir: Path) -> None:
    assert_silent(run_hook(prompt_payload(UNRELATED_QUESTION), memory_dir, state_dir))
    assert log_lines(state_dir) == []


def test_same_question_twice_is_injected_once(memory_dir: Path, state_dir: Path) -> None:
    assert "### user_pets.md:" in context_of(
        run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir))
    assert_silent(run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir))


def test_verification_question_is_injected_every_time(memory_dir: Path,
                                                      state_dir: Path) -> None:
    for _ in range(2):
        context = context_of(run_hook(prompt_payload(VERIFY_QUESTION), memory_dir, state_dir))
        assert "### project_database.md:" in context


@pytest.mark.parametrize("source", ["compact", "clear"])
def test_session_start_after_compact_injects_again(memory_dir: Path, state_dir: Path,
                                                    source: str) -> None:
    context_of(run_hook(prompt_payload(DB_QUESTION), memory_dir, state_dir))
    assert_silent(run_hook(prompt_payload(DB_QUESTION), memory_dir, state_dir))
    assert_silent(run_hook(session_start(source), memory_dir, state_dir))
    context = context_of(run_hook(prompt_payload(DB_QUESTION), memory_dir, state_dir))
    assert "### project_database.md:" in context


@pytest.mark.parametrize("source", ["startup", "resume"])
def test_session_start_on_startup_keeps_the_session(memory_dir: Path, state_dir: Path,
                                                    source: str) -> None:
    context_of(run_hook(prompt_payload(DB_QUESTION), memory_dir, state_dir))
    assert_silent(run_hook(session_start(source), memory_dir, state_dir))
    assert_silent(run_hook(prompt_payload(DB_QUESTION), memory_dir, state_dir))


def test_other_field_spellings_and_unknown_fields_are_accepted(memory_dir: Path,
                                                               state_dir: Path) -> None:
    payload = {"sessionId": SESSION, "hookEventName": "UserPromptSubmit",
               "user_prompt": CAT_QUESTION, "cwd": "/x", "model": {"id": "claude-x"},
               "future_field": [1, 2, {"nested": None}]}
    assert "### user_pets.md:" in context_of(run_hook(payload, memory_dir, state_dir))


def test_unknown_event_does_nothing(memory_dir: Path, state_dir: Path) -> None:
    payload = {"session_id": SESSION, "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "prompt": CAT_QUESTION}
    assert_silent(run_hook(payload, memory_dir, state_dir))
    assert log_lines(state_dir) == []
    assert not (state_dir / "sessions").exists()


@pytest.mark.parametrize("stdin", [
    pytest.param(b"", id="empty"),
    pytest.param(b"   \n", id="blank"),
    pytest.param(b'{"session_id": "abc", "hook_event_name": "UserPrompt', id="cut-off-json"),
    pytest.param(b"\xff\xfe not utf-8 {", id="not-utf8"),
    pytest.param(b"[1, 2, 3]", id="json-array"),
    pytest.param(b'"UserPromptSubmit"', id="json-string"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deeply-nested"),
    pytest.param(json.dumps(prompt_payload(42)).encode(), id="prompt-not-a-string"),
    pytest.param(json.dumps(prompt_payload(None)).encode(), id="prompt-null"),
])
def test_bad_stdin_prints_nothing_and_logs_one_line(memory_dir: Path, state_dir: Path,
                                                    stdin: bytes) -> None:
    assert_silent(run_hook(stdin, memory_dir, state_dir))
    assert len(log_lines(state_dir)) == 1


def test_missing_memory_directory_prints_nothing_and_logs(tmp_path: Path,
                                                          state_dir: Path) -> None:
    assert_silent(run_hook(prompt_payload(CAT_QUESTION), tmp_path / "absent", state_dir))
    [line] = log_lines(state_dir)
    assert "DirectoryMissing" in line
    assert f"session={SESSION}" in line


def test_malformed_settings_file_prints_nothing_and_logs(memory_dir: Path,
                                                         state_dir: Path) -> None:
    state_dir.mkdir()
    (state_dir / "settings.json").write_text("{not json", encoding="utf-8")
    assert_silent(run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir))
    assert "SettingsError" in log_lines(state_dir)[0]


def test_an_illegal_setting_that_guards_deletion_still_lets_memories_through(
    memory_dir: Path, state_dir: Path
) -> None:
    result = run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir,
                      SAGE_MEM_SNAPSHOT_KEEP="-5")
    assert "### user_pets.md:" in context_of(result)
    assert any("SAGE_MEM_SNAPSHOT_KEEP" in line for line in log_lines(state_dir))


def test_an_interrupted_operation_is_logged_and_memories_still_injected(
    memory_dir: Path, state_dir: Path
) -> None:
    from sagemem.history.journal import begin

    state_dir.mkdir(exist_ok=True)
    begin(state_dir, "archive", {"file": "project_gone.md"})
    result = run_hook(prompt_payload(CAT_QUESTION), memory_dir, state_dir)
    assert "### user_pets.md:" in context_of(result)
    assert any("sagemem recover" in line for line in log_lines(state_dir))


def test_oversized_payload_prints_nothing_and_logs(memory_dir: Path, state_dir: Path) -> None:
    payload = prompt_payload("x" * (MAX_STDIN_BYTES + 1))
    assert_silent(run_hook(payload, memory_dir, state_dir))
    assert "payload over" in log_lines(state_dir)[0]


def test_import_does_not_import_typer() -> None:
    code = "import sys, sagemem.claude_code.hook; print('typer' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert result.stdout.strip() == b"False"


# -- in-process: claude_code() itself --------------------------------------------------


def env_for(memory_dir: Path, state_dir: Path) -> dict[str, str]:
    return {"SAGE_MEM_DIR": str(memory_dir), "SAGE_MEM_STATE_DIR": str(state_dir)}


def test_missing_session_id_uses_the_default_session(memory_dir: Path,
                                                     state_dir: Path) -> None:
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": CAT_QUESTION}
    assert claude_code(json.dumps(payload).encode(), env_for(memory_dir, state_dir))
    assert (state_dir / "sessions" / "default.json").is_file()


def test_unwritable_state_returns_nothing(memory_dir: Path, tmp_path: Path) -> None:
    state_file = tmp_path / "state-is-a-file"
    state_file.write_text("", encoding="utf-8")  # sessions/ and logs/ cannot be created
    payload = json.dumps(prompt_payload(CAT_QUESTION)).encode()
    assert claude_code(payload, env_for(memory_dir, state_file)) == ""


def test_directory_options_win_over_the_environment(memory_dir: Path, state_dir: Path,
                                                    tmp_path: Path) -> None:
    """`sagemem --dir D --state-dir S hook claude-code` passes its options through."""
    env = env_for(tmp_path / "absent", tmp_path / "other-state")
    output = claude_code(json.dumps(prompt_payload(CAT_QUESTION)).encode(), env,
                         memory_dir=memory_dir, state_dir=state_dir)
    assert "### user_pets.md:" in output


# -- the time budget (issue 12, item 7) ---------------------------------------------------

ZEBRA_QUESTION = "where is the zebra crossing?"


@pytest.fixture
def cold_corpus(tmp_path: Path) -> Path:
    """1,500 memories never indexed (a cold build takes seconds), the newest the answer."""
    from test_sync_batches import make_corpus

    return make_corpus(tmp_path / "corpus", 1500)


# The smallest budget the settings allow (100 ms): the sync then has about 50 ms, in
# which no machine builds 1,501 files, so what the budget did shows in what was left
# undone — the clock of a loaded 2-core machine says little (a 0.6 s bound failed 2 runs
# in 5 there), and a fast machine must not finish the build and so pass by luck.
SMALLEST_BUDGET_MS = "100"


def test_hook_keeps_to_its_budget_and_injects_what_is_indexed(cold_corpus: Path,
                                                               state_dir: Path) -> None:
    from test_sync_batches import indexed_count

    from sagemem.claude_code.install import HOOK_TIMEOUT_S

    payload = json.dumps(prompt_payload(ZEBRA_QUESTION)).encode("utf-8")
    env = {"SAGE_MEM_DIR": str(cold_corpus), "SAGE_MEM_STATE_DIR": str(state_dir),
           "SAGE_MEM_HOOK_BUDGET_MS": SMALLEST_BUDGET_MS}
    started = time.monotonic()
    output = claude_code(payload, env)
    # Claude Code kills the hook at its timeout; without the budget, the build and the
    # embedder's setup alone take longer than that.
    assert time.monotonic() - started < HOOK_TIMEOUT_S / 2
    context = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    assert "### project_zebra_crossing.md:" in context
    indexed = indexed_count(state_dir)
    assert 1 <= indexed < 1501  # the build stopped at the budget, the newest file first
    logged = "\n".join(line for line in log_lines(state_dir) if "notice:" in line)
    assert f"notice: index incomplete: {indexed} of 1501 files indexed; run sagemem index" \
        in logged
    # semantic on by default, but the embedder's one-time setup does not fit the budget
    assert "is not set up yet; ranked by words" in logged


def test_hook_under_a_budget_leaves_the_rest_of_the_build_for_the_next_prompt(
        cold_corpus: Path, state_dir: Path) -> None:
    # Counted in the index itself: the second prompt may well finish the build, and then
    # logs no "index incomplete" line to count from.
    from test_sync_batches import indexed_count

    first = run_hook(prompt_payload(ZEBRA_QUESTION), cold_corpus, state_dir,
                     SAGE_MEM_HOOK_BUDGET_MS=SMALLEST_BUDGET_MS)
    assert "project_zebra_crossing.md" in context_of(first)
    done = indexed_count(state_dir)
    assert 1 <= done < 1501
    assert [line.split("notice: ")[1] for line in log_lines(state_dir)
            if "index incomplete" in line] == [
        f"index incomplete: {done} of 1501 files indexed; run sagemem index"]
    second = run_hook(prompt_payload(ZEBRA_QUESTION, session="other"), cold_corpus, state_dir,
                      SAGE_MEM_HOOK_BUDGET_MS=SMALLEST_BUDGET_MS)
    assert "project_zebra_crossing.md" in context_of(second)
    assert indexed_count(state_dir) > done  # the second prompt went on from the first
