"""The Map screen and the live stream, over real HTTP to the panel served by uvicorn."""

from __future__ import annotations

import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from html import unescape
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from sagemem.layers import Layers  # noqa: E402
from sagemem.store import MemoryStore  # noqa: E402
from sagemem.ui import layout as layout_module  # noqa: E402
from sagemem.ui.app import build_app  # noqa: E402
from sagemem.ui.guard import COOKIE  # noqa: E402
from sagemem.ui.layout import Node, layout  # noqa: E402

TOKEN = "test-token-for-the-map"
HOSTILE = '"><script>alert(1)<script><img src=x onerror=alert(2)>.md'
SVG = re.compile(r'<svg id="map-svg".*?</svg>', re.S)


def memory(title: str, body: str, *, type: str = "project", tags: str = "[]",
           updated: date | None = None) -> str:
    when = (updated or date.today()).isoformat()
    return (f"---\nname: {title}\ndescription: {title}\ntype: {type}\ntags: {tags}\n"
            f"updated: {when}\n---\n{body}\n")


@dataclass
class Served:
    url: str
    folder: Path
    guard: Any
    server: Any
    thread: threading.Thread

    def get(self, path: str, *, cookie: bool = True, timeout: float = 10) -> Any:
        request = urllib.request.Request(self.url + path)
        if cookie:
            request.add_header("Cookie", f"{COOKIE}={TOKEN}")
        return urllib.request.urlopen(request, timeout=timeout)

    def text(self, path: str) -> str:
        with self.get(path) as response:
            return str(response.read().decode())

    def svg(self) -> str:
        found = SVG.search(self.text("/map"))
        assert found is not None
        return found.group(0)

    def live(self) -> Any:
        """The /events endpoint (the Live instance behind the route)."""
        return next(r.app for r in self.guard.app.routes if getattr(r, "path", "") == "/events")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(folder: Path, state: Path) -> Served:
    port = _free_port()
    guard = build_app(Layers(MemoryStore(folder, state)), token=TOKEN, host="127.0.0.1",
                      port=port)
    config = uvicorn.Config(guard, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the panel did not start"
        time.sleep(0.02)
    return Served(f"http://127.0.0.1:{port}", folder, guard, server, thread)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with links, a shared tag, an old memory, an archived one, a hostile name."""
    directory = tmp_path / "memory"
    (directory / "archive").mkdir(parents=True)
    old = date.today() - timedelta(days=800)
    files = {
        "alpha.md": memory("Alpha", "See [[beta]] and [gamma](gamma.md).", tags="[x]"),
        "beta.md": memory("Beta", "b" * 2000, type="user", tags="[x]"),
        "gamma.md": memory("Gamma", "old news", type="reference", updated=old),
        HOSTILE: memory("<b>bold</b> javascript:alert(3)", "hostile body"),
        "MEMORY.md": "- [Alpha](alpha.md) — a\n",
    }
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    (directory / "archive" / "gone.md").write_text(memory("Gone", "archived"),
                                                   encoding="utf-8")
    return directory


@pytest.fixture
def panel(folder: Path, tmp_path: Path) -> Iterator[Served]:
    served = serve(folder, tmp_path / "state")
    yield served
    served.stop()


def _points(svg: str) -> dict[str, str]:
    """Each point's element, by its data-file."""
    return {unescape(m.group(1)): m.group(0)
            for m in re.finditer(r'<a href="[^"]*" class="point[^"]*" data-file="([^"]*)">'
                                 r'.*?</a>', svg, re.S)}


def test_map_svg_is_byte_identical_across_requests_and_restarts(
        panel: Served, folder: Path, tmp_path: Path) -> None:
    first = panel.svg()
    assert panel.svg() == first
    panel.stop()
    again = serve(folder, tmp_path / "state")
    try:
        assert again.svg() == first
    finally:
        again.stop()


def test_map_draws_every_memory_linked_to_its_page(panel: Served) -> None:
    points = _points(panel.svg())
    assert set(points) == {"alpha.md", "beta.md", "gamma.md", "gone.md", HOSTILE}
    assert 'href="/memory/project/alpha.md"' in points["alpha.md"]
    assert "<title>Alpha · alpha.md (project, project, updated" in points["alpha.md"]
    assert 'href="/memory/project/gone.md"' in points["gone.md"]


def test_archived_and_old_memories_are_dim(panel: Served) -> None:
    points = _points(panel.svg())
    opacity = {f: float(re.search(r'opacity="([0-9.]+)"', p).group(1))  # type: ignore[union-attr]
               for f, p in points.items()}
    assert 'class="point archived"' in points["gone.md"]
    assert opacity["gone.md"] == layout_module.ARCHIVED
    assert opacity["gamma.md"] == layout_module.STALE < opacity["alpha.md"] == 1.0


def test_map_draws_links_and_shared_tags(panel: Served) -> None:
    svg = panel.svg()
    assert svg.count('<line class="link"') == 2  # alpha → beta, alpha → gamma
    assert svg.count('<line class="tag"') == 0  # alpha–beta share x, but a link wins
    radius = {f: float(re.search(r' r="([0-9.]+)"', p).group(1))  # type: ignore[union-attr]
              for f, p in _points(svg).items()}
    assert radius["beta.md"] > radius["alpha.md"]


def test_hostile_file_name_and_title_stay_escaped(panel: Served) -> None:
    page = panel.text("/map")
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>bold" not in page
    point = _points(SVG.search(page).group(0))[HOSTILE]  # type: ignore[union-attr]
    href = re.search(r'href="([^"]*)"', point).group(1)  # type: ignore[union-attr]
    assert href.startswith("/memory/project/%22%3E%3Cscript%3E")
    assert "&lt;b&gt;bold&lt;/b&gt; javascript:alert(3)" in point


def test_map_is_refused_without_the_cookie(panel: Served) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        panel.get("/map", cookie=False)
    assert refused.value.code == 403
    refused.value.close()


def test_events_without_the_cookie_are_refused(panel: Served) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        panel.get("/events", cookie=False)
    assert refused.value.code == 403
    refused.value.close()


def _read_until(stream: Any, needle: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen:
        assert time.monotonic() < deadline, f"no {needle!r} within {seconds} s: {seen!r}"
        seen += stream.read1(4096)
    return seen


def test_events_say_changed_soon_after_a_write_on_disk(panel: Served, folder: Path) -> None:
    with panel.get("/events", timeout=5) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert b"retry:" in _read_until(stream, b"\n\n", 2)
        time.sleep(1.2)  # the poller has its baseline
        (folder / "delta.md").write_text(memory("Delta", "new"), encoding="utf-8")
        written = time.monotonic()
        assert b"event: changed" in _read_until(stream, b"event: changed", 2.5)
        assert time.monotonic() - written < 2.5
    assert "delta.md" in _points(panel.svg())


def test_a_closed_stream_ends_its_task_and_the_poller(panel: Served) -> None:
    live = panel.live()
    for _ in range(2):
        with panel.get("/events", timeout=5) as stream:
            _read_until(stream, b"\n\n", 2)
            assert live.streams == 1 and live._poller is not None
    deadline = time.monotonic() + 3
    while live.streams or live._poller is not None:
        assert time.monotonic() < deadline, "a closed tab kept its stream"
        time.sleep(0.05)


def test_pages_opt_in_to_the_stream(panel: Served) -> None:
    page = panel.text("/map")
    assert '<body hx-ext="sse" sse-connect="/events">' in page
    assert '<script src="/static/htmx-sse.min.js" defer></script>' in page
    assert 'hx-trigger="sse:changed"' in page
    assert "<script>" not in page and "style=" not in page


def test_layout_places_a_memory_by_its_name_only() -> None:
    one = Node("project/a.md", "user", 10, 0, False)
    alone = layout([one], ("user", "project")).points[0]
    crowd = layout([one, *(Node(f"project/n{i}.md", "user", 10, 0, False) for i in range(50))],
                   ("user", "project"))
    assert next(p for p in crowd.points if p.key == "project/a.md") == alone


def test_layout_bounds_the_lines_of_a_popular_tag() -> None:
    nodes = [Node(f"project/n{i:03}.md", "user", 10, 0, False, tags=("all",))
             for i in range(300)]
    assert len(layout(nodes, ("user",)).edges) == layout_module.TAG_EDGES


def test_layout_keeps_points_inside_the_picture() -> None:
    nodes = [Node(f"project/n{i}.md", g, i * 37, i, i % 5 == 0)
             for i in range(2000) for g in ("user", "?")[: 1 + i % 2]]
    for p in layout(nodes, ("user", "feedback", "project", "reference")).points:
        assert min(p.x, p.y) - p.r >= -10 and max(p.x, p.y) + p.r <= 1010
        assert layout_module.MIN_R <= p.r <= layout_module.MAX_R
