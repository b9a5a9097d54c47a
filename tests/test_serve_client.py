"""The hook client: through a server, the same bytes as in-process; without one (or
with an unsafe socket) the call runs in-process, and the client loads no heavy stack."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serve_fixture import (
    Folder,
    Server,
    hook,
    make_folder,
    prompt,
    run,
    session_start,
    short_dir,
    socket_of,
)

__all__ = ["short_dir"]  # the fixture, used by name

PAYLOADS = [
    session_start("startup"),
    prompt("how do we deploy to production?"),
    prompt("which ports do the local services use?"),  # a second prompt, same session
    prompt("which ports do the local services use?"),  # a repeat: nothing new
    session_start("compact"),  # the session is reset
    prompt("how do we deploy to production?"),
    b"not json at all",
    {"session_id": "other", "cwd": "/tmp", "hook_event_name": "PreToolUse",
     "tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}},
]
NEW_MEMORY = """---
name: Zeppelin hangar
description: The zeppelin hangar stands at the north airfield, gate 7.
type: project
---

The zeppelin hangar is at the north airfield; enter through gate 7.
"""
NEW_QUESTION = "where is the zeppelin hangar?"
QUESTIONS = ["what is the user's timezone?", "what is the user's timezone?",
             "how are money amounts stored?"]


@pytest.fixture
def twins(short_dir: Path) -> tuple[Folder, Folder]:
    """Two copies of the same folder: one to serve, one to run in-process."""
    return make_folder(short_dir, "a"), make_folder(short_dir, "b")


def test_hook_and_inject_through_the_server_print_the_same_bytes(
        twins: tuple[Folder, Folder]) -> None:
    served, local = twins
    server = Server(served, "--idle", "0")
    try:
        server.wait_for("ready")
        for payload in PAYLOADS:
            through, alone = hook(served, payload), hook(local, payload)
            assert (through.code, through.out, through.err) == (alone.code, alone.out,
                                                                alone.err), payload
            assert not alone.served
        answered = [hook(served, p).served for p in PAYLOADS[1:3]]
        for folder in twins:  # written between two prompts: the served one sees it too
            (folder.memory / "project_zeppelin_hangar.md").write_text(NEW_MEMORY)
        through, alone = hook(served, prompt(NEW_QUESTION)), hook(local, prompt(NEW_QUESTION))
        assert through.out == alone.out and b"project_zeppelin_hangar.md" in through.out
        for question in QUESTIONS:
            through, alone = run(served, "inject", question), run(local, "inject", question)
            assert (through.code, through.out, through.err) == (alone.code, alone.out,
                                                                alone.err), question
            assert through.served and not alone.served
    finally:
        server.stop()
    assert answered == [True, True]
    assert b"additionalContext" in hook(local, prompt("how do we roll back a deploy?")).out


def test_tool_events_run_in_process_beside_a_server(twins: tuple[Folder, Folder]) -> None:
    served, _ = twins
    server = Server(served, "--idle", "0")
    try:
        server.wait_for("ready")
        assert not hook(served, PAYLOADS[-1]).served  # the write gate: not_mine
    finally:
        server.stop()


def test_without_a_server_the_hook_runs_in_process_and_logs_nothing(
        twins: tuple[Folder, Folder]) -> None:
    folder, _ = twins
    ran = hook(folder, prompt("how do we deploy to production?"))
    assert ran.code == 0 and b"additionalContext" in ran.out and not ran.served
    assert not (folder.state / "logs" / "hook.log").exists()


@pytest.mark.parametrize("plant", ["symlink", "file"])
def test_a_planted_socket_path_makes_the_hook_run_in_process_and_log_why(
        twins: tuple[Folder, Folder], short_dir: Path, plant: str) -> None:
    folder, twin = twins
    run_dir = folder.state / "run"
    run_dir.mkdir(mode=0o700)
    target = short_dir / "elsewhere"
    if plant == "symlink":
        socket_of(folder).symlink_to(target)
    else:
        socket_of(folder).write_text("planted\n")
    ran, alone = hook(folder, prompt("how do we deploy?")), hook(twin, prompt("how do we deploy?"))
    assert (ran.code, ran.out, ran.served) == (0, alone.out, False)
    log = (folder.state / "logs" / "hook.log").read_text()
    assert "not a socket" in log and str(socket_of(folder)) in log
    assert not target.exists() and os.path.lexists(socket_of(folder))


def test_a_run_dir_others_can_enter_is_not_used(twins: tuple[Folder, Folder]) -> None:
    folder, _ = twins
    server = Server(folder, "--idle", "0")
    try:
        server.wait_for("ready")
        os.chmod(folder.state / "run", 0o755)
        ran = hook(folder, prompt("how do we deploy?"))
        assert ran.code == 0 and not ran.served
        assert "must be owner-only" in (folder.state / "logs" / "hook.log").read_text()
    finally:
        os.chmod(folder.state / "run", 0o700)
        server.stop()


def test_inject_with_options_is_left_to_the_full_cli(twins: tuple[Folder, Folder]) -> None:
    folder, _ = twins
    server = Server(folder, "--idle", "0")
    try:
        server.wait_for("ready")
        as_json = run(folder, "inject", "how do we deploy?", "--json")
        assert as_json.code == 0 and as_json.out.startswith(b"{") and not as_json.served
        helped = run(folder, "inject", "--help")
        assert helped.code == 0 and b"QUESTION" in helped.out and not helped.served
    finally:
        server.stop()


def test_the_client_imports_no_typer_click_numpy_or_store() -> None:
    code = ("import sys, sagemem.serve.client, sagemem.launch\n"
            "heavy = [m for m in ('numpy', 'typer', 'click', 'sagemem.store', "
            "'sagemem.search', 'sagemem.inject', 'sagemem.claude_code') if m in sys.modules]\n"
            "assert heavy == [], heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_client_reads_as_much_stdin_as_the_hook() -> None:
    from sagemem.claude_code.hook import MAX_STDIN_BYTES
    from sagemem.serve.protocol import MAX_PAYLOAD_BYTES

    assert MAX_PAYLOAD_BYTES == MAX_STDIN_BYTES + 1
