"""Claude Code's own Write/Edit/MultiEdit of a memory file get what a guarded write gets:
secrets redacted on disk (the model told, its next Edit allowed), a journal line by
``claude-code`` naming the session, the replaced version kept for ``revert``; a Read
counts in the access ledger. Everything through the real command, as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory

from sagemem.claude_code import after_write
from sagemem.files.folder import MemoryFolder
from sagemem.files.revision import revision_of

SESSION = "5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
TOKEN = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
ROLE = """---
name: User role
description: The user is a data scientist who works in notebooks.
type: user
---
The user is a data scientist; prefers notebooks and pandas.
"""


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "user_role.md", ROLE)
    write_memory(directory, "MEMORY.md",
                 "# Memory index\n\n- [User role](user_role.md) — data scientist\n")
    return directory


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


def sagemem(memory_dir: Path, state_dir: Path, *args: str, stdin: bytes = b"",
            global_dir: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    env.update(SAGE_MEM_GLOBAL_DIR=str(global_dir) if global_dir else "off",
               SAGE_MEM_SEMANTIC="off")
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(memory_dir),
                           "--state-dir", str(state_dir), *args], input=stdin,
                          capture_output=True, env=env, timeout=60, check=False)


class Host:
    """Claude Code running its file tools, each wrapped in the hook's two calls."""

    def __init__(self, memory_dir: Path, state_dir: Path, cwd: Path,
                 global_dir: Path | None = None) -> None:
        self.memory_dir, self.state_dir, self.cwd = memory_dir, state_dir, cwd
        self.global_dir = global_dir

    def hook(self, event: str, tool: str, tool_input: dict[str, Any] | str) -> str:
        data: dict[str, Any] = {
            "session_id": SESSION, "transcript_path": f"/home/u/.claude/{SESSION}.jsonl",
            "cwd": str(self.cwd), "permission_mode": "default", "hook_event_name": event,
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01X"}
        if event == "PostToolUse":
            data["tool_response"] = {"success": True}
        done = sagemem(self.memory_dir, self.state_dir, "hook", "claude-code",
                       stdin=json.dumps(data).encode("utf-8"), global_dir=self.global_dir)
        assert done.returncode == 0, done.stderr
        assert done.stderr == b""
        return done.stdout.decode("utf-8")

    def read(self, path: Path) -> str:
        return self.hook("PostToolUse", "Read", {"file_path": str(path)})

    def write(self, path: Path, text: str) -> str:
        """A Write the gate allows: PreToolUse, the tool's write, PostToolUse."""
        assert self.hook("PreToolUse", "Write", {"file_path": str(path), "content": text}) == ""
        path.write_text(text, encoding="utf-8")
        return self.hook("PostToolUse", "Write", {"file_path": str(path), "content": text})

    def edit(self, tool: str, path: Path, old: str, new: str) -> str:
        step = {"old_string": old, "new_string": new, "replace_all": False}
        tool_input = ({"file_path": str(path), **step} if tool == "Edit"
                      else {"file_path": str(path), "edits": [step]})
        assert self.hook("PreToolUse", tool, tool_input) == ""
        path.write_text(path.read_text("utf-8").replace(old, new), encoding="utf-8")
        return self.hook("PostToolUse", tool, tool_input)


@pytest.fixture
def host(memory_dir: Path, state_dir: Path, project: Path) -> Host:
    return Host(memory_dir, state_dir, project)


def told(output: str) -> str:
    """The PostToolUse answer's context, checking Claude Code's documented shape."""
    data = json.loads(output)
    assert list(data) == ["hookSpecificOutput"]
    assert data["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    return str(data["hookSpecificOutput"]["additionalContext"])


def hook_log(state_dir: Path) -> str:
    path = state_dir / "logs" / "hook.log"
    return path.read_text("utf-8") if path.exists() else ""


def journal(memory_dir: Path, state_dir: Path) -> list[dict[str, Any]]:
    done = sagemem(memory_dir, state_dir, "log", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return list(data["entries"] if isinstance(data, dict) else data)


def test_secret_written_by_write_is_redacted_on_disk_and_the_next_edit_allowed(
        host: Host, memory_dir: Path) -> None:
    path = memory_dir / "user_role.md"
    host.read(path)
    context = told(host.write(path, ROLE + f"Pushes with {TOKEN}.\n"))
    on_disk = path.read_text("utf-8")
    assert TOKEN not in on_disk and "<REDACTED:github_token>" in on_disk
    assert "github_token" in context and TOKEN not in context
    assert "on disk" in context and "next Edit" in context
    assert host.hook("PreToolUse", "Edit", {"file_path": str(path), "old_string": "pandas",
                                             "new_string": "polars"}) == ""


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit"])
def test_secret_put_in_by_an_edit_is_redacted_and_the_next_edit_allowed(
        host: Host, memory_dir: Path, tool: str) -> None:
    path = memory_dir / "user_role.md"
    host.read(path)
    context = told(host.edit(tool, path, "pandas.", f"pandas; token {TOKEN}."))
    assert TOKEN not in path.read_text("utf-8")
    assert "github_token" in context and TOKEN not in context
    assert host.hook("PreToolUse", tool, {"file_path": str(path), "old_string": "notebooks",
                                           "new_string": "Jupyter"}) == ""


def test_clean_write_stays_byte_identical_is_journaled_and_can_be_reverted(
        host: Host, memory_dir: Path, state_dir: Path) -> None:
    path = memory_dir / "user_role.md"
    host.read(path)
    text = ROLE + "Also uses polars.\n"
    assert host.write(path, text) == ""
    assert path.read_bytes() == text.encode("utf-8")
    line = journal(memory_dir, state_dir)[0]
    assert (line["file"], line["op"], line["writer"]) == ("user_role.md", "write", "claude-code")
    assert SESSION in line["reason"]
    assert line["before"] == revision_of(ROLE.encode("utf-8"))
    assert line["after"] == revision_of(text.encode("utf-8"))
    done = sagemem(memory_dir, state_dir, "revert", "user_role", "--yes")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == ROLE.encode("utf-8")


def test_a_new_file_written_by_claude_code_is_journaled_as_a_create(
        host: Host, memory_dir: Path, state_dir: Path) -> None:
    path = memory_dir / "project_launch.md"
    assert host.write(path, ROLE.replace("User role", "Launch")) == ""
    line = journal(memory_dir, state_dir)[0]
    assert (line["file"], line["op"], line["before"]) == ("project_launch.md", "create", None)


def test_search_finds_text_claude_code_wrote(host: Host, memory_dir: Path,
                                             state_dir: Path) -> None:
    assert sagemem(memory_dir, state_dir, "index").returncode == 0
    path = memory_dir / "user_role.md"
    host.read(path)
    host.write(path, ROLE + "Favourite dataframe library: polars.\n")
    done = sagemem(memory_dir, state_dir, "search", "polars", "--mode", "lexical", "--json")
    assert done.returncode == 0, done.stderr
    assert "user_role.md" in done.stdout.decode("utf-8")


def test_a_read_of_a_memory_counts_in_the_access_ledger(host: Host, memory_dir: Path,
                                                        state_dir: Path) -> None:
    assert host.read(memory_dir / "user_role.md") == ""
    assert host.read(memory_dir / "MEMORY.md") == ""
    done = sagemem(memory_dir, state_dir, "ledger", "--json")
    assert done.returncode == 0, done.stderr
    memories = json.loads(done.stdout)["memories"]
    assert list(memories) == ["user_role.md"]  # MEMORY.md is the index, no memory
    assert memories["user_role.md"]["read"]["count"] == 1


def test_a_global_layer_memory_gets_the_same_upkeep(memory_dir: Path, state_dir: Path,
                                                     project: Path, tmp_path: Path) -> None:
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    write_memory(global_dir, "user_habits.md", ROLE.replace("User role", "Habits"))
    host = Host(memory_dir, state_dir, project, global_dir)
    path = global_dir / "user_habits.md"
    host.read(path)
    assert "github_token" in told(host.write(path, ROLE + f"Token {TOKEN}\n"))
    assert TOKEN not in path.read_text("utf-8")
    done = sagemem(memory_dir, state_dir, "log", "--global", "--json", global_dir=global_dir)
    assert done.returncode == 0, done.stderr
    assert '"writer": "claude-code"' in done.stdout.decode("utf-8")
    assert not (state_dir / "journal.jsonl").exists()  # the project's log: untouched


def test_a_write_outside_the_folder_is_left_alone_and_silent(
        host: Host, project: Path, state_dir: Path) -> None:
    path = project / "notes.md"
    text = f"deploy with {TOKEN}\n"
    assert host.write(path, text) == ""
    assert path.read_text("utf-8") == text
    assert not (state_dir / "journal.jsonl").exists()


def test_a_file_changed_between_the_write_and_its_hook_is_not_rewritten(
        host: Host, memory_dir: Path, state_dir: Path) -> None:
    path = memory_dir / "user_role.md"
    host.read(path)
    mine = ROLE + f"Model: {TOKEN}\n"
    assert host.hook("PreToolUse", "Write", {"file_path": str(path), "content": mine}) == ""
    theirs = ROLE + f"Person: {TOKEN}\n"
    path.write_text(theirs, encoding="utf-8")  # an editor saved before the hook ran
    assert host.hook("PostToolUse", "Write", {"file_path": str(path), "content": mine}) == ""
    assert path.read_text("utf-8") == theirs
    assert "changed between the Write and its hook: not redacted" in hook_log(state_dir)


def test_a_change_landing_during_the_rewrite_cancels_it(
        memory_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = memory_dir / "user_role.md"
    path.write_text(ROLE + f"Model: {TOKEN}\n", encoding="utf-8")
    theirs = ROLE + "Person's text.\n"
    real = after_write.atomic_write

    def racing(target: Path, data: bytes, **kwargs: Any) -> None:
        target.write_text(theirs, encoding="utf-8")  # lands after the hook's read
        real(target, data, **kwargs)

    monkeypatch.setattr(after_write, "atomic_write", racing)
    done = after_write.settle(MemoryFolder(memory_dir, state_dir), "user_role.md", path,
                              after_write.Written("Write", SESSION, None, lambda _: True),
                              seen_state=state_dir, seen_key="user_role.md")
    assert path.read_text("utf-8") == theirs
    assert done.output == ""
    assert any("changed while its secrets were being redacted" in line for line in done.log)


@pytest.mark.parametrize("stdin", [
    b"not json", b"[]",
    json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Write",
                "tool_input": "oops"}).encode(),
    json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Write",
                "tool_input": {"file_path": 7, "content": None}}).encode(),
])
def test_broken_payloads_print_nothing_and_exit_zero(memory_dir: Path, state_dir: Path,
                                                     stdin: bytes) -> None:
    before = (memory_dir / "user_role.md").read_bytes()
    done = sagemem(memory_dir, state_dir, "hook", "claude-code", stdin=stdin)
    assert (done.returncode, done.stdout) == (0, b"")
    assert (memory_dir / "user_role.md").read_bytes() == before


def test_a_memory_too_big_to_check_is_named_to_the_model_as_unchecked(
        host: Host, memory_dir: Path) -> None:
    path = memory_dir / "project_big.md"
    path.write_text(ROLE + "filler line\n" * 50_000, encoding="utf-8")  # ~600 KiB
    host.read(path)
    context = told(host.edit("Edit", path, "pandas.", f"pandas; token {TOKEN}."))
    assert "not checked for secrets" in context and TOKEN not in context
