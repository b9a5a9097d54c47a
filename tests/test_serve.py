"""``sagemem serve``: ready once listening, one line and exit 1 for every refusal
(nothing in the way touched), a stale socket replaced, a clean stop on a signal, the
idle exit; and the MCP server serving the hook while it runs."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from serve_fixture import Folder, Server, hook, make_folder, prompt, short_dir, socket_of

from sagemem.serve.paths import peer_uid

__all__ = ["short_dir"]  # the fixture, used by name
QUESTION = "how do we deploy to production?"


@pytest.fixture
def folder(short_dir: Path) -> Folder:
    return make_folder(short_dir, "m")


def serve_once(folder: Folder, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sagemem", *folder.args(), "serve", *args],
                          env=folder.env, capture_output=True, text=True, timeout=60)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_serve_says_ready_makes_an_owner_only_socket_and_answers(folder: Folder) -> None:
    server = Server(folder, "--idle", "0")
    try:
        assert str(socket_of(folder)) in server.wait_for("ready")
        assert stat.S_IMODE(os.lstat(folder.state / "run").st_mode) == 0o700
        info = os.lstat(socket_of(folder))
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        ran = hook(folder, prompt(QUESTION))
        assert ran.served and b"additionalContext" in ran.out
    finally:
        server.stop()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_and_removes_its_socket(folder: Folder, sig: int) -> None:
    server = Server(folder, "--idle", "0")
    server.wait_for("ready")
    server.process.send_signal(sig)
    assert server.finish() == 0
    assert "stopped" in "".join(server.lines) and "Traceback" not in "".join(server.lines)
    assert not os.path.lexists(socket_of(folder))
    server.stop()


def test_a_second_server_is_refused_while_the_first_lives(folder: Folder) -> None:
    first = Server(folder, "--idle", "0")
    try:
        first.wait_for("ready")
        assert "already answers" in one_error_line(serve_once(folder))
        assert hook(folder, prompt(QUESTION)).served  # the first one still serves
    finally:
        first.stop()


@pytest.mark.parametrize("plant", ["symlink", "file", "directory"])
def test_serve_refuses_what_is_planted_at_the_socket_path_and_touches_nothing(
        folder: Folder, short_dir: Path, plant: str) -> None:
    (folder.state / "run").mkdir(mode=0o700)
    path, target = socket_of(folder), short_dir / "target"
    if plant == "symlink":
        target.write_text("keep\n")
        path.symlink_to(target)
    elif plant == "file":
        path.write_text("keep\n")
    else:
        path.mkdir()
    assert "not a socket" in one_error_line(serve_once(folder))
    assert os.path.lexists(path)
    if plant == "symlink":
        assert path.is_symlink() and target.read_text() == "keep\n"
    elif plant == "file":
        assert path.read_text() == "keep\n"


def test_serve_refuses_a_run_dir_that_is_a_link_or_not_owner_only(
        folder: Folder, short_dir: Path) -> None:
    (folder.state / "run").mkdir(mode=0o755)
    os.chmod(folder.state / "run", 0o755)
    assert "owner-only" in one_error_line(serve_once(folder))
    assert stat.S_IMODE(os.lstat(folder.state / "run").st_mode) == 0o755  # not chmod-ed
    (folder.state / "run").rmdir()
    (short_dir / "elsewhere").mkdir(mode=0o700)
    (folder.state / "run").symlink_to(short_dir / "elsewhere")
    assert "symlink" in one_error_line(serve_once(folder))
    assert list((short_dir / "elsewhere").iterdir()) == []


def test_serve_refuses_a_socket_path_too_long(short_dir: Path) -> None:
    folder = make_folder(short_dir, "m")
    long_state = short_dir / ("s" * 100)
    args = ["--dir", str(folder.memory), "--state-dir", str(long_state), "serve"]
    done = subprocess.run([sys.executable, "-m", "sagemem", *args], env=folder.env,
                          capture_output=True, text=True, timeout=60)
    assert "over the 107" in one_error_line(done)


def test_serve_refuses_a_memory_folder_that_does_not_exist(short_dir: Path) -> None:
    folder = make_folder(short_dir, "m")
    missing = short_dir / "gone"
    args = ["--dir", str(missing), "--state-dir", str(folder.state), "serve"]
    done = subprocess.run([sys.executable, "-m", "sagemem", *args], env=folder.env,
                          capture_output=True, text=True, timeout=60)
    assert "does not exist" in one_error_line(done)
    assert not (folder.state / "run").exists()


def test_after_kill_9_the_hook_falls_back_and_serve_replaces_the_stale_socket(
        folder: Folder) -> None:
    server = Server(folder, "--idle", "0")
    server.wait_for("ready")
    server.process.kill()
    server.finish()
    server.stop()
    assert stat.S_ISSOCK(os.lstat(socket_of(folder)).st_mode)  # left behind
    ran = hook(folder, prompt(QUESTION))
    assert ran.code == 0 and b"additionalContext" in ran.out and not ran.served
    again = Server(folder, "--idle", "0")
    try:
        again.wait_for("ready")
        assert hook(folder, prompt("which ports do the local services use?")).served
    finally:
        again.stop()


def test_serve_exits_after_its_idle_time_and_removes_its_socket(folder: Folder) -> None:
    server = Server(folder, "--idle", "0.02")  # 1.2 seconds
    server.wait_for("ready")
    assert hook(folder, prompt(QUESTION)).served
    assert server.finish() == 0
    assert not os.path.lexists(socket_of(folder))
    server.stop()


def test_the_idle_time_comes_from_the_setting(folder: Folder) -> None:
    folder.env["SAGE_MEM_SERVE_IDLE_MINUTES"] = "0"
    server = Server(folder)
    try:
        assert "no idle exit" in server.wait_for("ready")
    finally:
        server.stop()


def test_the_mcp_server_serves_the_hook_while_it_runs(folder: Folder) -> None:
    mcp = Server(folder, command=("mcp",))
    try:
        mcp.wait_for_socket(socket_of(folder))
        ran = hook(folder, prompt(QUESTION))
        assert ran.served and b"additionalContext" in ran.out
        assert mcp.process.stdin is not None
        mcp.process.stdin.close()  # the client went away: the MCP server ends
        assert mcp.finish() == 0
        assert not os.path.lexists(socket_of(folder))
    finally:
        mcp.stop()


def test_an_mcp_server_beside_a_running_serve_does_not_listen(folder: Folder) -> None:
    server = Server(folder, "--idle", "0")
    mcp = None
    try:
        server.wait_for("ready")
        mcp = Server(folder, command=("mcp",))
        assert "already answers" in mcp.wait_for("not serving the prompt hook")
        assert mcp.process.poll() is None  # MCP itself runs on
    finally:
        if mcp is not None:
            mcp.stop()
        server.stop()


def test_peer_uid_is_the_connecting_process_uid() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert peer_uid(left) == os.getuid()


OTHER_USER = ("import os, socket, struct, sys\n"
              "os.setgid(65534); os.setuid(65534)\n"
              "conn = socket.socket(socket.AF_UNIX)\n"
              "conn.connect(sys.argv[1])\n"
              "conn.settimeout(20)\n"
              "try:\n"
              "    conn.sendall(struct.pack('>I', 2) + b'{}')\n"
              "    print('answered' if conn.recv(100) else 'dropped')\n"
              "except (BrokenPipeError, ConnectionResetError):\n"
              "    print('dropped')\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="connecting as another uid needs root")
def test_a_peer_of_another_uid_is_dropped_unanswered(folder: Folder) -> None:
    server = Server(folder, "--idle", "0")
    try:
        server.wait_for("ready")
        for directory in (folder.state.parent, folder.state, folder.state / "run"):
            os.chmod(directory, 0o711)  # loosened by hand: the uid check still holds
        os.chmod(socket_of(folder), 0o666)
        done = subprocess.run([sys.executable, "-I", "-S", "-c", OTHER_USER,
                               str(socket_of(folder))], capture_output=True, text=True,
                              timeout=60)
        assert done.stdout.strip() == "dropped", done.stderr  # not even an error reply
    finally:
        os.chmod(folder.state / "run", 0o700)
        server.stop()
