"""A tiny OpenAI-compatible server for the LLM planner's tests, over real HTTP.

``ScriptedLlm`` listens on 127.0.0.1 (a free port) in a thread, answers ``GET /v1/models``
with its ``models`` and each ``POST /v1/chat/completions`` with the next entry of its
``script`` — a response dict (``answer``, ``tool_calls``), a ``Raw`` reply (a status and
bytes: an HTTP error, a body that is not JSON), or a callable given the request body —
and records every request (path, headers, JSON body). The ``llm_server`` fixture starts
one and stops it after the test.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Raw:
    """A reply sent as is: the status, the body bytes, the content type."""

    status: int
    body: bytes
    content_type: str = "text/plain"


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


Reply = dict[str, Any] | Raw | Callable[[Any], "dict[str, Any] | Raw"]


@dataclass
class ScriptedLlm:
    """The server's state: what it serves and what it was asked."""

    models: list[str] = field(default_factory=lambda: ["test-model"])
    script: list[Reply] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def reply(self, path: str, body: Any) -> dict[str, Any] | Raw:
        if path == "/v1/models":
            return {"object": "list", "data": [{"id": m, "object": "model"}
                                               for m in self.models]}
        if path != "/v1/chat/completions":
            return Raw(404, b'{"error": {"message": "no such path"}}', "application/json")
        if not self.script:
            return Raw(500, b'{"error": {"message": "the script is exhausted"}}',
                       "application/json")
        step = self.script.pop(0)
        return step(body) if callable(step) else step


def answer(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion whose assistant message is ``content``."""
    return _completion({"role": "assistant", "content": content}, finish_reason)


def tool_calls(*calls: tuple[str, dict[str, Any]], finish_reason: str = "tool_calls"
               ) -> dict[str, Any]:
    """A chat completion calling each (name, arguments) in turn."""
    return _completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(calls)]}, finish_reason)


def cut() -> dict[str, Any]:
    """An answer cut off at the length limit."""
    return answer('{"operations": [{"op": "rewr', finish_reason="length")


def _completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def _handler(state: ScriptedLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._serve(json.loads(data) if data else None)

        def _serve(self, body: Any) -> None:
            state.requests.append(Recorded(self.command, self.path, dict(self.headers), body))
            reply = state.reply(self.path, body)
            if not isinstance(reply, Raw):
                reply = Raw(200, json.dumps(reply).encode(), "application/json")
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            # A client that timed out has gone; its broken pipe is no test's failure.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(reply.body)

        def log_message(self, *_: Any) -> None:  # keep pytest's output clean
            pass

    return Handler


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlm]:
    """A running scripted server; fill its ``script`` (and ``models``) in the test."""
    state = ScriptedLlm()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
