"""The panel's web application: Starlette routes over the library, one store thread.

Every screen reads and writes through the library (``MemoryStore``, ``Layers``, the
audit, the conflict queue, snapshots, consolidation), never around it. The store's
SQLite connections belong to the thread that opened them, so every library call runs on
one worker thread (``Panel.run``), as the MCP server does. Pages are rendered on the
server from Jinja templates with autoescaping on: memory text is always text, never
markup. htmx (vendored in ``static/``) swaps fragments; the pages work without it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..files.controls import visible
from ..layers import Layers
from .guard import PanelGuard
from .health import HealthCache, MemoriesCache

HERE = Path(__file__).parent
T = TypeVar("T")
SCREENS = ("files", "memory", "timeline", "checkup", "undo", "injection", "map")
"""The screen modules of this room, each offering ``routes(panel)``; the header's
navigation lists them in this order."""
NAV = (("files", "Files"), ("timeline", "Timeline"), ("checkup", "Health"), ("undo", "Undo"),
       ("injection", "Injection"), ("map", "Map"))
"""The header's links (address, label); one memory's screen is reached from Files."""


@dataclass
class Panel:
    """What every screen shares: the layers, the store thread, the templates."""

    layers: Layers
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1,
                                                   thread_name_prefix="sagemem-panel"))
    templates: Environment = field(default_factory=lambda: _templates())
    health: HealthCache = field(default_factory=HealthCache)
    """The audit and open conflicts per layer, for every screen's badges."""
    memories: MemoriesCache = field(default_factory=MemoriesCache)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn`` on the store thread (SQLite connections are per thread)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    def page(self, request: Request, template: str, status: int = 200,
             **context: Any) -> HTMLResponse:
        """A whole page, or only its ``#main`` fragment for an htmx request."""
        fragment = request.headers.get("hx-request") == "true" and \
            request.headers.get("hx-target") == "main"
        body = self.templates.get_template(template).render(
            request=request, fragment=fragment, screens=NAV, **context)
        return HTMLResponse(body, status_code=status)


def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["visible"] = visible  # control characters shown, never sent to the page raw
    return env


def build_app(layers: Layers, *, token: str, host: str, port: int) -> PanelGuard:
    """The panel over ``layers``, behind its guard (``guard.py``)."""
    panel = Panel(layers)
    routes: list[BaseRoute] = [Route("/", lambda _: RedirectResponse("/files", 303)),
                               Route("/favicon.ico", lambda _: Response(status_code=204)),
                               Mount("/static", StaticFiles(directory=HERE / "static"),
                                     name="static")]
    from importlib import import_module

    for screen in SCREENS:
        routes += import_module(f"{__package__}.{screen}").routes(panel)
    routes += import_module(f"{__package__}.live").routes(panel)
    app = Starlette(routes=routes, exception_handlers={404: _not_found})
    app.state.panel = panel
    return PanelGuard(app, token=token, host=host, port=port)


async def _not_found(request: Request, _exc: Exception) -> Response:
    return HTMLResponse("<!doctype html><title>Not found</title><p>No such page in the "
                        "sagemem panel. <a href=\"/files\">Files</a></p>", status_code=404)
