"""Stdio on which every line gets an answer.

The SDK's stdio transport reads a line at a time, and a line it cannot read as a
JSON-RPC message — not JSON, JSON holding a lone surrogate (``"\\ud800"``, which UTF-8
cannot carry and pydantic refuses), or JSON that is no JSON-RPC message — reaches the
server as an exception, which it logs and answers with nothing: a client without a read
timeout then waits for ever (issue 20). Here each such line gets a JSON-RPC error reply
instead: ``-32700 Parse error`` for a line that is not JSON (or holds a lone surrogate),
``-32600 Invalid Request`` for JSON that is no message; with the request's id when the
line has one, else ``null``, as JSON-RPC 2.0 says.

The SDK's transport itself is kept (it claims the process's stdin and stdout so a stray
print cannot corrupt the wire): only its read stream is wrapped, so a refused line is
answered through the same writer as every reply.
"""

from __future__ import annotations

import contextlib
import json
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from .arguments import surrogate_in

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from mcp.shared._stream_protocols import ReadStream, WriteStream


async def serve_stdio(server: Server[Any]) -> None:
    """Run ``server`` over this process's stdin and stdout, answering unreadable lines."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(AnsweringReader(read_stream, write_stream), write_stream,
                         server.create_initialization_options())


class AnsweringReader:
    """The transport's read stream without the lines it could not read: each of those is
    answered on ``write`` with a JSON-RPC error, and the next message is read."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception],
                 write: WriteStream[SessionMessage]) -> None:
        self._inner, self._write = inner, write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, which the SDK's server loop restores."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, ValidationError):
                return item  # a message, or an exception of another kind: the SDK's own
            # the client may be gone meanwhile: then there is nobody to answer
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._write.send(SessionMessage(error_reply(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReader:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReader:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


def error_reply(exc: ValidationError) -> JSONRPCError:
    """The JSON-RPC error for a line the SDK could not read as a message."""
    errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        line = errors[0]["input"]
        parsed, why = _lenient(line if isinstance(line, str) else "")
        return _error(parsed, PARSE_ERROR, "Parse error", why)
    parsed = next((e["input"] for e in errors if isinstance(e["input"], dict)), None)
    return _error(parsed, INVALID_REQUEST, "Invalid Request",
                  "the line is JSON but no JSON-RPC 2.0 message this server takes")


def _lenient(line: str) -> tuple[object, str]:
    """The line as Python's JSON reader takes it (a lone surrogate escape too), and why
    the SDK could not read it."""
    try:
        parsed = json.loads(line)
    except ValueError as exc:
        return None, f"the line is not JSON ({exc})"
    except RecursionError:  # one short line of [[[[…: answered, never a crash
        return None, "the line is nested deeper than any JSON reader here takes"
    if surrogate_in(parsed) is not None:
        return parsed, ("a string in it holds a lone surrogate (such as \\ud800), which "
                        "UTF-8 cannot carry; send the text without it")
    return parsed, "the line is not JSON the server can read (NaN, a number out of range…)"


def _error(parsed: object, code: int, message: str, why: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=_request_id(parsed),
                        error=ErrorData(code=code, message=message, data=why))


def _request_id(parsed: object) -> str | int | None:
    """The id of a request (a message with a method); a response's id names a request of
    ours, so an error sent with it would answer the wrong thing."""
    if not isinstance(parsed, dict) or "method" not in parsed:
        return None
    value = parsed.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return None if surrogate_in(value) is not None else value  # the reply must be UTF-8
