"""The listener: answers the prompt hook and ``sagemem inject`` for one folder, with the
functions the in-process calls use, so the output is the same to the byte.

Each connection gets a thread; the peer's uid is checked first (``SO_PEERCRED``), and a
peer of any other uid is dropped unanswered. Requests are answered one at a time (one
lock): the in-process hooks this replaces were separate processes, and the session
files and the index were written with processes, not threads, in mind.

The folder's layers stay open between requests, each folder followed by a watcher as in
the MCP server (``search/watch.py``): a prompt with nothing changed skips the index's
stat pass, and a memory written between two prompts is indexed by the second, which
the hook's own index sync (bounded by ``hook_budget_ms``) does as in-process. They
belong to one worker thread (SQLite connections stay on the thread that opened them),
which answers every request; a request whose settings differ from the held layers'
(another ``SAGE_MEM_*`` value) reopens them.
A request for another folder (its resolved memory or state directory differs, or its
``HOME``), a tool event (the write gate, which reads the process's own view of the
files) or an ``inject`` with ``debug`` on is answered ``not_mine``: the client runs it
itself.
"""

from __future__ import annotations

import base64
import binascii
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..claude_code.gate import TOOL_EVENTS
from ..claude_code.hook import HookEvent, claude_code, parse_event
from ..config import Settings, load_settings, resolve_dirs
from ..errors import DirectoryMissing, MemoryOff, SagememError, ServeProtocolError, ServeRefused
from ..files.controls import visible
from ..inject.printed import printed_injection
from ..inject.session import DEFAULT_SESSION
from ..layers import Layers
from .paths import peer_uid, prepare_socket_path, socket_path
from .protocol import KINDS, MAX_REQUEST_BYTES, recv_frame, send_frame

READ_TIMEOUT = 5.0  # a client sends its whole request at once; a silent one is dropped
ACCEPT_POLL = 0.5  # how often the accept loop looks at the stop flag and the idle clock

Reply = dict[str, Any]
NOT_MINE: Reply = {"status": "not_mine"}


@dataclass(frozen=True)
class Request:
    """A checked request (``protocol.py``): what the client's process would have had."""

    kind: str
    env: dict[str, str]
    cwd: Path
    memory_dir: Path | None
    state_dir: Path | None
    payload: bytes = b""
    prompt: str = ""


class HeldLayers:
    """The layers of the last settings seen, kept open and watched; used on the worker
    thread only."""

    def __init__(self) -> None:
        self._settings: Settings | None = None
        self._layers: Layers | None = None

    def __call__(self, settings: Settings) -> AbstractContextManager[Layers]:
        if self._layers is None or settings != self._settings:
            self.close()
            self._layers, self._settings = Layers.from_settings(settings), settings
        for _, store in self._layers.stores():
            if store.directory.is_dir():  # again once a folder that went away is back
                store.search_index().watch()
        return nullcontext(self._layers)

    def close(self) -> None:
        if self._layers is not None:
            self._layers.close()
        self._layers = self._settings = None


class HookServer:
    """One folder's listener: ``listen`` (ServeRefused if it may not), then
    ``serve_forever`` until ``stop`` or ``idle_seconds`` without a request."""

    def __init__(self, settings: Settings, *, idle_seconds: float | None = None) -> None:
        self.memory_dir, self.state_dir = settings.memory_dir, settings.state_dir
        self.idle_seconds = idle_seconds or None
        self.path: Path | None = None
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._last = time.monotonic()
        self._threads: set[threading.Thread] = set()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sagemem-serve")
        self._held = HeldLayers()

    def listen(self) -> Path:
        """Bind ``<state>/run/serve.sock`` (owner-only: the run directory is 0700 before
        the socket exists, the socket 0600 before ``listen``). A missing memory folder is
        refused first: a server for it would answer every prompt with nothing."""
        if not self.memory_dir.is_dir():
            raise DirectoryMissing(self.memory_dir, self.memory_dir.exists())
        try:
            path = prepare_socket_path(self.state_dir)
        except OSError as exc:  # a read-only state directory, a permission refused
            raise ServeRefused(socket_path(self.state_dir), exc.strerror or str(exc)) from None
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(os.fspath(path))
            os.chmod(path, 0o600)
            listener.listen(16)
        except OSError as exc:
            listener.close()
            raise ServeRefused(path, exc.strerror or str(exc)) from None
        self._inode = os.lstat(path).st_ino
        self.path, self._listener = path, listener
        return path

    def serve_forever(self) -> None:
        """Accept until stopped or idle; then close (the socket is removed)."""
        assert self._listener is not None, "listen() first"
        self._listener.settimeout(ACCEPT_POLL)
        try:
            while not self._stopping.is_set() and not self._idle():
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self._stopping.is_set():
                        break
                    raise
                self._start(conn)
        finally:
            self.close()

    def stop(self) -> None:
        """Ask the loop to end (signal handlers and other threads call this)."""
        self._stopping.set()

    def close(self) -> None:
        """Stop listening, let a request under way finish, remove our socket (only ours:
        a server that replaced a stale one after us keeps its own)."""
        self._stopping.set()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        for thread in list(self._threads):
            thread.join(READ_TIMEOUT)
        with suppress(RuntimeError):  # closed twice: the worker is gone already
            self._worker.submit(self._held.close).result()
        self._worker.shutdown(wait=True)
        if self.path is not None and self._inode is not None:
            try:
                if os.lstat(self.path).st_ino == self._inode:
                    os.unlink(self.path)
            except OSError:
                pass
            self._inode = None

    def _idle(self) -> bool:
        if self.idle_seconds is None or self._lock.locked() or self._threads:
            return False
        return time.monotonic() - self._last > self.idle_seconds

    def _start(self, conn: socket.socket) -> None:
        thread = threading.Thread(target=self._connection, args=(conn,), daemon=True)
        self._threads.add(thread)
        thread.start()

    def _connection(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(READ_TIMEOUT)
                if peer_uid(conn) not in (os.getuid(), -1):  # -1: no SO_PEERCRED here
                    return  # another user: no answer at all, not even a refusal
                try:
                    raw = recv_frame(conn, MAX_REQUEST_BYTES)
                except (ServeProtocolError, OSError):
                    return
                reply = self.answer(raw)
                self._last = time.monotonic()
                send_frame(conn, reply)
        except OSError:
            pass  # the client went away (Claude Code killed the hook): nothing to tell
        finally:
            self._threads.discard(threading.current_thread())

    def answer(self, raw: Mapping[str, Any]) -> Reply:
        """The reply to one request; one request at a time (see the module doc)."""
        try:
            request = parse_request(raw)
        except ValueError as exc:
            return {"status": "error", "message": str(exc)}
        try:
            return self._worker.submit(self._answer, request).result()
        except RuntimeError:  # shutting down: nothing was done
            return {"status": "error", "message": "the server is stopping"}

    def _answer(self, request: Request) -> Reply:
        with self._lock:
            self._last = time.monotonic()
            if not self._mine(request):
                return NOT_MINE
            try:
                return self._compute(request)
            except Exception as exc:  # inject's own errors: the full CLI says them
                return {"status": "error", "message": f"{type(exc).__name__}: {exc}"}

    def _mine(self, request: Request) -> bool:
        """Whether the client's own process would use this server's folder."""
        if request.env.get("HOME") != os.environ.get("HOME"):  # ``~`` would differ
            return False
        try:
            memory, state, _ = resolve_dirs(request.env, request.memory_dir,
                                            request.state_dir, cwd=request.cwd)
        except Exception:  # memory off, a broken map: the client's own run says so
            return False
        return _same(memory, self.memory_dir) and _same(state, self.state_dir)

    def _compute(self, request: Request) -> Reply:
        if request.kind == "hook":
            return self._hook(request)
        return self._inject(request)

    def _hook(self, request: Request) -> Reply:
        event = parse_event(request.payload)
        if isinstance(event, HookEvent) and event.name in TOOL_EVENTS:
            return NOT_MINE
        output = claude_code(request.payload, request.env, memory_dir=request.memory_dir,
                             state_dir=request.state_dir, cwd=request.cwd,
                             open_layers=self._held)
        return _ok(output + "\n" if output else "")

    def _inject(self, request: Request) -> Reply:
        try:
            settings = load_settings(request.env, request.memory_dir, request.state_dir,
                                     cwd=request.cwd)
        except MemoryOff:  # as ``sagemem inject``: no block, no failure
            return _ok("")
        if settings.debug:  # the explanation is the CLI's to format
            return NOT_MINE
        warnings = "".join(visible(f"warning: {w}") + "\n" for w in settings.warnings)
        printed = printed_injection(settings, request.prompt, DEFAULT_SESSION,
                                    open_layers=self._held, cwd=request.cwd,
                                    env=request.env)
        return _ok(printed.stdout, warnings + printed.stderr)


def start_listener(settings: Settings) -> HookServer | None:
    """Listen for the hook beside another server (the MCP server): in a daemon thread,
    never idle-stopped. If the socket is taken or unsafe, one stderr line says why and
    nothing listens: the hook then runs in its own process, as without a server."""
    server = HookServer(settings)
    try:
        server.listen()
    except (SagememError, OSError) as exc:
        print(f"sagemem: not serving the prompt hook: {exc}", file=sys.stderr, flush=True)
        return None
    threading.Thread(target=server.serve_forever, name="sagemem-hook-listener",
                     daemon=True).start()
    return server  # said nowhere: an MCP client reads the server's stderr as its log


def parse_request(raw: Mapping[str, Any]) -> Request:
    """A ``Request`` from a frame; ValueError naming the first field that is wrong."""
    kind, env, cwd = raw.get("kind"), raw.get("env"), raw.get("cwd")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in env.items()):
        raise ValueError("env must map strings to strings")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ValueError("cwd must be an absolute path")
    folders = [raw.get("memory_dir"), raw.get("state_dir")]
    if not all(f is None or (isinstance(f, str) and os.path.isabs(f)) for f in folders):
        raise ValueError("memory_dir and state_dir must be absolute paths or null")
    memory_dir, state_dir = (Path(f) if f else None for f in folders)
    if kind == "inject":
        if not isinstance(raw.get("prompt"), str):
            raise ValueError("an inject request needs a string prompt")
        return Request(kind, env, Path(cwd), memory_dir, state_dir, prompt=raw["prompt"])
    try:
        payload = base64.b64decode(raw.get("payload", ""), validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise ValueError("payload must be base64") from None
    return Request(kind, env, Path(cwd), memory_dir, state_dir, payload=payload)


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _ok(stdout: str, stderr: str = "") -> Reply:
    return {"status": "ok", "stdout": stdout, "stderr": stderr, "code": 0}
