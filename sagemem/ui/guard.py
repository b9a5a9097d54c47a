"""Who may talk to the panel: this browser, on this machine, with this run's token.

The panel can rewrite, archive and roll back memories, so every request is checked
before any screen sees it:

- **loopback only**, and the ``Host`` header must name the address it listens on (a
  page on another site that resolves its name to 127.0.0.1 — DNS rebinding — is refused);
- **the token**: ``sagemem ui`` prints a URL holding a per-run secret; its first visit
  trades it for a cookie (``HttpOnly``, ``SameSite=Strict``) and is redirected to the
  same page without it, so the secret leaves the address bar and the history;
- **writes** (any method but GET and HEAD) need the cookie *and* an ``Origin`` (or
  ``Referer``) of the panel itself: another page cannot post a form here (CSRF);
- every answer says ``Content-Security-Policy`` with scripts from the panel's own
  ``/static`` only (no inline script, no eval), so memory text rendered into a page can
  never run, whatever it holds.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "sagemem_panel"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()),
           (b"x-content-type-options", b"nosniff"),
           # not no-referrer: Chromium then sends "Origin: null" on the page's own posts
           (b"referrer-policy", b"same-origin"),
           (b"cache-control", b"no-store"),
           (b"x-frame-options", b"DENY")]
SAFE_METHODS = frozenset({"GET", "HEAD"})


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` values a browser sends for the panel's own address."""
    names = {host, "localhost"} if host in ("127.0.0.1", "localhost") else {host}
    if host == "::1":
        names = {"[::1]"}
    return frozenset(f"{name}:{port}" for name in names)


class PanelGuard:
    """ASGI middleware in front of every screen (see the module doc)."""

    def __init__(self, app: ASGIApp, *, token: str, host: str, port: int) -> None:
        self.app, self.token = app, token
        self.hosts = allowed_hosts(host, port)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if headers.get("host") not in self.hosts:
            await _refuse(send, 421, "this panel answers only at its own address")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if _same(query.get("token"), self.token):
            await _trade_token(scope, query, self.token, send)
            return
        if not _same(_cookie(headers.get("cookie", "")), self.token):
            await _refuse(send, 403, "open the address `sagemem ui` printed (it holds this "
                                     "run's token)")
            return
        if scope["method"] not in SAFE_METHODS and not self._same_origin(headers):
            await _refuse(send, 403, "a change must come from the panel's own page")
            return
        await self.app(scope, receive, _with_headers(send))

    def _same_origin(self, headers: dict[str, str]) -> bool:
        origin = headers.get("origin")
        if origin is not None:
            return origin in self.origins
        referer = headers.get("referer", "")
        return any(referer == o or referer.startswith(o + "/") for o in self.origins)


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _cookie(header: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed Cookie header: as good as none
        return None
    morsel = jar.get(COOKIE)
    return None if morsel is None else morsel.value


async def _trade_token(scope: Scope, query: dict[str, str], token: str, send: Send) -> None:
    """The first visit: the token becomes a cookie; the page again, without it."""
    rest = {k: v for k, v in query.items() if k != "token"}
    location = scope.get("path", "/") + (f"?{urlencode(rest)}" if rest else "")
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode()),
                            *HEADERS]})
    await send({"type": "http.response.body", "body": b""})


async def _refuse(send: Send, status: int, why: str) -> None:
    body = f"sagemem panel: {why}\n".encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *HEADERS]})
    await send({"type": "http.response.body", "body": body})


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *HEADERS]
        await send(message)
    return sending
