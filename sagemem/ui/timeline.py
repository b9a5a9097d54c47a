"""The Timeline screen: the change journal (``writes/changelog``) newest first — who,
what, which file, why, the byte and line change, when, the consolidation run — filtered
by memory and by writer, each change linking to its diff.

A diff needs both versions' exact bytes. The journal never holds text, only revisions
(sha256), so each side is looked up where those bytes may still be: a kept version
(``writes/versions``), the file as it is now (live or archived), a snapshot's copy —
each checked against its revision. A version held nowhere any more is said in a
sentence, never guessed at.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..errors import SagememError
from ..files.paths import check_name, read_regular
from ..files.revision import revision_of
from ..history.snapshots import list_snapshots, read_copy
from ..store import MemoryStore
from ..writes import changelog, versions
from .health import HealthCache

if TYPE_CHECKING:
    from .app import Panel

MAX_ROWS = 500
"""The newest changes shown; the journal holds up to ~30,000 lines (two 4 MiB
generations) and a page of them all would take seconds to render and to read."""
MAX_DIFF_LINES = 5000
"""A diff of two whole 1 MiB memories can run to tens of thousands of lines; past this
the page says it stopped rather than hanging the browser."""
_REVISION = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Change:
    """One journal line as the timeline shows it, with the layer whose journal holds it."""

    layer: str
    entry: changelog.Entry

    @property
    def changes_text(self) -> bool:
        return self.entry.before != self.entry.after


@dataclass(frozen=True)
class TimelineFilters:
    file: str = ""
    writer: str = ""
    layer: str = ""

    @classmethod
    def of(cls, request: Request) -> TimelineFilters:
        q = request.query_params
        return cls(q.get("file", "").strip()[:255], q.get("writer", "").strip()[:40],
                   q.get("layer", "").strip()[:10])


@dataclass(frozen=True)
class TimelinePage:
    changes: tuple[Change, ...]
    total: int
    filters: TimelineFilters
    writers: tuple[str, ...]
    layers: tuple[str, ...]
    skipped: int
    unreadable: tuple[str, ...]


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "del", "hunk", "head" or "same": the class the page colours it by
    text: str


@dataclass(frozen=True)
class DiffPage:
    layer: str
    file: str
    before: str | None
    after: str | None
    lines: tuple[DiffLine, ...]
    missing: tuple[str, ...]
    """A sentence for each side whose bytes are held nowhere any more."""
    cut: bool = False


def routes(panel: Panel) -> list[Route]:
    cache = panel.health  # one audit per folder change for every screen

    async def timeline(request: Request) -> HTMLResponse:
        page = await panel.run(timeline_page, panel, TimelineFilters.of(request))
        problems, conflicts = await panel.run(badges, panel, cache)
        return panel.page(request, "timeline.html", page=page, screen="timeline",
                          problems=problems, conflicts=conflicts)

    async def diff(request: Request) -> HTMLResponse:
        q = request.query_params
        store = store_of(panel, q.get("layer", ""))
        if store is None:
            return panel.page(request, "timeline_diff.html", status=404, page=None,
                              problem="There is no such layer.", screen="timeline",
                              problems=0, conflicts=0)
        page = await panel.run(diff_page, q.get("layer") or "project", store,
                               q.get("file", ""), q.get("before") or None,
                               q.get("after") or None)
        problems, conflicts = await panel.run(badges, panel, cache)
        return panel.page(request, "timeline_diff.html", page=page, problem=None,
                          screen="timeline", problems=problems, conflicts=conflicts)

    return [Route("/timeline", timeline), Route("/diff", diff)]


def badges(panel: Panel, cache: HealthCache) -> tuple[int, int]:
    """The header's counts over every layer: audit problems and open conflicts."""
    problems = conflicts = 0
    for _, store in panel.layers.stores():
        health = cache.health(store)
        problems, conflicts = problems + health.problems, conflicts + health.open_conflicts
    return problems, conflicts


def store_of(panel: Panel, layer: str) -> MemoryStore | None:
    """The store of ``layer`` (empty: the project's); None for a layer that is not there."""
    return dict(panel.layers.stores()).get(layer or "project")


def timeline_page(panel: Panel, filters: TimelineFilters) -> TimelinePage:
    """The journal lines ``filters`` keep, newest first over every layer (store thread)."""
    changes: list[Change] = []
    writers: set[str] = set(changelog.WRITERS)
    skipped = 0
    unreadable: list[str] = []
    for layer, store in panel.layers.stores():
        if filters.layer and layer != filters.layer:
            continue
        log = changelog.read(store.state_dir, filters.file or None)
        skipped += log.skipped
        unreadable += log.unreadable
        writers.update(e.writer for e in log.entries)
        changes += [Change(layer, e) for e in log.entries
                    if not filters.writer or e.writer == filters.writer]
    changes.sort(key=lambda c: c.entry.time, reverse=True)
    return TimelinePage(tuple(changes[:MAX_ROWS]), len(changes), filters,
                        tuple(sorted(writers)), tuple(n for n, _ in panel.layers.stores()),
                        skipped, tuple(unreadable))


def diff_page(layer: str, store: MemoryStore, file: str, before: str | None,
              after: str | None) -> DiffPage:
    """The unified diff between two revisions of ``file`` (None: the file did not exist
    on that side), or a sentence for each side no longer held (store thread)."""
    old, new = version_bytes(store, file, before), version_bytes(store, file, after)
    missing = tuple(f"The version {label} this change ({rev[:12]}) is no longer held: no "
                    "kept copy, snapshot or current file has those bytes any more."
                    for label, rev, data in (("before", before, old), ("after", after, new))
                    if rev is not None and data is None)
    if missing:
        return DiffPage(layer, file, before, after, (), missing)
    lines = list(difflib.unified_diff(
        _lines(old or b""), _lines(new or b""),
        fromfile=f"{file}@{before[:12]}" if before else "/dev/null",
        tofile=f"{file}@{after[:12]}" if after else "/dev/null"))
    shown = tuple(diff_line(line) for line in lines[:MAX_DIFF_LINES])
    return DiffPage(layer, file, before, after, shown, (), len(lines) > MAX_DIFF_LINES)


def version_bytes(store: MemoryStore, file: str, revision: str | None) -> bytes | None:
    """The exact bytes of ``revision`` of ``file``: b"" for None (absent on that side),
    else from a kept copy, the file now (live or archived) or a snapshot, each checked
    by sha256; None when none of them holds it (or the name or revision is not one)."""
    if revision is None:
        return b""
    if not _REVISION.fullmatch(revision):
        return None
    kept = versions.load(store.state_dir, revision)
    if kept is not None:
        return kept
    on_disk = _on_disk(store, file, revision)
    return on_disk if on_disk is not None else _in_snapshot(store, revision)


def _on_disk(store: MemoryStore, file: str, revision: str) -> bytes | None:
    try:
        name = check_name(file)  # a crafted ``file=../x`` must not read outside the folder
    except SagememError:
        return None
    for folder in (store.directory, store.archive_dir):
        try:
            data = read_regular(folder / name, store.max_bytes).data
        except SagememError:
            continue
        if revision_of(data) == revision:
            return data
    return None


def _in_snapshot(store: MemoryStore, revision: str) -> bytes | None:
    """Snapshots are content-addressed by their manifests: any file of any snapshot with
    those bytes will do (a rename since leaves the bytes the same)."""
    for snapshot in reversed(list_snapshots(store).snapshots):
        for entry in snapshot.files:
            if entry.sha256 == revision:
                try:
                    data = read_copy(snapshot, entry)
                except SagememError:
                    data = None
                if data is not None:
                    return data
    return None


def _lines(data: bytes) -> list[str]:
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def diff_line(line: str) -> DiffLine:
    text = line.rstrip("\n")
    if line.startswith(("---", "+++")):
        return DiffLine("head", text)
    kinds = {"@": "hunk", "+": "add", "-": "del"}
    return DiffLine(kinds.get(line[:1], "same"), text)
