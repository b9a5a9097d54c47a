"""Running ``sagemem serve`` and the hook client as real processes, for test_serve*.py.

Sockets need short paths (107 bytes), so the folders live in a short temporary
directory rather than pytest's ``tmp_path``. Every process gets the same environment
(a HOME of its own, no global layer), as a shell and Claude Code would give them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_memory"
SESSION = "7e0b5c1a-2f4d-4c8e-9a61-3d5f0e2b7c19"
MARK_SERVED, MARK_LOCAL = "[served]", "[in-process]"
PROBE = ("import atexit, sys\n"
         "from sagemem.launch import main\n"
         "atexit.register(lambda: sys.stderr.write("
         f"{MARK_LOCAL!r} if {{'typer', 'sagemem.claude_code.hook'}} & set(sys.modules) "
         f"else {MARK_SERVED!r}))\n"
         "main(sys.argv[1:])\n")
"""``python -m sagemem`` with one word more on stderr: whether this process loaded the
CLI or the hook (it ran the call itself) or neither (a server answered)."""


@dataclass(frozen=True)
class Folder:
    memory: Path
    state: Path
    env: dict[str, str]

    def args(self) -> list[str]:
        return ["--dir", str(self.memory), "--state-dir", str(self.state)]


@dataclass(frozen=True)
class Ran:
    code: int
    out: bytes
    err: str
    served: bool


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sv", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def make_folder(root: Path, name: str) -> Folder:
    """A copy of sample_memory, indexed, with its own state directory."""
    memory, state, home = root / name, root / f"{name}-state", root / "home"
    shutil.copytree(SAMPLE, memory, ignore=shutil.ignore_patterns("eval"))
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "SAGE_MEM_GLOBAL_DIR": "off",
           "SAGE_MEM_SEMANTIC": "off"}
    folder = Folder(memory, state, env)
    done = subprocess.run([sys.executable, "-m", "sagemem", *folder.args(), "index"],
                          env=env, capture_output=True, cwd=root)
    assert done.returncode == 0, done.stderr
    return folder


def run(folder: Folder, *args: str, stdin: bytes = b"", cwd: Path | None = None) -> Ran:
    """``sagemem --dir … --state-dir … ARGS`` through the launcher, as a shell runs it."""
    done = subprocess.run([sys.executable, "-c", PROBE, *folder.args(), *args], input=stdin,
                          env=folder.env, capture_output=True, cwd=cwd or folder.memory.parent,
                          timeout=60)
    err = done.stderr.decode()
    served = err.endswith(MARK_SERVED)
    err = err.removesuffix(MARK_SERVED).removesuffix(MARK_LOCAL)
    return Ran(done.returncode, done.stdout, err, served)


def hook(folder: Folder, payload: dict[str, Any] | bytes) -> Ran:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return run(folder, "hook", "claude-code", stdin=data)


def prompt(text: str, session: str = SESSION) -> dict[str, Any]:
    return {"session_id": session, "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
            "prompt": text}


def session_start(source: str, session: str = SESSION) -> dict[str, Any]:
    return {"session_id": session, "cwd": "/tmp", "hook_event_name": "SessionStart",
            "source": source}


class Server:
    """A ``sagemem serve`` process; its stderr is collected line by line."""

    def __init__(self, folder: Folder, *args: str, command: tuple[str, ...] = ("serve",)):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sagemem", *folder.args(), *command, *args],
            env=folder.env, cwd=folder.memory.parent, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def wait_for(self, word: str, timeout: float = 30) -> str:
        """The first stderr line holding ``word``; fails if the process ends first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = [line for line in self.lines if word in line]
            if found:
                return found[0]
            if self.process.poll() is not None:
                self._reader.join(2)
                found = [line for line in self.lines if word in line]
                if found:
                    return found[0]
                raise AssertionError(f"exited {self.process.returncode}: {self.lines}")
            time.sleep(0.02)
        raise AssertionError(f"no {word!r} in {self.lines}")

    def wait_for_socket(self, path: Path, timeout: float = 30) -> None:
        """Until a socket is at ``path`` (the MCP server says nothing when it listens)."""
        end = time.monotonic() + timeout
        while not path.is_socket():
            assert self.process.poll() is None and time.monotonic() < end, self.lines
            time.sleep(0.02)

    def finish(self, timeout: float = 30) -> int:
        code = self.process.wait(timeout)
        self._reader.join(2)
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def socket_of(folder: Folder) -> Path:
    return folder.state / "run" / "serve.sock"
