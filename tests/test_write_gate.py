"""The write gate: Claude Code's Write/Edit/MultiEdit of a memory changed since the model
read it is denied; everything else goes through untouched.

The payloads carry every field Claude Code sends (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_response`` after the
tool); most tests call ``claude_code`` in-process, one runs the real command.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory

from sagemem.claude_code.hook import claude_code
from sagemem.cli import main
from sagemem.inject import seen
from sagemem.inject.seen import record_seen, seen_file, seen_revision
from sagemem.inject.session import DEFAULT_SESSION

SESSION = "8e0c4f1a-2b7d-4c9e-a1f3-5d6b7c8e9f01"
ROLE = """---
name: User role
description: The user is a data scientist who works in notebooks.
type: user
---
The user is a data scientist; prefers notebooks and pandas.
"""
INDEX = "# Memory index\n\n- [User role](user_role.md) — data scientist, notebooks\n"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    (directory / "archive").mkdir(parents=True)
    write_memory(directory, "user_role.md", ROLE)
    write_memory(directory, "MEMORY.md", INDEX)
    write_memory(directory / "archive", "project_old.md", ROLE.replace("User role", "Old"))
    return directory


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The directory Claude Code runs in: the payload's ``cwd``."""
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


def tool_input(tool: str, file_path: str) -> dict[str, Any]:
    """``tool_input`` as each tool sends it."""
    if tool == "Write":
        return {"file_path": file_path, "content": ROLE + "Also uses polars.\n"}
    if tool == "Edit":
        return {"file_path": file_path, "old_string": "pandas", "new_string": "polars",
                "replace_all": False}
    if tool == "MultiEdit":
        return {"file_path": file_path, "edits": [
            {"old_string": "pandas", "new_string": "polars", "replace_all": False}]}
    return {"file_path": file_path}


def payload(event: str, tool: str, file_path: str | Path, cwd: Path,
            session: str = SESSION) -> bytes:
    data: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/-home-u-src-x/{session}.jsonl",
        "cwd": str(cwd), "permission_mode": "default", "hook_event_name": event,
        "tool_name": tool, "tool_input": tool_input(tool, str(file_path)),
        "tool_use_id": "toolu_01ABCDEFG"}
    if event == "PostToolUse":
        data["tool_response"] = ({"type": "text", "file": {"filePath": str(file_path)}}
                                 if tool == "Read" else
                                 {"filePath": str(file_path), "success": True})
    return json.dumps(data).encode("utf-8")


def env_for(memory_dir: Path, state_dir: Path) -> dict[str, str]:
    return {"SAGE_MEM_DIR": str(memory_dir), "SAGE_MEM_STATE_DIR": str(state_dir)}


class Host:
    """Claude Code, as far as the gate sees it: tool calls on files, each wrapped in its
    PreToolUse and PostToolUse hook calls."""

    def __init__(self, memory_dir: Path, state_dir: Path, cwd: Path) -> None:
        self.env = env_for(memory_dir, state_dir)
        self.cwd = cwd

    def hook(self, event: str, tool: str, path: str | Path, session: str = SESSION) -> str:
        return claude_code(payload(event, tool, path, self.cwd, session), self.env)

    def read(self, path: str | Path, session: str = SESSION) -> str:
        return self.hook("PostToolUse", "Read", path, session)

    def before(self, tool: str, path: str | Path, session: str = SESSION) -> str:
        return self.hook("PreToolUse", tool, path, session)

    def write(self, path: Path, text: str, session: str = SESSION) -> str:
        """A Write the gate let through: the file changes, then PostToolUse."""
        answer = self.before("Write", path, session)
        assert answer == ""
        path.write_text(text, encoding="utf-8")
        return self.hook("PostToolUse", "Write", path, session)


@pytest.fixture
def host(memory_dir: Path, state_dir: Path, project: Path) -> Host:
    return Host(memory_dir, state_dir, project)


def denial(output: str) -> str:
    """The reason of a PreToolUse denial, checking it has exactly Claude Code's shape."""
    data = json.loads(output)
    assert list(data) == ["hookSpecificOutput"]
    specific = data["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    reason = specific["permissionDecisionReason"]
    assert isinstance(reason, str)
    return reason


def log_text(state_dir: Path) -> str:
    log = state_dir / "logs" / "hook.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def change(path: Path) -> None:
    """Another process (a person's editor, another session) edits the file."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write("Moved to the platform team in May.\n")


# -- denied: the file changed since the model read it -------------------------------------

def test_stale_write_is_denied_with_the_reason(host: Host, memory_dir: Path,
                                               state_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    assert host.read(role) == ""
    change(role)
    reason = denial(host.before("Write", role))
    assert "user_role.md changed since you last read it" in reason
    assert "Read it again with the Read tool" in reason  # the one read that vouches
    assert "MCP tools or `sagemem read` does not count" in reason
    assert "denied Write user_role.md: changed since read" in log_text(state_dir)


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit"])
def test_edit_after_another_process_changed_the_file_is_denied(
        host: Host, memory_dir: Path, tool: str) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    assert "user_role.md" in denial(host.before(tool, role))


def test_reading_again_after_the_denial_lets_the_edit_through(host: Host,
                                                              memory_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    denial(host.before("Edit", role))
    host.read(role)
    assert host.before("Edit", role) == ""


@pytest.mark.parametrize("name", ["MEMORY.md", "archive/project_old.md"])
def test_index_and_archived_files_are_gated_too(host: Host, memory_dir: Path,
                                               name: str) -> None:
    path = memory_dir / name
    host.read(path)
    change(path)
    assert name in denial(host.before("Edit", path))


# -- allowed ------------------------------------------------------------------------------

def test_read_then_write_is_allowed(host: Host, memory_dir: Path, state_dir: Path) -> None:
    host.read(memory_dir / "user_role.md")
    assert host.before("Write", memory_dir / "user_role.md") == ""
    assert log_text(state_dir) == ""


def test_own_write_then_edit_is_allowed(host: Host, memory_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    host.write(role, ROLE + "Also uses polars.\n")
    assert host.before("Edit", role) == ""  # without PostToolUse's record: denied


def test_file_never_read_is_allowed(host: Host, memory_dir: Path, state_dir: Path) -> None:
    assert host.before("Edit", memory_dir / "user_role.md") == ""
    assert log_text(state_dir) == ""


def test_new_file_is_allowed_and_recorded_once_written(host: Host, memory_dir: Path,
                                                       state_dir: Path) -> None:
    new = memory_dir / "feedback_testing.md"
    assert host.write(new, "---\nname: Testing\ndescription: d\ntype: feedback\n---\nx\n") == ""
    change(new)
    assert "feedback_testing.md" in denial(host.before("Edit", new))


def test_path_outside_the_folder_is_untouched(host: Host, project: Path,
                                             state_dir: Path) -> None:
    source = project / "main.py"
    source.write_text("print('hi')\n", encoding="utf-8")
    assert host.read(source) == ""
    change(source)
    assert host.before("Write", source) == ""
    assert not state_dir.exists()  # no record, no log: the gate never looked


def test_other_tools_and_events_are_untouched(host: Host, memory_dir: Path,
                                              state_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    assert host.before("NotebookEdit", role) == ""
    assert host.before("Read", role) == ""
    assert host.hook("PostToolUseFailure", "Edit", role) == ""


# -- what counts as seen: only what this session saw ------------------------------------

def cli(memory_dir: Path, state_dir: Path, *args: str) -> int:
    return main(["--dir", str(memory_dir), "--state-dir", str(state_dir), *args])


def test_sagemem_read_told_the_session_counts_as_seen(
        host: Host, memory_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    denial(host.before("Edit", role))
    monkeypatch.setenv("SAGE_MEM_SESSION", SESSION)
    assert cli(memory_dir, state_dir, "read", "user_role") == 0
    assert "platform team" in capsys.readouterr().out
    assert seen_file(state_dir, SESSION).is_file()
    assert host.before("Edit", role) == ""


def test_sagemem_search_told_the_session_counts_as_seen(
        host: Host, memory_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    monkeypatch.setenv("SAGE_MEM_SESSION", SESSION)
    assert cli(memory_dir, state_dir, "search", "data scientist notebooks", "--json") == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["file"] for r in results] == ["user_role.md"]
    assert seen_revision(state_dir, SESSION, "user_role.md") == results[0]["revision"]
    assert host.before("Edit", role) == ""


@pytest.mark.parametrize("args", [("read", "user_role"),
                                  ("search", "data scientist notebooks")])
def test_a_read_that_knows_no_session_records_nothing(
        memory_dir: Path, state_dir: Path, capsys: pytest.CaptureFixture[str],
        args: tuple[str, ...]) -> None:
    assert cli(memory_dir, state_dir, *args) == 0
    assert "data scientist" in capsys.readouterr().out
    assert not (state_dir / "sessions" / "seen").exists()


def test_another_sessions_read_does_not_count(host: Host, memory_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    host.read(role, session="other-session")
    assert denial(host.before("Edit", role))


# -- paths: .., symlinks, case ------------------------------------------------------------

def test_relative_and_dotdot_paths_name_the_same_file(host: Host, memory_dir: Path,
                                                      project: Path) -> None:
    host.read("../memory/user_role.md")  # relative to the payload's cwd
    change(memory_dir / "user_role.md")
    assert denial(host.before("Edit", project / ".." / "memory" / "archive" / ".."
                              / "user_role.md"))


def test_a_symlink_into_the_folder_is_gated(host: Host, memory_dir: Path,
                                            project: Path) -> None:
    (project / "notes").symlink_to(memory_dir)
    (project / "role.md").symlink_to(memory_dir / "user_role.md")
    host.read(project / "notes" / "user_role.md")
    change(memory_dir / "user_role.md")
    assert "user_role.md" in denial(host.before("Write", project / "role.md"))


def test_a_symlink_in_the_folder_pointing_out_is_untouched(host: Host, memory_dir: Path,
                                                           project: Path,
                                                           state_dir: Path) -> None:
    outside = project / "secrets.md"
    outside.write_text("token\n", encoding="utf-8")
    (memory_dir / "evil.md").symlink_to(outside)
    (memory_dir / "elsewhere").symlink_to(project)
    host.read(memory_dir / "evil.md")
    host.read(memory_dir / "elsewhere" / "secrets.md")
    change(outside)
    assert host.before("Write", memory_dir / "evil.md") == ""
    assert host.before("Write", memory_dir / "elsewhere" / "secrets.md") == ""
    assert not state_dir.exists()


def test_a_differently_cased_name_shares_the_record(state_dir: Path) -> None:
    """sagemem compares names case-folded (``name_key``): one memory, one record."""
    record_seen(state_dir, SESSION, {"User_Role.md": "a" * 64})
    assert seen_revision(state_dir, SESSION, "user_role.md") == "a" * 64


# -- the gate that cannot decide allows, and logs -----------------------------------------

def test_corrupt_seen_file_allows_and_logs(host: Host, memory_dir: Path,
                                           state_dir: Path) -> None:
    role = memory_dir / "user_role.md"
    host.read(role)
    change(role)
    seen_file(state_dir, SESSION).write_bytes(b"{not json")
    assert host.before("Edit", role) == ""
    assert "unreadable, started afresh" in log_text(state_dir)
    host.read(role)  # the record starts afresh
    assert json.loads(seen_file(state_dir, SESSION).read_text())["files"]


def test_unwritable_state_allows_and_logs(host: Host, memory_dir: Path,
                                          state_dir: Path) -> None:
    (state_dir / "sessions").mkdir(parents=True)
    (state_dir / "sessions" / "seen").write_text("", encoding="utf-8")  # no dir there
    role = memory_dir / "user_role.md"
    assert host.read(role) == ""
    assert "what the model has seen was not recorded" in log_text(state_dir)
    change(role)
    assert host.before("Edit", role) == ""
    assert "unreadable, started afresh" in log_text(state_dir)


def test_state_dir_that_is_a_file_allows(memory_dir: Path, tmp_path: Path,
                                         project: Path) -> None:
    state = tmp_path / "state-is-a-file"
    state.write_text("", encoding="utf-8")
    host = Host(memory_dir, state, project)
    host.read(memory_dir / "user_role.md")
    change(memory_dir / "user_role.md")
    assert host.before("Edit", memory_dir / "user_role.md") == ""


def test_a_fifo_in_the_folder_is_allowed_and_logged(host: Host, memory_dir: Path,
                                                    state_dir: Path) -> None:
    fifo = memory_dir / "pipe.md"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert host.before("Write", fifo) == ""
    assert time.monotonic() - started < 2  # O_NONBLOCK: never hangs on the pipe
    assert "allowed Write pipe.md: cannot tell" in log_text(state_dir)


@pytest.mark.parametrize("tool_input_value", [
    pytest.param({"file_path": "/" + "a/" * 400_000}, id="huge-path"),
    pytest.param({"file_path": "../" * 300_000}, id="huge-dotdot"),
    pytest.param({"file_path": 42}, id="not-a-string"),
    pytest.param({"file_path": "memory/\u0000x.md"}, id="nul"),
    pytest.param("memory/user_role.md", id="input-not-an-object"),
    pytest.param({"file_path": "x.md", "cwd": "/" + "b/" * 400_000}, id="huge-cwd"),
])
def test_hostile_tool_input_is_allowed_quickly(memory_dir: Path, state_dir: Path,
                                               project: Path, tool_input_value: Any) -> None:
    data = json.loads(payload("PreToolUse", "Write", "x", project))
    data["tool_input"] = tool_input_value
    if isinstance(tool_input_value, dict) and "cwd" in tool_input_value:
        data["tool_input"] = {"file_path": tool_input_value["file_path"]}
        data["cwd"] = tool_input_value["cwd"]
    started = time.monotonic()
    assert claude_code(json.dumps(data).encode(), env_for(memory_dir, state_dir)) == ""
    assert time.monotonic() - started < 2


# -- the record of what was seen ----------------------------------------------------------

def test_only_the_sessions_own_record_counts_never_the_default_one(state_dir: Path) -> None:
    record_seen(state_dir, SESSION, {"user_role.md": "1" * 64})
    record_seen(state_dir, DEFAULT_SESSION, {"user_role.md": "2" * 64})  # newer, shared
    assert seen_revision(state_dir, SESSION, "user_role.md") == "1" * 64
    record_seen(state_dir, SESSION, {"user_role.md": "3" * 64})
    assert seen_revision(state_dir, SESSION, "user_role.md") == "3" * 64
    assert seen_revision(state_dir, "other", "user_role.md") is None
    assert seen_revision(state_dir, SESSION, "never_read.md") is None


def test_records_stay_bounded_keeping_the_newest(state_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seen, "MAX_SEEN_FILES", 5)
    for n in range(8):
        record_seen(state_dir, SESSION, {f"note_{n}.md": f"{n}" * 64})
    files = json.loads(seen_file(state_dir, SESSION).read_text())["files"]
    assert sorted(files) == [f"note_{n}.md" for n in range(3, 8)]


def test_unsafe_session_ids_stay_inside_the_seen_directory(state_dir: Path) -> None:
    record_seen(state_dir, "../../etc/passwd", {"a.md": "1" * 64})
    (path,) = (state_dir / "sessions" / "seen").glob("*.json")
    assert path.name.startswith("id-")
    assert seen_revision(state_dir, "../../etc/passwd", "a.md") == "1" * 64



# -- a symlink in the state directory is never written through ---------------------------

@pytest.mark.parametrize("linked", ["sessions", "sessions/seen"])
def test_a_symlinked_seen_directory_is_never_written_through(
        host: Host, memory_dir: Path, state_dir: Path, tmp_path: Path, linked: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state_dir / linked).parent.mkdir(parents=True, exist_ok=True)
    (state_dir / linked).symlink_to(elsewhere, target_is_directory=True)
    role = memory_dir / "user_role.md"
    assert host.read(role) == ""
    assert list(elsewhere.rglob("*")) == []
    assert "what the model has seen was not recorded" in log_text(state_dir)
    change(role)
    assert host.before("Edit", role) == ""  # nothing recorded: the gate allows


def test_a_symlinked_hook_log_is_never_appended_through(
        memory_dir: Path, state_dir: Path, project: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    (state_dir / "logs").mkdir(parents=True)
    (state_dir / "logs" / "hook.log").symlink_to(victim)
    assert claude_code(b"not json", env_for(memory_dir, state_dir)) == ""
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_symlinked_log_directory_is_never_written_through(
        memory_dir: Path, state_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state_dir.mkdir()
    (state_dir / "logs").symlink_to(elsewhere, target_is_directory=True)
    assert claude_code(b"not json", env_for(memory_dir, state_dir)) == ""
    assert list(elsewhere.iterdir()) == []

# -- the real command ---------------------------------------------------------------------

def run_hook(data: bytes, memory_dir: Path, state_dir: Path,
             **extra_env: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **env_for(memory_dir, state_dir), **extra_env}
    return subprocess.run([sys.executable, "-m", "sagemem", "hook", "claude-code"],
                          input=data, capture_output=True, env=env, timeout=60, check=False)


def test_real_hook_process_denies_a_stale_write(memory_dir: Path, state_dir: Path,
                                                project: Path) -> None:
    role = memory_dir / "user_role.md"
    read = run_hook(payload("PostToolUse", "Read", role, project), memory_dir, state_dir)
    assert (read.returncode, read.stdout) == (0, b"")
    allowed = run_hook(payload("PreToolUse", "Edit", role, project), memory_dir, state_dir)
    assert (allowed.returncode, allowed.stdout) == (0, b"")
    change(role)
    denied = run_hook(payload("PreToolUse", "Edit", role, project), memory_dir, state_dir)
    assert denied.returncode == 0
    assert "user_role.md changed since you last read it" in denial(denied.stdout.decode())


# -- the walk-arounds of issue 20: what someone else read never vouches -------------------

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A copy of the shipped sample folder, where ``sagemem search cat`` finds the cat."""
    directory = tmp_path / "sample"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns("eval"))
    return directory


def run_sagemem(memory_dir: Path, state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sagemem ARGS`` as anyone runs it in a shell: no SAGE_MEM_SESSION (conftest)."""
    env = {**os.environ, **env_for(memory_dir, state_dir)}
    return subprocess.run([sys.executable, "-m", "sagemem", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def hook_output(event: str, tool: str, path: str | Path, cwd: Path, memory_dir: Path,
                state_dir: Path, **extra_env: str) -> str:
    done = run_hook(payload(event, tool, path, cwd), memory_dir, state_dir, **extra_env)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def test_a_shell_search_after_a_denial_does_not_let_the_stale_edit_through(
        sample: Path, state_dir: Path, project: Path) -> None:
    """The model Reads, the user edits the file in vim, the stale Edit is denied; then
    anyone's ``sagemem search cat`` (or ``read``) must not turn the denial into an allow."""
    pets = sample / "user_pets.md"
    assert hook_output("PostToolUse", "Read", pets, project, sample, state_dir) == ""
    change(pets)
    assert "user_pets.md" in denial(
        hook_output("PreToolUse", "Edit", pets, project, sample, state_dir))
    search = run_sagemem(sample, state_dir, "search", "cat")
    assert search.returncode == 0, search.stderr
    assert "user_pets.md" in search.stdout
    read = run_sagemem(sample, state_dir, "read", "user_pets")
    assert (read.returncode, "platform team" in read.stdout) == (0, True)
    assert "user_pets.md" in denial(
        hook_output("PreToolUse", "Edit", pets, project, sample, state_dir))
    assert hook_output("PostToolUse", "Read", pets, project, sample, state_dir) == ""
    assert hook_output("PreToolUse", "Edit", pets, project, sample, state_dir) == ""


def test_another_agents_mcp_write_does_not_let_a_stale_write_overwrite_it(
        sample: Path, state_dir: Path, project: Path) -> None:
    """Agent A Reads; agent B changes the memory through the installed MCP server (no
    SAGE_MEM_SESSION); A's Write from what it read is denied, and B's change stays."""
    pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    pets = sample / "user_pets.md"
    assert hook_output("PostToolUse", "Read", pets, project, sample, state_dir) == ""
    params = StdioServerParameters(command=sys.executable, args=["-m", "sagemem", "mcp"],
                                   env={**os.environ, **env_for(sample, state_dir)})

    async def agent_b() -> Any:
        async with Client(params) as client:
            return await client.call_tool("set_memory_fields", {
                "name": "user_pets.md", "fields": {"description": "B: Zhima moved away."}})

    written = asyncio.run(agent_b())
    assert written.structured_content["status"] == "written"
    reason = denial(hook_output("PreToolUse", "Write", pets, project, sample, state_dir))
    assert "user_pets.md changed since you last read it" in reason
    assert "B: Zhima moved away." in pets.read_text(encoding="utf-8")


def test_an_mcp_server_told_the_session_vouches_for_that_session_only(
        sample: Path, state_dir: Path, project: Path) -> None:
    """``SAGE_MEM_SESSION`` is how a server learns whose reads it serves: its reads count
    for that session, and for no other one."""
    pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")
    from mcp import Client

    from sagemem.mcp_server.server import build_server
    from sagemem.store import MemoryStore

    pets = sample / "user_pets.md"
    host = Host(sample, state_dir, project)
    host.read(pets)
    host.read(pets, session="other-session")
    change(pets)

    async def read(session: str | None) -> Any:
        server = build_server(MemoryStore(sample, state_dir), session_id=session)
        async with Client(server) as client:
            return await client.call_tool("read_memory", {"name": "user_pets.md"})

    assert asyncio.run(read(None)).structured_content["status"] == "ok"
    assert denial(host.before("Edit", pets))
    assert asyncio.run(read(SESSION)).structured_content["status"] == "ok"
    assert host.before("Edit", pets) == ""
    assert "user_pets.md" in denial(host.before("Edit", pets, session="other-session"))


def test_an_injected_memory_does_not_vouch_for_a_write_over_it(
        sample: Path, state_dir: Path, project: Path) -> None:
    """The prompt hook quotes a paragraph, not the file: the model that saw it has not
    seen the rest, so the block records nothing, under any session."""
    pets = sample / "user_pets.md"
    assert hook_output("PostToolUse", "Read", pets, project, sample, state_dir) == ""
    change(pets)
    prompt = json.dumps({"session_id": SESSION, "cwd": str(project),
                         "hook_event_name": "UserPromptSubmit",
                         "prompt": "What is my cat called?"}).encode()
    injected = run_hook(prompt, sample, state_dir)
    assert injected.returncode == 0
    assert "user_pets.md" in json.loads(injected.stdout)["hookSpecificOutput"][
        "additionalContext"]
    assert "user_pets.md" in denial(
        hook_output("PreToolUse", "Write", pets, project, sample, state_dir))
    assert sorted(p.name for p in (state_dir / "sessions" / "seen").glob("*.json")) == [
        seen_file(state_dir, SESSION).name]


def test_the_hook_records_a_write_under_its_session_as_what_the_file_now_holds(
        memory_dir: Path, state_dir: Path, project: Path) -> None:
    role = memory_dir / "user_role.md"
    hook_output("PostToolUse", "Read", role, project, memory_dir, state_dir)
    role.write_text(ROLE + "Also uses polars.\n", encoding="utf-8")  # the Write itself
    assert hook_output("PostToolUse", "Write", role, project, memory_dir, state_dir) == ""
    from sagemem.files.memory import revision_of

    assert seen_revision(state_dir, SESSION, "user_role.md") == revision_of(role.read_bytes())
    assert not seen_file(state_dir, DEFAULT_SESSION).exists()
    assert hook_output("PreToolUse", "Edit", role, project, memory_dir, state_dir) == ""


def test_a_change_between_a_write_and_its_hook_is_not_recorded_as_seen(
        host: Host, memory_dir: Path, state_dir: Path) -> None:
    """Agent B's write lands after A's Write but before A's PostToolUse hook runs: A has
    seen its own text, not B's, so A's next Write (from what it knows) is denied."""
    role = memory_dir / "user_role.md"
    host.read(role)
    assert host.before("Write", role) == ""
    role.write_text(tool_input("Write", str(role))["content"], encoding="utf-8")
    change(role)  # B, in the moment before the hook
    assert host.hook("PostToolUse", "Write", role) == ""
    assert "user_role.md" in denial(host.before("Write", role))
    assert "changed between the Write and its hook" in log_text(state_dir)


def test_a_write_whose_line_endings_claude_code_kept_counts_as_seen(
        host: Host, memory_dir: Path) -> None:
    """Claude Code may keep a CRLF file's line endings when it writes: still the model's."""
    role = memory_dir / "user_role.md"
    host.read(role)
    text = tool_input("Write", str(role))["content"]
    role.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert host.hook("PostToolUse", "Write", role) == ""
    assert host.before("Edit", role) == ""


def test_inject_never_imports_the_room_above_it() -> None:
    """``claude_code`` uses ``inject``; an import back would be a cycle of rooms."""
    import ast

    import sagemem.inject

    for source in Path(sagemem.inject.__file__).parent.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        names = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        names += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                  for alias in node.names]
        assert not [n for n in names if "claude_code" in n], source


def test_a_stale_write_to_a_global_memory_is_denied_too(
        memory_dir: Path, state_dir: Path, project: Path, tmp_path: Path) -> None:
    """The global layer's memories are memories: the model Reads one, a person edits it,
    and the model's Edit from what it read is denied, through the real hook, while the
    project's memory of the same name keeps a record of its own."""
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    write_memory(global_dir, "user_role.md", ROLE)
    role = global_dir / "user_role.md"

    def hook(event: str, tool: str, path: Path) -> str:
        return hook_output(event, tool, path, project, memory_dir, state_dir,
                           SAGE_MEM_GLOBAL_DIR=str(global_dir))

    assert hook("PostToolUse", "Read", role) == ""
    assert hook("PostToolUse", "Read", memory_dir / "user_role.md") == ""
    change(role)
    assert "user_role.md changed since you last read it" in denial(
        hook("PreToolUse", "Edit", role))
    assert hook("PreToolUse", "Edit", memory_dir / "user_role.md") == ""  # its own record
    assert hook("PostToolUse", "Read", role) == ""
    assert hook("PreToolUse", "Edit", role) == ""


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit"])
def test_an_editor_saving_between_an_edit_and_its_hook_is_not_recorded_as_seen(
        memory_dir: Path, state_dir: Path, project: Path, tool: str) -> None:
    """The model's Edit lands, then a person's editor saves its buffer (without the edit,
    with their own line) before the PostToolUse hook runs: that text is not what the
    model has seen, so its next Write, from what it knows, is denied — through the real
    hook. An Edit that is still in the file counts as seen, as before."""
    role = memory_dir / "user_role.md"
    assert hook_output("PostToolUse", "Read", role, project, memory_dir, state_dir) == ""
    assert hook_output("PreToolUse", tool, role, project, memory_dir, state_dir) == ""
    role.write_text(ROLE.replace("pandas", "polars"), encoding="utf-8")  # the Edit itself
    role.write_text(ROLE + "Moved to the platform team in May.\n", encoding="utf-8")  # vim
    assert hook_output("PostToolUse", tool, role, project, memory_dir, state_dir) == ""
    assert "user_role.md" in denial(
        hook_output("PreToolUse", "Write", role, project, memory_dir, state_dir))
    assert "changed between the Edit and its hook" in log_text(state_dir)
    assert hook_output("PostToolUse", "Read", role, project, memory_dir, state_dir) == ""
    assert hook_output("PreToolUse", tool, role, project, memory_dir, state_dir) == ""
    role.write_text(role.read_text().replace("pandas", "polars"), encoding="utf-8")
    assert hook_output("PostToolUse", tool, role, project, memory_dir, state_dir) == ""
    assert hook_output("PreToolUse", "Write", role, project, memory_dir, state_dir) == ""


def test_a_path_from_the_home_is_the_file_claude_code_writes(
        tmp_path: Path, state_dir: Path, project: Path) -> None:
    """Claude Code's tools expand a leading ``~``; the gate did not, and took
    ``~/memory/user_role.md`` for a file under a folder named ``~`` — never gated."""
    home = tmp_path / "home"
    memory = home / "memory"
    memory.mkdir(parents=True)
    write_memory(memory, "user_role.md", ROLE)

    def hook(event: str, tool: str, path: str) -> str:
        return hook_output(event, tool, path, project, memory, state_dir, HOME=str(home))

    assert hook("PostToolUse", "Read", str(memory / "user_role.md")) == ""
    change(memory / "user_role.md")
    assert "user_role.md changed since you last read it" in denial(
        hook("PreToolUse", "Edit", "~/memory/user_role.md"))


def test_an_edit_claude_code_wrote_in_the_files_quote_style_counts_as_seen(
        host: Host, memory_dir: Path) -> None:
    """Claude Code's Edit keeps the file's curly quotes in ``new_string``: still the
    model's own edit, so its next Write is not denied."""
    role = memory_dir / "user_role.md"
    role.write_text(ROLE.replace("prefers", "\u201cprefers\u201d"), encoding="utf-8")
    host.read(role)
    edit = {"file_path": str(role), "old_string": '"prefers" notebooks',
            "new_string": '"prefers" notebooks and "polars"', "replace_all": False}
    role.write_text(role.read_text().replace("\u201cprefers\u201d notebooks",
                                             "\u201cprefers\u201d notebooks and "
                                             "\u201cpolars\u201d"), encoding="utf-8")
    data = json.loads(payload("PostToolUse", "Edit", role, host.cwd))
    data["tool_input"] = edit
    assert claude_code(json.dumps(data).encode(), host.env) == ""
    assert host.before("Write", role) == ""
