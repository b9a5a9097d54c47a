"""The Files screen: every memory with its type, tags, updated, size and layer, filters,
and a mark for each thing a person should look at (audit problems, open conflicts,
locked, invalid, superseded, not yet valid; archived ones greyed). Its search box runs
the hybrid search and marks results the relevance gate finds weak."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..files.fields import TYPES
from ..files.memory import Memory
from ..files.paths import name_key
from ..history.locks import locked_names

if TYPE_CHECKING:
    from .app import Panel

SEARCH_LIMIT = 30
PAGE_ROWS = 200
"""Rows a page shows; a 10,000-memory folder is fifty pages, not a 3 MB table."""


@dataclass(frozen=True)
class Row:
    """One memory as the Files table shows it."""

    file: str
    title: str
    type: str
    tags: tuple[str, ...]
    updated: str
    size: int
    layer: str
    archived: bool
    marks: tuple[str, ...]
    score: float | None = None
    weak: bool = False


@dataclass(frozen=True)
class Filters:
    type: str = ""
    tag: str = ""
    layer: str = ""
    text: str = ""
    page: int = 1

    @classmethod
    def of(cls, request: Request) -> Filters:
        q = request.query_params
        number = q.get("page", "1")
        return cls(q.get("type", "")[:40], q.get("tag", "")[:80], q.get("layer", "")[:10],
                   q.get("q", "")[:500],
                   int(number) if number.isdigit() and 0 < len(number) < 7 else 1)

    def link(self, page: int) -> str:
        """The query string of another page of the same filters."""
        from urllib.parse import urlencode

        kept = {"q": self.text, "type": self.type, "tag": self.tag, "layer": self.layer}
        return urlencode({**{k: v for k, v in kept.items() if v}, "page": page})


@dataclass(frozen=True)
class FilesPage:
    rows: tuple[Row, ...]
    filters: Filters
    types: tuple[str, ...]
    tags: tuple[str, ...]
    layers: tuple[str, ...]
    problems: int
    conflicts: int
    unreadable: tuple[str, ...]
    weak_search: bool = False
    total: int = 0
    pages: int = 1


def routes(panel: Panel) -> list[Route]:
    async def files(request: Request) -> HTMLResponse:
        filters = Filters.of(request)
        page = await panel.run(files_page, panel, filters, date.today())
        return panel.page(request, "files.html", page=page, screen="files", live=True,
                          problems=page.problems, conflicts=page.conflicts)

    async def badges(request: Request) -> HTMLResponse:
        """The header's two badges alone: what a page refreshes when the folder changes."""
        problems, conflicts = await panel.run(badge_counts, panel)
        body = panel.templates.get_template("badges.html").render(problems=problems,
                                                                  conflicts=conflicts)
        return HTMLResponse(body)

    return [Route("/files", files), Route("/badges", badges)]


def badge_counts(panel: Panel) -> tuple[int, int]:
    """The folder's audit problems and open conflicts, over every layer."""
    found = [panel.health.health(store) for _, store in panel.layers.stores()]
    return sum(h.problems for h in found), sum(h.open_conflicts for h in found)


def files_page(panel: Panel, filters: Filters, today: date) -> FilesPage:
    """The table for ``filters`` (on the store thread)."""
    rows: list[Row] = []
    unreadable: list[str] = []
    problems = conflicts = 0
    tags: set[str] = set()
    for layer, store in panel.layers.stores():
        health = panel.health.health(store)
        problems, conflicts = problems + health.problems, conflicts + health.open_conflicts
        locked = locked_names(store)
        memories, errors = panel.memories.memories(store)
        unreadable += errors
        for memory in memories:
            tags.update(memory.tags)
            marks = _marks(memory, today, locked, health.problems_by_file[memory.file],
                           health.conflicts_by_file[memory.file])
            rows.append(_row(memory, layer, marks))
    layers = tuple(name for name, _ in panel.layers.stores())
    shown, weak = _filtered(panel, rows, filters)
    pages = max(1, -(-len(shown) // PAGE_ROWS))
    start = (min(filters.page, pages) - 1) * PAGE_ROWS
    return FilesPage(tuple(shown[start:start + PAGE_ROWS]), filters, TYPES,
                     tuple(sorted(tags)), layers, problems, conflicts, tuple(unreadable), weak,
                     len(shown), pages)


def _row(memory: Memory, layer: str, marks: tuple[str, ...]) -> Row:
    return Row(memory.file, memory.title, memory.type, memory.tags,
               memory.updated.isoformat() if memory.updated else "", memory.size, layer,
               memory.archived, marks)


def _marks(memory: Memory, today: date, locked: frozenset[str], problems: int,
           conflicts: int) -> tuple[str, ...]:
    marks = []
    if problems:
        marks.append(f"{problems} audit problem{'s' if problems > 1 else ''}")
    if conflicts:
        marks.append(f"{conflicts} open conflict{'s' if conflicts > 1 else ''}")
    if name_key(memory.file) in locked:
        marks.append("locked")
    if memory.is_invalid(today):
        marks.append(f"invalid since {memory.invalid_at}")
    if memory.superseded_by:
        marks.append(f"superseded by {memory.superseded_by}")
    if memory.is_not_yet_valid(today):
        marks.append(f"valid from {memory.valid_at}")
    return tuple(marks)


def _filtered(panel: Panel, rows: list[Row], filters: Filters) -> tuple[list[Row], bool]:
    """Rows kept by the type, tag and layer filters; with text, in the search's order,
    each with its score, the weak ones marked (the relevance gate did not pass them)."""
    kept = [r for r in rows if (not filters.type or r.type == filters.type)
            and (not filters.tag or filters.tag in r.tags)
            and (not filters.layer or r.layer == filters.layer)]
    if not filters.text.strip():
        return sorted(kept, key=lambda r: (r.archived, r.layer, r.file)), False
    response = panel.layers.search(filters.text, limit=SEARCH_LIMIT, include_archived=True)
    by_file = {(r.layer, r.file): r for r in kept}
    passing = set(response.relevance.files) if response.relevance else set()
    found = []
    for hit in response.results:
        row = by_file.get((hit.layer, hit.file))
        if row is not None:
            found.append(Row(**{**vars(row), "score": hit.score,
                                "weak": hit.file not in passing}))
    weak = response.relevance is not None and not response.relevance.passes
    return found, weak
