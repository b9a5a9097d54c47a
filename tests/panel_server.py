"""The real panel (``build_app`` under uvicorn) on a free loopback port, for the panel's
tests: ``running_panel(directory, state_dir)`` yields a ``PanelServer`` whose ``get`` and
``post`` speak real HTTP with the run's cookie and the panel's own ``Origin``, as the
panel's page in a browser would; ``request`` sends exactly the headers given (a foreign
Host, no cookie) for the guard's tests. The server stops when the block ends.
``ui_process`` runs ``sagemem ui`` itself as a subprocess; ``HOSTILE_MEMORY`` is a
memory written to attack the page."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# Locally a checkout without the ui extra skips the panel's tests; CI has it, so there a
# missing extra fails at the import below instead of passing as a skip.
if not os.environ.get("CI"):
    pytest.importorskip("jinja2", reason="the panel's tests need the ui extra "
                                         "(pip install -e '.[ui]')")

import uvicorn

from sagemem.layers import Layers
from sagemem.store import MemoryStore
from sagemem.ui.app import build_app
from sagemem.ui.guard import COOKIE

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HOST = "127.0.0.1"
START_TIMEOUT = 30.0


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers (case-insensitive lookup), body as text."""

    status: int
    headers: Message
    text: str


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 303 is an answer to look at (the token trade), not one to follow."""

    def redirect_request(self, *_args: object, **_kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class PanelServer:
    """A running panel: ``url`` is its root (``http://127.0.0.1:PORT``), ``token`` the
    run's secret, ``token_url`` the address ``sagemem ui`` would print, ``layers`` what
    it serves (for a test to read or change the folder through the library)."""

    url: str
    token: str
    port: int
    layers: Layers

    @property
    def origin(self) -> str:
        return self.url

    @property
    def token_url(self) -> str:
        return f"{self.url}/files?token={self.token}"

    @property
    def cookie(self) -> str:
        return f"{COOKIE}={self.token}"

    def get(self, path: str) -> Reply:
        """``GET path`` as the panel's own page sends it (cookie and Origin)."""
        return self.request("GET", path, self._own())

    def post(self, path: str, form: Mapping[str, str]) -> Reply:
        """``POST path`` with ``form`` url-encoded, as the panel's own page sends it."""
        return self.request("POST", path, {**self._own(),
                                           "Content-Type": "application/x-www-form-urlencoded"},
                            urllib.parse.urlencode(form).encode())

    def request(self, method: str, path: str, headers: Mapping[str, str],
                body: bytes | None = None) -> Reply:
        """Exactly these headers (urllib adds Host unless one is given), no redirects."""
        request = urllib.request.Request(self.url + path, data=body, method=method,
                                         headers=dict(headers))
        try:
            with _OPENER.open(request, timeout=30) as answer:
                return Reply(answer.status, answer.headers, answer.read().decode("utf-8"))
        except urllib.error.HTTPError as answer:  # 3xx unfollowed, 4xx, 5xx: answers too
            with answer:
                return Reply(answer.code, answer.headers, answer.read().decode("utf-8"))

    def _own(self) -> dict[str, str]:
        return {"Cookie": self.cookie, "Origin": self.origin}


@contextmanager
def running_panel(directory: Path, state_dir: Path, *,
                  global_dir: Path | None = None) -> Iterator[PanelServer]:
    """The panel over ``directory`` (state in ``state_dir``; a global layer too when
    ``global_dir`` is given), serving until the block ends."""
    project = MemoryStore(directory, state_dir)
    layers = Layers(project, None if global_dir is None else
                    MemoryStore(global_dir, global_dir.parent / f"{global_dir.name}-state"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    port = int(sock.getsockname()[1])
    token = secrets.token_urlsafe(24)
    app = build_app(layers, token=token, host=HOST, port=port)
    # ws="none": no websockets import (its deprecation warnings would be errors here).
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", lifespan="off",
                            ws="none", timeout_graceful_shutdown=1)  # open streams end too
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="panel-server", daemon=True)
    thread.start()
    try:
        _wait_started(server, thread)
        yield PanelServer(f"http://{HOST}:{port}", token, port, layers)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
        app.app.state.panel.executor.shutdown(wait=True)  # type: ignore[attr-defined]
    assert not thread.is_alive(), "the panel's server did not stop"


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the panel's server stopped before it started")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the panel's server did not start in {START_TIMEOUT:.0f} s")
        time.sleep(0.02)


HOSTILE_MEMORY = """---
name: "<script>alert(1)</script> \\e[31mred\\a"
description: "<img src=x onerror=alert(2)> \\e[31mred\\a bell"
metadata:
  type: project
tags: ["<script>alert(3)</script>", "\\e[2Jbell\\a"]
---
<script>alert(4)</script>
[click me](javascript:alert(5)) <a href="javascript:alert(6)">raw link</a>
Escape \x1b[2J and bell \x07 in the body.
"""
"""A memory written to attack the page: script tags in its name, description, tags and
body, ``javascript:`` links, ESC and BEL control characters."""


@dataclass
class UiRun:
    """A ``sagemem ui`` process: the line it printed first; once stopped, the rest of
    its stdout and its stderr."""

    process: subprocess.Popen[str]
    line: str
    rest: str = ""
    err: str = ""


@contextmanager
def ui_process(directory: Path, state_dir: Path, *args: str) -> Iterator[UiRun]:
    """``sagemem ui --no-browser --port 0 ARGS…`` as a shell runs it; stopped (SIGTERM)
    when the block ends."""
    command = [sys.executable, "-m", "sagemem", "--dir", str(directory), "--state-dir",
               str(state_dir), "ui", "--no-browser", "--port", "0", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, encoding="utf-8", env=child_env())
    assert process.stdout is not None
    run = UiRun(process, process.stdout.readline())
    try:
        yield run
    finally:
        process.terminate()
        try:
            run.rest, run.err = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            run.rest, run.err = process.communicate()


def child_env() -> dict[str, str]:
    """This environment without SAGE_MEM_* (conftest's isolation, for a child)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    return {**env, "SAGE_MEM_SEMANTIC": "off", "SAGE_MEM_GLOBAL_DIR": "off"}


def wait_listening(port: int, host: str = HOST) -> None:
    """Until ``host:port`` accepts a connection. ``serve_panel`` binds before it prints
    the URL, but uvicorn listens a moment later: a connection in between is refused."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def port_of(line: str) -> int:
    """The port in ``sagemem panel: http://127.0.0.1:PORT/files?token=…``."""
    return int(urllib.parse.urlsplit(line.split(": ", 1)[1].strip()).port or 0)


CHROMIUM = Path("/usr/bin/chromium")
# --disable-background-networking and friends: Chromium's own calls home (updates, sync,
# QUIC probes) are refused on a closed network and would only slow the start.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _no_browser() -> str | None:
    """Why these tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[ui-test]')"
    if not CHROMIUM.exists():
        return f"no browser at {CHROMIUM} (apt-get install chromium)"
    return None


@contextmanager
def launched_chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser):
    skipped with the reason where there is none, a failure in CI (``CI`` set)."""
    why = _no_browser()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests cannot run in CI: {why}")
        pytest.skip(f"no browser for the panel's tests: {why}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
