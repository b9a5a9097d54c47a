"""Live: ``GET /events`` tells open pages, as server-sent events, that the folder changed
— an edit on disk, a git checkout, another agent's write — so they re-fetch without a
reload. A page opts in with htmx's SSE extension (``sse-connect="/events"`` above,
``hx-trigger="sse:changed"`` on what should refresh itself).

While at least one page listens, one task compares every layer's folder signature
(``health.folder_signature``: names, sizes, mtimes from one stat pass, tens of
milliseconds at 10,000 memories) once a second on the store thread; the last page to
leave stops it. A stat pass rather than the OS's file events: it sees a change however
it came (a checkout replacing the directory, a network drive that sends no events), and
a second's delay is all a person looking at a page needs. Each stream also watches its
own connection, so a closed tab ends its stream at once, not at the next write.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.routing import Route

from .guard import Message, Receive, Scope, Send
from .health import folder_signature

if TYPE_CHECKING:
    from .app import Panel

POLL = 1.0
"""Seconds between stat passes: a change shows within about this (the brief: ~1 s)."""
HEARTBEAT = 15.0
"""Seconds between comment lines on a quiet stream, so a proxy or a sleeping laptop's
dead connection is noticed by the browser, which then reconnects."""
RETRY_MS = 2000
"""How long a browser waits before reconnecting after the panel restarts."""


def routes(panel: Panel) -> list[Route]:
    return [Route("/events", Live(panel), methods=["GET"])]


class Live:
    """The ``/events`` ASGI endpoint and the one poller behind all its streams."""

    def __init__(self, panel: Panel, *, poll: float = POLL) -> None:
        self.panel, self.poll = panel, poll
        self.streams = 0
        """Open streams (a test checks a closed tab brings it back to 0)."""
        self._next: asyncio.Event | None = None
        self._poller: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8"),
                                (b"x-accel-buffering", b"no")]})
        self._join()
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await _send(send, f"retry: {RETRY_MS}\n\n")
            while not gone.done():
                await self._next_message(send, gone)
        except OSError:  # the client went away while we wrote to it
            pass
        finally:
            gone.cancel()
            self._leave()

    async def _next_message(self, send: Send, gone: asyncio.Future[None]) -> None:
        """Wait for a change, the heartbeat or the client leaving; say which it was."""
        assert self._next is not None
        change = asyncio.ensure_future(_set(self._next))
        done, _ = await asyncio.wait({change, gone}, timeout=HEARTBEAT,
                                     return_when=asyncio.FIRST_COMPLETED)
        change.cancel()
        if gone in done:
            return
        await _send(send, "event: changed\ndata: changed\n\n" if change in done else ":\n\n")

    def _join(self) -> None:
        self.streams += 1
        if self._poller is None:
            self._next = asyncio.Event()
            self._poller = asyncio.ensure_future(self._watch())

    def _leave(self) -> None:
        self.streams -= 1
        if self.streams == 0 and self._poller is not None:
            self._poller.cancel()
            self._poller = None

    async def _watch(self) -> None:
        """Compare the signatures once a second; a difference wakes every stream."""
        seen = await self.panel.run(self._signature)
        while True:
            await asyncio.sleep(self.poll)
            now = await self.panel.run(self._signature)
            if now != seen and self._next is not None:
                seen, woken = now, self._next
                self._next = asyncio.Event()
                woken.set()

    def _signature(self) -> tuple[object, ...]:
        return tuple(folder_signature(store) for _, store in self.panel.layers.stores())


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone (the request has no body worth reading)."""
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _set(event: asyncio.Event) -> None:
    await event.wait()


async def _send(send: Send, text: str) -> None:
    await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
