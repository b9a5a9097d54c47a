"""``sagemem ui``: the panel on a loopback port, its URL (with this run's token) printed."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable

from ..errors import AddressUnavailable
from ..layers import Layers

HOST = "127.0.0.1"


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def serve_panel(layers: Layers, *, port: int = 0, announce: Callable[[str], None] = print,
                on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until stopped (Ctrl-C). ``port`` 0 picks a free one; ``announce`` gets the
    one line with the URL; ``on_ready`` (opening a browser) gets the URL once listening."""
    import uvicorn

    from .app import build_app

    port = port or free_port()
    token = secrets.token_urlsafe(24)
    url = f"http://{HOST}:{port}/files?token={token}"
    app = build_app(layers, token=token, host=HOST, port=port)
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=1)  # an open tab's stream ends too
    server = uvicorn.Server(config)
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((HOST, port))
        sock.listen(128)  # a browser opened at once waits in the queue, is never refused
    except OSError as exc:
        raise AddressUnavailable(f"{HOST}:{port}", exc.strerror or str(exc)) from None
    announce(f"sagemem panel: {url}")
    if on_ready is not None:
        on_ready(url)
    server.run(sockets=[sock])
