"""``sagemem ui``: the memory panel in a browser (needs the ui extra)."""

from __future__ import annotations

from typing import Annotated

import click
import typer

from .base import GlobalOption, app, echo


@app.command("ui")
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Port on 127.0.0.1 (0: a free one).")] = 0,
    no_browser: Annotated[bool, typer.Option(
        "--no-browser", help="Print the address; do not open a browser.")] = False,
    global_: GlobalOption = False,
) -> None:
    """Serve the memory panel on 127.0.0.1 and print its address (it holds this run's
    token); opens the browser unless --no-browser. Ctrl-C stops it."""
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise click.UsageError("the panel needs the ui extra: pip install "
                               "'sagemem[ui]'") from None
    from ..ui.serve import serve_panel

    layers = ctx.obj.layers()
    if global_:
        from ..layers import Layers

        layers = Layers(layers.for_write(global_=True), None)
    layers.project.require_directory()  # no folder: one error line, not an empty panel

    def opened(url: str) -> None:
        if not no_browser:
            import webbrowser

            webbrowser.open(url)

    serve_panel(layers, port=port, announce=echo, on_ready=opened)
