"""Recall from Claude Code's transcripts through the real surfaces: ``sagemem inject``, the
Claude Code hook, ``search --transcripts`` and the MCP tool, each a fresh process run in
a project whose transcripts are the fixtures."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sagemem.files.gitroot import claude_project_key

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
QUEUE_SESSION = "5f2c1a9e-3b7d-4e21-9c0a-1d2e3f4a5b6c"
QUEUE_QUESTION = "What did we decide last time about the message queue for the order service?"
CITED = f"From a past session (transcript {QUEUE_SESSION}:6, 2026-11-28), not a saved memory"
ANSWER = "We settled on RabbitMQ for the order service queue"
SAGEMEM = [sys.executable, "-m", "sagemem"]
QUEUE_MEMORY = """---
name: Order service queue
description: The order service's message queue is RabbitMQ
metadata:
  type: project
---
The order service's message queue is RabbitMQ, with quorum queues.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder whose Claude Code transcripts are the fixtures, and an empty
    memory folder."""
    root = tmp_path / "work" / "shop"
    root.mkdir(parents=True)
    shutil.copytree(FIXTURES, tmp_path / "claude" / "projects" / claude_project_key(root))
    (tmp_path / "memory").mkdir()
    return root


def env_of(project: Path, **settings: str) -> dict[str, str]:
    home = project.parent.parent
    return {**os.environ, "SAGE_MEM_DIR": str(home / "memory"),
            "SAGE_MEM_STATE_DIR": str(home / "state"),
            "SAGE_MEM_CLAUDE_HOME": str(home / "claude"), "SAGE_MEM_TRANSCRIPTS": "on",
            **settings}


def sagemem(project: Path, *args: str, stdin: bytes | None = None, **settings: str
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SAGEMEM, *args], cwd=project, env=env_of(project, **settings),
                          input=None if stdin is None else stdin.decode(), text=True,
                          capture_output=True, timeout=120, check=False)


def test_a_history_question_no_memory_answers_gets_the_cited_excerpt(project: Path) -> None:
    done = sagemem(project, "inject", QUEUE_QUESTION, "--session", "s-1")
    assert done.returncode == 0, done.stderr
    assert CITED in done.stdout and ANSWER in done.stdout
    assert done.stdout.count("From a past session") <= 2


def test_a_quoted_transcript_is_not_recorded_as_an_injected_memory(project: Path) -> None:
    done = sagemem(project, "inject", QUEUE_QUESTION, "--session", "s-1", "--json")
    injection = json.loads(done.stdout)
    assert ANSWER in injection["text"]
    assert injection["items"] == []
    assert not (project.parent.parent / "state" / "access.json").exists()  # no ledger count
    sessions = project.parent.parent / "state" / "sessions"
    assert all(QUEUE_SESSION not in p.read_text() for p in sessions.glob("*"))


def test_the_hook_quotes_a_past_session_for_its_project(project: Path) -> None:
    payload = {"session_id": "live-session", "hook_event_name": "UserPromptSubmit",
               "cwd": str(project), "transcript_path": "/dev/null", "prompt": QUEUE_QUESTION}
    done = sagemem(project, "hook", "claude-code", stdin=json.dumps(payload).encode())
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert CITED in context and ANSWER in context


def test_hostile_transcripts_never_break_the_hook(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "claude" / "projects" / claude_project_key(project)
    for path in folder.iterdir():
        path.unlink()
    outside = tmp_path / "outside.jsonl"
    outside.write_text((FIXTURES / f"{QUEUE_SESSION}.jsonl").read_text())
    (folder / "linked.jsonl").symlink_to(outside)
    (folder / "huge.jsonl").write_bytes(os.urandom(1024) * 6 * 1024)  # 6 MiB, no lines
    (folder / "fifo.jsonl").unlink(missing_ok=True)
    os.mkfifo(folder / "fifo.jsonl")
    payload = {"session_id": "live", "hook_event_name": "UserPromptSubmit",
               "cwd": str(project), "prompt": QUEUE_QUESTION}
    done = sagemem(project, "hook", "claude-code", stdin=json.dumps(payload).encode())
    assert done.returncode == 0, done.stderr
    assert "From a past session" not in done.stdout and ANSWER not in done.stdout


def test_the_asking_sessions_own_transcript_is_not_quoted(project: Path) -> None:
    payload = {"session_id": QUEUE_SESSION, "hook_event_name": "UserPromptSubmit",
               "cwd": str(project), "prompt": QUEUE_QUESTION}
    done = sagemem(project, "hook", "claude-code", stdin=json.dumps(payload).encode())
    assert "From a past session" not in done.stdout


def test_a_question_a_memory_answers_quotes_no_transcript(project: Path) -> None:
    (project.parent.parent / "memory" / "project_order_queue.md").write_text(QUEUE_MEMORY)
    done = sagemem(project, "inject", QUEUE_QUESTION)
    assert "project_order_queue.md" in done.stdout
    assert "From a past session" not in done.stdout


def test_a_question_not_about_the_past_quotes_no_transcript(project: Path) -> None:
    done = sagemem(project, "inject", "Which message queue should the order service use?")
    assert done.returncode == 0, done.stderr
    assert "From a past session" not in done.stdout


def test_tool_output_in_a_transcript_is_never_quoted(project: Path) -> None:
    done = sagemem(project, "inject", "what did the zebra-broker kafka_bootstrap_servers "
                                      "grep show before?")
    assert "zebra-broker-7" not in done.stdout and "From a past session" not in done.stdout


def test_a_secret_in_a_transcript_is_injected_redacted(project: Path) -> None:
    done = sagemem(project, "inject", "which token did we use for the staging deploy before?")
    assert "<REDACTED:github_token>" in done.stdout
    assert "ghp_R8x2" not in done.stdout


def test_the_setting_turns_recall_off(project: Path) -> None:
    done = sagemem(project, "inject", QUEUE_QUESTION, SAGE_MEM_TRANSCRIPTS="off")
    assert done.returncode == 0, done.stderr
    assert "From a past session" not in done.stdout
    settings = project.parent.parent / "state" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"transcripts": False}))
    assert "From a past session" not in sagemem(project, "inject", QUEUE_QUESTION).stdout


def test_search_transcripts_prints_the_cited_excerpt(project: Path) -> None:
    done = sagemem(project, "search", QUEUE_QUESTION, "--transcripts")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"transcript {QUEUE_SESSION}:6  2026-11-28  assistant\n"
                                  f"    {ANSWER}")


def test_search_transcripts_json_carries_citation_date_and_role(project: Path) -> None:
    done = sagemem(project, "search", QUEUE_QUESTION, "--transcripts", "--json", "--limit", "1")
    found = json.loads(done.stdout)
    assert [(h["citation"], h["line"], h["date"], h["role"]) for h in found["transcripts"]] == [
        (f"transcript {QUEUE_SESSION}:6", 6, "2026-11-28", "assistant")]
    assert found["files_searched"] == 2


def test_search_transcripts_writes_nothing_to_the_memory_folder(project: Path) -> None:
    sagemem(project, "search", QUEUE_QUESTION, "--transcripts")
    assert list((project.parent.parent / "memory").iterdir()) == []


def test_search_transcripts_with_a_memory_option_is_a_usage_error(project: Path) -> None:
    done = sagemem(project, "search", "queue", "--transcripts", "--tag", "ops")
    assert done.returncode == 2
    assert done.stderr.startswith("error: Invalid value for --tag: --tag searches memories")
    assert "Traceback" not in done.stderr


def test_search_transcripts_when_off_is_one_error_line(project: Path) -> None:
    done = sagemem(project, "search", "queue", "--transcripts", SAGE_MEM_TRANSCRIPTS="off")
    assert done.returncode == 1
    assert done.stderr.startswith("error: transcripts are off")
    assert done.stderr.count("\n") == 1


def test_the_mcp_tool_returns_the_cited_excerpt(project: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=SAGEMEM[0], args=[*SAGEMEM[1:], "mcp"],
                                   env=env_of(project), cwd=str(project))

    async def main() -> Any:
        async with Client(params) as client:
            return await client.call_tool("search_transcripts", {"query": QUEUE_QUESTION,
                                                                 "limit": 1})
    result = asyncio.run(main())
    assert not result.is_error
    excerpt = result.structured_content["excerpts"][0]
    assert (excerpt["citation"], excerpt["date"], excerpt["role"]) == (
        f"transcript {QUEUE_SESSION}:6", "2026-11-28", "assistant")
    assert ANSWER in result.content[0].text and "not saved memories" in result.content[0].text
