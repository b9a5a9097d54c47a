"""``sagemem mcp``: the memories served to an agent over the Model Context Protocol."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Annotated

import typer

from .base import app, echo

INSTALL_HINT = "the MCP server needs the mcp extra: pip install 'sagemem[mcp]'"


@app.command()
def mcp(
    ctx: typer.Context,
    http: Annotated[str | None, typer.Option(
        "--http", metavar="127.0.0.1:PORT",
        help="Serve streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of "
             "stdio.")] = None,
) -> None:
    """Serve the memories over MCP (stdio by default): search, read, guarded writes."""
    if find_spec("mcp") is None:
        echo(f"error: {INSTALL_HINT}", err=True)
        raise typer.Exit(1)
    from ..errors import InvalidArgument
    from ..mcp_server.address import check_bindable, loopback_address, url
    from ..mcp_server.server import serve

    try:
        address = loopback_address(http) if http is not None else None
    except InvalidArgument as exc:  # a usage mistake: exit 2, as for every bad option
        raise typer.BadParameter(exc.problem, param_hint="--http") from None
    layers = ctx.obj.layers()  # the global layer too, when there is one (docs/layers.md)
    if address is not None:
        check_bindable(*address)  # a port in use: one error line, exit 1
        echo(f"serving MCP at {url(*address)} (Ctrl-C stops)", err=True)
    settings = ctx.obj.settings()
    serve(layers, http=address, session_id=settings.session, settings=settings)


@app.command()
def serve(
    ctx: typer.Context,
    idle: Annotated[float | None, typer.Option(
        "--idle", metavar="MINUTES", min=0,
        help="Exit after MINUTES without a request (fractions allowed; 0 never; default: "
             "the serve_idle_minutes setting).")] = None,
) -> None:
    """Answer the prompt hook and `inject PROMPT` from one long-lived process (Ctrl-C stops)."""
    import signal

    from ..serve.server import HookServer

    settings = ctx.obj.settings()
    minutes = settings.serve_idle_minutes if idle is None else idle
    server = HookServer(settings, idle_seconds=minutes * 60)
    path = server.listen()  # ServeRefused / ServerRunning: one error line, exit 1
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: server.stop())
    after = f"exits after {minutes:g} idle minutes" if minutes else "no idle exit"
    echo(f"sagemem serve: ready at {path} for {settings.memory_dir} ({after})", err=True)
    server.serve_forever()
    echo("sagemem serve: stopped", err=True)
