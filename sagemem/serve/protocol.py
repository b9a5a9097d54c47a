"""The frames on the hook socket: a 4-byte big-endian length, then that many bytes of
one JSON object. Both sides bound what they read, so a peer cannot make the other
allocate without limit.

A request is ``{"kind": "hook" | "inject", "payload": <base64 of the hook's stdin>
| "prompt": str, "env": {SAGE_MEM_*, HOME}, "cwd": str, "memory_dir": str | null,
"state_dir": str | null}``: everything the folder resolution and the settings read, so
the server computes what the client's own process would have. A reply is
``{"status": "ok", "stdout": str, "stderr": str, "code": int}``, or ``{"status":
"not_mine"}`` (another folder, or a call it does not take: nothing was done) or
``{"status": "error", "message": str}`` (nothing was done either).
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Mapping
from typing import Any

from ..errors import ServeProtocolError

HEADER = struct.Struct(">I")
MAX_PAYLOAD_BYTES = 1024 * 1024 + 1
"""What the client reads of stdin: hook.py's MAX_STDIN_BYTES and one more byte, so the
hook still sees (and logs) an oversized payload. Written out: hook.py loads the stack."""
MAX_REQUEST_BYTES = 2 * MAX_PAYLOAD_BYTES  # base64 of the payload, the env, the paths
MAX_REPLY_BYTES = 4 * 1024 * 1024  # a block is under 10,000 chars; notices add little
ENV_PREFIX = "SAGE_MEM_"
CLIENT_KEYS = frozenset({"HOME", "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR"})
KINDS = frozenset({"hook", "inject"})


def request_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables the folder resolution and the settings read: ``SAGE_MEM_*``,
    ``HOME`` (``~``), and Claude Code's ``CLAUDE_PROJECT_DIR`` and ``CLAUDE_CONFIG_DIR``
    (which project's transcripts are recalled, and where they are). Nothing else of the
    client's environment is sent."""
    return {k: v for k, v in env.items() if k.startswith(ENV_PREFIX) or k in CLIENT_KEYS}


def send_frame(sock: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(message).encode("ascii")  # \u escapes carry argv's lone surrogates
    sock.sendall(HEADER.pack(len(data)) + data)


def recv_frame(sock: socket.socket, limit: int) -> dict[str, Any]:
    """One frame of at most ``limit`` bytes; ServeProtocolError when it is not one."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    if size > limit:
        raise ServeProtocolError(f"a frame of {size} bytes, over the limit of {limit}")
    try:
        message = json.loads(_exactly(sock, size).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ServeProtocolError(f"a frame that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ServeProtocolError("a frame that is not a JSON object")
    return message


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 65536))
        if not chunk:
            raise ServeProtocolError(f"the peer closed with {left} bytes of a frame unsent")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
