"""The fast paths ``launch.py`` runs for ``sagemem hook claude-code`` and ``sagemem
inject PROMPT``: hand the call to a running server (``server.py``) and print its reply.

This module imports only the standard library, ``config`` and ``paths``/``protocol``
(no typer, click, numpy, store, search or inject): that is its whole point. With no
server, an unsafe socket, or a reply of ``not_mine``/``error``, the call runs in this
process as before (the hook: ``run_claude_code_hook`` on the stdin already read; inject:
the full CLI). Once the server has the request, there is no second try: it may have
recorded the injection in the session already, and a run here would inject a different
block (the session's budget spent) — a hook left without a reply prints nothing and
logs why, as a hook past its time does.
"""

from __future__ import annotations

import base64
import os
import socket
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from ..config import load_settings
from ..errors import SagememError, ServeProtocolError
from ..files.atomic import append_line, make_folder
from .paths import peer_uid, socket_path, unsafe_socket
from .protocol import MAX_PAYLOAD_BYTES, MAX_REPLY_BYTES, recv_frame, request_env, send_frame


class Call(Protocol):
    """``launch.Call``, as far as it is read here (launch is the room above)."""

    @property
    def memory_dir(self) -> Path | None: ...
    @property
    def state_dir(self) -> Path | None: ...
    @property
    def rest(self) -> tuple[str, ...]: ...

CONNECT_TIMEOUT = 0.005  # a local server accepts at once; waiting longer saves nothing
REPLY_MARGIN = 1.0  # over hook_budget_ms for the reply: the server keeps to the budget
HOOK_LOG = Path("logs") / "hook.log"


def hook_fast_path(call: Call) -> int | None:
    """``sagemem hook claude-code`` through the server; in-process when none answers."""
    if call.rest != ("hook", "claude-code"):
        return None  # --help, an extra word: the full CLI answers
    try:
        payload = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES)
    except Exception:  # no stdin at all: the same as an empty one (hook.py)
        payload = b""
    request = {"kind": "hook", "payload": base64.b64encode(payload).decode("ascii")}
    reply = _ask(call, request, log=True)
    if reply is None:
        from ..claude_code.hook import run_claude_code_hook

        return run_claude_code_hook(call.memory_dir, call.state_dir, payload=payload)
    _write(reply)
    return 0  # a hook never fails the prompt


def inject_fast_path(call: Call) -> int | None:
    """Plain ``sagemem inject PROMPT`` through the server; any other shape, or no server,
    declines (the full CLI runs)."""
    if len(call.rest) != 2 or call.rest[0] != "inject" or call.rest[1].startswith("-"):
        return None
    reply = _ask(call, {"kind": "inject", "prompt": call.rest[1]}, log=False)
    if reply is None:
        return None
    if reply.get("status") == "lost":
        print(f"error: {reply['message']}", file=sys.stderr)
        return 1
    _write(reply)
    return int(reply.get("code", 0))


def _ask(call: Call, request: dict[str, Any], *, log: bool) -> dict[str, Any] | None:
    """The server's ``ok`` reply (or ``lost``: it took the request and gave no answer);
    None when the call must run here."""
    try:
        cwd = os.getcwd()
        memory_dir, state_dir = _absolute(call.memory_dir), _absolute(call.state_dir)
        settings = load_settings(os.environ, memory_dir, state_dir, cwd=Path(cwd))
    except Exception:  # memory off, a broken setting: the run here says (or logs) it
        return None
    path = socket_path(settings.state_dir)
    if not os.path.lexists(path):
        return None  # no server: the usual case, nothing to log
    if problem := unsafe_socket(path):
        if log:
            _log(settings.state_dir, f"serve: not using {path}: {problem}")
        return None
    request |= {"env": request_env(os.environ), "cwd": cwd,
                "memory_dir": _text(memory_dir), "state_dir": _text(state_dir)}
    conn = _connect(path)
    if conn is None:
        return None
    budget = settings.hook_budget_ms / 1000 + REPLY_MARGIN
    with conn:
        try:
            send_frame(conn, request)
        except OSError:
            return None  # not taken: nothing was done
        try:
            conn.settimeout(budget)
            reply = recv_frame(conn, MAX_REPLY_BYTES)
        except (OSError, ServeProtocolError) as exc:
            return _lost(settings.state_dir, f"no reply from the server at {path} "
                                             f"({type(exc).__name__}: {exc})", log)
    if reply.get("status") != "ok" or not isinstance(reply.get("stdout"), str):
        return None  # not_mine / error: the server did nothing
    return reply


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(CONNECT_TIMEOUT)
    try:
        conn.connect(os.fspath(path))
        if peer_uid(conn) not in (os.getuid(), -1):  # the path was swapped after lstat
            raise ConnectionRefusedError("the server is another user's")
    except OSError:  # refused (stale), busy, gone, not ours: run here
        conn.close()
        return None
    return conn


def _lost(state_dir: Path, message: str, log: bool) -> dict[str, Any]:
    if log:
        _log(state_dir, f"serve: {message}; printed nothing (no second run: the server "
                        "may have recorded the injection)")
    return {"status": "lost", "message": message, "stdout": ""}


def _write(reply: Mapping[str, Any]) -> None:
    """The server's output, encoded as the in-process hook and CLI encode theirs."""
    try:
        if reply.get("stderr"):
            sys.stderr.buffer.write(str(reply["stderr"]).encode("utf-8", errors="replace"))
            sys.stderr.flush()
        if reply.get("stdout"):
            sys.stdout.buffer.write(str(reply["stdout"]).encode("utf-8", errors="replace"))
            sys.stdout.flush()
    except Exception:  # a closed pipe: the host went away, nothing to break
        pass


def _absolute(folder: Path | None) -> Path | None:
    """``--dir`` as the client's process meant it (its cwd, its ``~``)."""
    return None if folder is None else Path(os.path.abspath(os.path.expanduser(folder)))


def _text(folder: Path | None) -> str | None:
    return None if folder is None else os.fspath(folder)


def _log(state_dir: Path, message: str) -> None:
    """One line in ``<state>/logs/hook.log``, as hook.py's ``_log`` writes it (a link in
    the way refused, never followed); silent if even that fails."""
    try:
        path = state_dir / HOOK_LOG
        make_folder(state_dir, follow_link=True)
        make_folder(path.parent, parents=False)
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        line = f"{stamp} {' '.join(message.split())}"[:2000] + "\n"
        append_line(path, line.encode("utf-8", errors="replace"))
    except (SagememError, OSError):
        pass
