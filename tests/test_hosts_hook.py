"""``sagemem hook gemini`` and ``sagemem hook codex``: each host's payload in, through a
real subprocess, and the memory block out in that host's own output format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import MEMORY_TEXT, write_memory

SESSION = "0b6f8e2a-51c4-4d7e-a0f3-9e21c4b7d5a8"
CAT_QUESTION = "what is my cat called?"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "user_pets.md", MEMORY_TEXT.format(
        name="Pets", description="The user's pets: a cat called Miso.", type="user",
        body="The user's cat is called Miso.\n"))
    return directory


def run_hook(host: str, payload: dict[str, Any], memory_dir: Path, tmp_path: Path
             ) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    argv = [sys.executable, "-m", "sagemem", "--dir", str(memory_dir), "--state-dir",
            str(tmp_path / "state"), "hook", host]
    return subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True,
                          env=env, timeout=60, check=False)


def gemini_before_agent(prompt: str) -> dict[str, Any]:
    """A BeforeAgent payload as Gemini CLI's hooks reference documents it."""
    return {"session_id": SESSION, "transcript_path": "/home/u/.gemini/tmp/x/chat.json",
            "cwd": "/home/u/src/app", "hook_event_name": "BeforeAgent",
            "timestamp": "2026-12-02T12:00:00Z", "prompt": prompt}


def codex_prompt(prompt: str) -> dict[str, Any]:
    """A UserPromptSubmit payload as Codex's hooks page documents it."""
    return {"session_id": SESSION, "transcript_path": None, "cwd": "/home/u/src/app",
            "hook_event_name": "UserPromptSubmit", "model": "gpt-5-codex",
            "turn_id": "019d036d-c7fa-72d2-b6fd-78878bfe34e4", "prompt": prompt}


def test_gemini_before_agent_gets_the_memories_as_additional_context(
        memory_dir: Path, tmp_path: Path) -> None:
    result = run_hook("gemini", gemini_before_agent(CAT_QUESTION), memory_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert list(answer) == ["hookSpecificOutput"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "Miso" in answer["hookSpecificOutput"]["additionalContext"]


def test_codex_user_prompt_submit_gets_the_memories_as_additional_context(
        memory_dir: Path, tmp_path: Path) -> None:
    result = run_hook("codex", codex_prompt(CAT_QUESTION), memory_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer == {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": answer["hookSpecificOutput"]["additionalContext"]}}
    assert "Miso" in answer["hookSpecificOutput"]["additionalContext"]


def test_gemini_clear_resets_the_session_so_the_memory_comes_again(
        memory_dir: Path, tmp_path: Path) -> None:
    first = run_hook("gemini", gemini_before_agent(CAT_QUESTION), memory_dir, tmp_path)
    again = run_hook("gemini", gemini_before_agent(CAT_QUESTION), memory_dir, tmp_path)
    assert b"Miso" in first.stdout and again.stdout == b""  # injected once per session
    clear = {**gemini_before_agent(""), "hook_event_name": "SessionStart", "source": "clear"}
    del clear["prompt"]
    assert run_hook("gemini", clear, memory_dir, tmp_path).stdout == b""
    assert b"Miso" in run_hook("gemini", gemini_before_agent(CAT_QUESTION), memory_dir,
                               tmp_path).stdout


@pytest.mark.parametrize("host", ["gemini", "codex"])
def test_a_tool_event_or_a_broken_payload_prints_nothing_and_exits_0(
        host: str, memory_dir: Path, tmp_path: Path) -> None:
    tool = {"session_id": SESSION, "hook_event_name": "BeforeTool" if host == "gemini"
            else "PreToolUse", "tool_name": "write_file", "tool_input": {"file_path": "x"}}
    for payload in (tool, {"hook_event_name": "BeforeAgent", "prompt": 3}):
        result = run_hook(host, payload, memory_dir, tmp_path)
        assert result.returncode == 0 and result.stdout == b""
    argv = [sys.executable, "-m", "sagemem", "--dir", str(memory_dir), "hook", host]
    broken = subprocess.run(argv, input=b"{not json", capture_output=True, timeout=60,
                            check=False)
    assert broken.returncode == 0 and broken.stdout == b""
