"""The Map screen: the folder as a picture. Each memory is a point (colour: type; size:
body length; brightness: freshness; archived ones dim), joined by its links
(``[[wikilinks]]`` and Markdown links, found as the audit finds them) and by shared tags;
a point is a link to its memory. Where a point sits is fixed by its name
(``layout.py``), so the same folder draws the same SVG, byte for byte.

The picture is kept with the folders' signatures (one stat pass, as the header's badges
are). Measured at 10,000 memories (2 loaded cores): the library's listing 1.5-1.9 s, the
links, layout and SVG 0.9 s more; a revisit with nothing changed 0.15 s (the stat pass
and 2.8 MB sent). The SVG is written here rather than by a Jinja loop, which
took 1.4 s for 10,000 points against about 0.1 s; every text in it goes through
``escape`` (and control characters through ``visible``) exactly as autoescaping would.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING
from urllib.parse import quote

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..audit.links import memory_links
from ..files.controls import visible
from ..files.fields import TYPES
from ..files.memory import Memory
from ..files.paths import name_key
from .health import HealthCache, folder_signature
from .layout import Node, Picture, Point, layout

if TYPE_CHECKING:
    from .app import Panel

MAX_POINTS = 10_000
"""The map draws at most this many memories (the first by layer and name) and says how
many it left out: at 10,000 the page is 2.8 MB of SVG, beyond that a browser drags."""
COLOURS = {"user": "#2e90fa", "feedback": "#f79009", "project": "#12b76a",
           "reference": "#9e77ed"}
OTHER = "#98a2b3"
"""A memory whose type sagemem does not know sits in the middle, grey."""


@dataclass(frozen=True)
class Star:
    """A point as the template draws it: where, how, and what it opens."""

    point: Point
    layer: str
    file: str
    title: str
    type: str
    colour: str
    archived: bool
    updated: str


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str


@dataclass(frozen=True)
class MapPage:
    stars: tuple[Star, ...]
    lines: tuple[Line, ...]
    left_out: int
    unreadable: int
    svg: Markup


def routes(panel: Panel) -> list[Route]:
    health, kept = panel.health, MapCache()

    async def map_screen(request: Request) -> HTMLResponse:
        page, problems, conflicts = await panel.run(_map_and_badges, panel, kept, health,
                                                    date.today())
        return panel.page(request, "map.html", page=page, screen="map", colours=COLOURS,
                          other=OTHER, problems=problems, conflicts=conflicts)

    return [Route("/map", map_screen)]


def _map_and_badges(panel: Panel, kept: MapCache, health: HealthCache,
                    today: date) -> tuple[MapPage, int, int]:
    problems = conflicts = 0
    for _, store in panel.layers.stores():
        h = health.health(store)
        problems, conflicts = problems + h.problems, conflicts + h.open_conflicts
    return kept.page(panel, today), problems, conflicts


class MapCache:
    """The last map while the folders' signatures and the day hold (on the store thread)."""

    def __init__(self) -> None:
        self._kept: tuple[object, MapPage] | None = None

    def page(self, panel: Panel, today: date) -> MapPage:
        stamp = (today, tuple(folder_signature(s) for _, s in panel.layers.stores()))
        if self._kept is None or self._kept[0] != stamp:
            self._kept = (stamp, map_page(panel, today))
        return self._kept[1]


def map_page(panel: Panel, today: date) -> MapPage:
    """Every memory of every layer placed, up to MAX_POINTS."""
    found: list[tuple[str, Memory]] = []
    unreadable = 0
    for layer, store in panel.layers.stores():
        listing = store.list(include_archived=True)
        unreadable += len(listing.errors)
        found += [(layer, m) for m in listing.memories]
    found.sort(key=lambda lm: (lm[0], lm[1].archived, lm[1].file))
    shown = found[:MAX_POINTS]
    picture = layout(_nodes(shown, today), TYPES)
    stars, lines = _stars(shown, picture), _lines(picture)
    return MapPage(stars, lines, len(found) - len(shown), unreadable, svg(stars, lines))


def _key(layer: str, memory: Memory) -> str:
    return f"{layer}/{'archive/' if memory.archived else ''}{memory.file}"


def _nodes(found: list[tuple[str, Memory]], today: date) -> list[Node]:
    """The layout's nodes; a link names a file of the same layer (the live one first)."""
    by_name: dict[tuple[str, str], str] = {}
    for layer, memory in sorted(found, key=lambda lm: not lm[1].archived):
        by_name.setdefault((layer, name_key(memory.file)), _key(layer, memory))
    nodes = []
    for layer, memory in found:
        links = tuple(key for link in memory_links(memory)
                      if (key := by_name.get((layer, name_key(link.target)))))
        age = (today - memory.updated).days if memory.updated else None
        group = memory.type if memory.type in TYPES else ""
        nodes.append(Node(_key(layer, memory), group, len(memory.body), age,
                          memory.archived, links, memory.tags))
    return nodes


def _stars(found: list[tuple[str, Memory]], picture: Picture) -> tuple[Star, ...]:
    """The points in the picture's order (by key), each with the memory it opens."""
    by_key = {_key(layer, m): (layer, m) for layer, m in found}
    stars = []
    for point in picture.points:
        layer, m = by_key[point.key]
        stars.append(Star(point, layer, m.file, m.title, m.type, COLOURS.get(m.type, OTHER),
                          m.archived, m.updated.isoformat() if m.updated else ""))
    return tuple(stars)


def _lines(picture: Picture) -> tuple[Line, ...]:
    at = {p.key: p for p in picture.points}
    return tuple(Line(at[e.a].x, at[e.a].y, at[e.b].x, at[e.b].y, e.kind)
                 for e in picture.edges)


def svg(stars: tuple[Star, ...], lines: tuple[Line, ...]) -> Markup:
    """The picture: lines under points, each point a link to its memory with a tooltip."""
    out = ['<svg id="map-svg" class="map" viewBox="-10 -10 1020 1020" '
           'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="The memories as '
           'points">\n<g class="edges">\n']
    out += [f'<line class="{e(li.kind)}" x1="{li.x1}" y1="{li.y1}" x2="{li.x2}" '
            f'y2="{li.y2}"/>\n' for li in lines]
    out.append('</g>\n<g class="points">\n')
    out += [_point(s) for s in stars]
    out.append("</g>\n</svg>\n")
    return Markup("".join(out))


def _point(s: Star) -> str:
    p = s.point
    about = f"{s.type}, {s.layer}" + (", archived" if s.archived else "") + \
        (f", updated {s.updated}" if s.updated else "")
    return (f'<a href="/memory/{e(s.layer)}/{e(quote(s.file, safe=""))}" '
            f'class="point{" archived" if s.archived else ""}" data-file="{e(s.file)}">'
            f'<circle cx="{p.x}" cy="{p.y}" r="{p.r}" fill="{e(s.colour)}" '
            f'opacity="{p.opacity}"><title>{e(s.title)} · {e(s.file)} ({e(about)})'
            f'</title></circle></a>\n')


def e(text: str) -> str:
    """Text made safe inside an element or a quoted attribute, controls made visible."""
    return str(escape(visible(text)))
