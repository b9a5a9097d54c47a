"""The map's layout: where each memory sits, how big and bright it is, which lines join
them. Pure: the same nodes give the same picture, byte for byte.

A point's place comes from its own name only (a SHA-256 of ``layer/file``) inside its
type's region, so adding, editing or deleting one memory never moves another — a force
layout would shuffle the whole sky whenever one memory came or went, which is what
"does not jump between visits" rules out. Regions sit on a ring, one per type in a fixed
order; inside one, points spread evenly over a disc (the square root of a uniform draw
for the radius).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

SIZE = 1000
"""The picture's viewBox is SIZE x SIZE; the ring of regions sits around its centre."""
RING = 290
"""How far a type's region centre is from the picture's centre."""
REGION = 200
"""A region's radius: four regions of 200 on a ring of 290 touch without overlapping."""
MIDDLE = 80
"""The radius of the middle disc, for a group not on the ring (a type sagemem does not
know): it fits inside the ring's regions (290 - 200 = 90 free)."""
MIN_R, MAX_R = 2.0, 9.0
"""A point's radius bounds: a one-line memory stays clickable, a 50 KB one stays a dot."""
R_PER_SQRT_CHAR = 0.12
"""Radius grows with the square root of the body length (area ∝ length): 1,000
characters ≈ 5.8, 3,000 or more reaches MAX_R."""
FRESHNESS = ((7, 1.0), (30, 0.85), (90, 0.7), (365, 0.55))
"""Opacity by age in days since ``updated``; older (or undated) 0.4. Steps, not a curve,
so the picture changes only when a memory crosses a step, not every day."""
STALE = 0.4
ARCHIVED = 0.15
"""An archived memory's opacity, whatever its age: there, but out of the way."""
TAG_EDGES = 8
"""At most this many lines per tag (its members chained in name order): a tag on 3,000
memories would otherwise draw millions of lines and hide every link."""


@dataclass(frozen=True)
class Node:
    """A memory as the layout sees it. ``key`` is unique (``layer/file``); ``links`` are
    the keys it links to; ``age`` is days since ``updated`` (None: undated)."""

    key: str
    group: str
    length: int
    age: int | None
    archived: bool
    links: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Point:
    key: str
    x: float
    y: float
    r: float
    opacity: float


@dataclass(frozen=True)
class Edge:
    """A line between two points; ``kind`` is "link" or "tag" (a link wins a pair)."""

    a: str
    b: str
    kind: str


@dataclass(frozen=True)
class Picture:
    points: tuple[Point, ...]
    edges: tuple[Edge, ...]


def layout(nodes: Sequence[Node], groups: Sequence[str]) -> Picture:
    """Every node placed in its group's region (``groups`` fixes their order on the ring;
    an unknown group takes the centre), and the edges between placed nodes, sorted."""
    centres = _centres(groups)
    ordered = sorted(nodes, key=lambda n: n.key)
    middle = (SIZE / 2, SIZE / 2, MIDDLE)
    points = tuple(_point(n, centres.get(n.group, middle)) for n in ordered)
    return Picture(points, edges(ordered))


def _centres(groups: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """Each group's region: centre x, y and radius, the first at the top, clockwise."""
    step = 2 * math.pi / max(len(groups), 1)
    return {g: (SIZE / 2 + RING * math.cos(i * step - math.pi / 2),
                SIZE / 2 + RING * math.sin(i * step - math.pi / 2), REGION)
            for i, g in enumerate(groups)}


def _point(node: Node, region: tuple[float, float, float]) -> Point:
    angle, spread = _draws(node.key)
    distance = region[2] * math.sqrt(spread)
    x = region[0] + distance * math.cos(2 * math.pi * angle)
    y = region[1] + distance * math.sin(2 * math.pi * angle)
    return Point(node.key, round(x, 1), round(y, 1), radius(node.length),
                 ARCHIVED if node.archived else freshness(node.age))


def _draws(key: str) -> tuple[float, float]:
    """Two numbers in [0, 1) fixed by the key (not Python's ``hash``, salted per run)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return (int.from_bytes(digest[:8], "big") / 2**64,
            int.from_bytes(digest[8:16], "big") / 2**64)


def radius(length: int) -> float:
    return round(min(MAX_R, max(MIN_R, R_PER_SQRT_CHAR * math.sqrt(max(length, 0)) + MIN_R)), 1)


def freshness(age: int | None) -> float:
    if age is None:
        return STALE
    return next((o for days, o in FRESHNESS if age <= days), STALE)


def edges(nodes: Sequence[Node]) -> tuple[Edge, ...]:
    """Links to known nodes (no self-links), then up to TAG_EDGES per tag, each pair once."""
    known = {n.key for n in nodes}
    found: dict[tuple[str, str], str] = {}
    for node in nodes:
        for target in node.links:
            if target in known and target != node.key:
                found.setdefault(_pair(node.key, target), "link")
    members: defaultdict[str, list[str]] = defaultdict(list)
    for node in nodes:
        for tag in node.tags:
            members[tag].append(node.key)
    for tag in sorted(members):
        chain = sorted(set(members[tag]))[: TAG_EDGES + 1]
        for a, b in itertools.pairwise(chain):
            found.setdefault(_pair(a, b), "tag")
    return tuple(Edge(a, b, kind) for (a, b), kind in sorted(found.items()))


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)
