"""One memory's screen: its fields, revision, parse problems and body; an edit form that
saves as a guarded write against the revision it opened; lock, archive, restore; its
history (journal lines, kept versions) with revert.

One address, ``/memory/{layer}/{file}``: GET shows it (``?confirm=archive`` or
``?confirm=revert&to=REV`` shows the confirmation a dangerous action takes first), POST
acts (``do=save|lock|unlock|archive|restore|revert``), then redirects back. The file part
is taken whole (``{file:path}``) so that ``../x`` reaches the library's own name check
(``check_name``) and is refused there, never joined onto a path here.

A save composes the text the user meant from the text the form opened (carried in the
form, checked against its revision): only the fields changed are set, the body replaced.
A file that moved on meanwhile is refused by the store's guard, which records both
sides; the page shows them and the record's id, and the file keeps the disk text.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import (
    AmbiguousName,
    InvalidName,
    MemoryNotFound,
    SagememError,
    StaleRevision,
    UnsafeFile,
    WriteRefused,
)
from ..files.body import in_line_endings, with_body
from ..files.controls import visible
from ..files.edit import set_fields
from ..files.fields import TYPES
from ..files.memory import Memory, parse
from ..files.paths import check_name, name_key, with_suffix
from ..files.revision import revision_of
from ..history.archive import archive_memory, restore_memory
from ..history.locks import lock_memory, locked_names, unlock_memory
from ..history.revisions import Version, revert, versions_of
from ..store import MemoryStore
from ..writes import changelog, conflicts
from .health import HealthCache

if TYPE_CHECKING:
    from .app import Panel

WRITER = "ui"
JOURNAL_LINES = 50  # the newest; the Timeline screen has them all
TEXT_FIELDS = {"type": 40, "name": 400, "description": 2000, "tags": 4000, "aliases": 4000,
               "valid_at": 40, "invalid_at": 40, "superseded_by": 300}
"""The fields the edit form offers, each with the length it accepts."""
LIST_FIELDS = ("tags", "aliases")
DATE_FIELDS = ("valid_at", "invalid_at")
DONE = {"saved": "Saved.", "unchanged": "Nothing changed: the file is as it was.",
        "locked": "Locked: it is never archived or purged.", "unlocked": "Unlocked.",
        "archived": "Archived: moved into archive/, its MEMORY.md line dropped.",
        "restored": "Restored: back at the top level, with its MEMORY.md line.",
        "reverted": "Reverted: the earlier version is back; the text it replaced is kept."}
"""The messages a redirect names by key (never text taken from the request)."""


class Refused(Exception):
    """A request the screen answers with a page of its own (missing, unsafe, invalid)."""

    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


@dataclass(frozen=True)
class MemoryView:
    """Everything the memory page shows, read on the store thread."""

    layer: str
    memory: Memory
    locked: bool
    journal: tuple[changelog.Entry, ...]
    versions: tuple[Version, ...]
    history_note: str
    opened: str  # the text as read, base64, so a save knows exactly what it changed
    body_editable: bool
    body_text: str  # the body as the form shows it (``editable_body``)
    types: tuple[str, ...] = TYPES
    problems: int = 0
    conflicts: int = 0


@dataclass(frozen=True)
class Stale:
    """A refused save: both sides and the record holding them."""

    conflict_id: str | None
    disk: str
    mine: str


@dataclass
class Form:
    values: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, limit: int = 200) -> str:
        return self.values.get(key, "")[:limit]


def routes(panel: Panel) -> list[Route]:
    cache = panel.health  # one audit per folder change for every screen

    async def show(request: Request) -> Response:
        return await _answer(panel, request, lambda: _get(panel, cache, request))

    async def act(request: Request) -> Response:
        form = Form({k: v for k, v in (await request.form()).items() if isinstance(v, str)})
        return await _answer(panel, request, lambda: _post(panel, cache, request, form))

    return [Route("/memory/{layer}/{file:path}", show, methods=["GET"]),
            Route("/memory/{layer}/{file:path}", act, methods=["POST"])]


async def _answer(panel: Panel, request: Request,
                  handler: Callable[[], Awaitable[Response]]) -> Response:
    try:
        return await handler()
    except Refused as exc:
        return panel.page(request, "memory_refused.html", status=exc.status,
                          message=exc.message, screen="memory",
                          heading="Not found" if exc.status == 404 else "Refused")


# -- reading ------------------------------------------------------------------------------

def _store(panel: Panel, layer: str) -> MemoryStore:
    stores = dict(panel.layers.stores())
    if layer not in stores:
        raise Refused(404, f"There is no {visible(layer)!r} layer in this panel.")
    return stores[layer]


def _memory(store: MemoryStore, layer: str, file: str) -> Memory:
    """The memory ``file`` names, live or archived, through the store's own checks."""
    try:
        file = check_name(with_suffix(file), store.reserved)
        try:
            return store.get(file)
        except MemoryNotFound as exc:
            if not exc.archived:
                raise
            return store.get(file, archived=True)
    except MemoryNotFound:
        raise Refused(404, f"No memory named {visible(file)!r} in the {layer} layer: it "
                           "may have been renamed or deleted. The Files screen lists "
                           "them all.") from None
    except (InvalidName, UnsafeFile, AmbiguousName) as exc:
        raise Refused(400, f"Refused: {visible(str(exc))}") from None


def memory_view(store: MemoryStore, layer: str, file: str) -> MemoryView:
    """The page's data for ``file`` (on the store thread)."""
    memory = _memory(store, layer, file)
    journal = changelog.read(store.state_dir, memory.file).entries[:JOURNAL_LINES]
    held: tuple[Version, ...] = ()
    note = "Archived: restore it to see and revert its versions." if memory.archived else ""
    if not memory.archived:
        try:
            held = versions_of(store, memory.file).versions
        except SagememError as exc:
            note = f"Its versions could not be read: {exc}"
    return MemoryView(layer, memory, name_key(memory.file) in locked_names(store), journal,
                      held, note, base64.b64encode(memory.text.encode()).decode(),
                      visible(memory.body) == memory.body, editable_body(memory))


async def _get(panel: Panel, cache: HealthCache, request: Request) -> Response:
    layer, file = request.path_params["layer"], request.path_params["file"]
    store = _store(panel, layer)
    view = await panel.run(_view, panel, cache, store, layer, file)
    confirm = request.query_params.get("confirm", "")
    if confirm == "archive" and not view.memory.archived:
        return _page(panel, request, "memory_confirm.html", view, action="archive")
    if confirm == "revert":
        version = _version(view, request.query_params.get("to", ""))
        return _page(panel, request, "memory_confirm.html", view, action="revert",
                     version=version)
    done = DONE.get(request.query_params.get("done", ""), "")
    return _page(panel, request, "memory.html", view, done=done)


def _view(panel: Panel, cache: HealthCache, store: MemoryStore, layer: str,
          file: str) -> MemoryView:
    view = memory_view(store, layer, file)
    return _with_health(panel, cache, view)


def _with_health(panel: Panel, cache: HealthCache, view: MemoryView) -> MemoryView:
    problems = conflicts_open = 0
    for _, store in panel.layers.stores():
        health = cache.health(store)
        problems, conflicts_open = problems + health.problems, \
            conflicts_open + health.open_conflicts
    return MemoryView(**{**vars(view), "problems": problems, "conflicts": conflicts_open})


def _version(view: MemoryView, to: str) -> Version:
    matches = [v for v in view.versions if to and v.revision.startswith(to) and not v.current]
    if len(matches) != 1:
        raise Refused(404, f"{visible(view.memory.file)} holds no earlier version "
                           f"{visible(to[:64])!r}; its history lists those it can go back to.")
    return matches[0]


def _page(panel: Panel, request: Request, template: str, view: MemoryView,
          status: int = 200, **context: Any) -> HTMLResponse:
    return panel.page(request, template, status=status, view=view, m=view.memory,
                      screen="memory", problems=view.problems, conflicts=view.conflicts,
                      **context)


# -- acting -------------------------------------------------------------------------------

async def _post(panel: Panel, cache: HealthCache, request: Request, form: Form) -> Response:
    layer, file = request.path_params["layer"], request.path_params["file"]
    store = _store(panel, layer)
    view = await panel.run(_view, panel, cache, store, layer, file)
    action = form.get("do", 20)
    if action not in ACTIONS:
        raise Refused(400, "Unknown action: the page's own buttons are the ones to use.")
    if action in CONFIRMED_HERE and form.get("confirm", 10) != "yes":
        step = await panel.run(_second_step, view.memory, action, form)
        return _page(panel, request, "memory_step.html", view, action=action, step=step)
    try:
        outcome = await panel.run(ACTIONS[action], store, view.memory, form)
    except ReasonMissing as exc:
        return _page(panel, request, "memory_confirm.html", view, status=400,
                     action="archive", error=str(exc))
    except StaleRevision as exc:
        fresh = await panel.run(_view, panel, cache, store, layer, file)
        if action != "save":
            return _page(panel, request, "memory.html", fresh, status=409, error=(
                f"{view.memory.file} changed since you opened it, so nothing was done; "
                "the page now shows it as it is."))
        stale = await panel.run(_stale, store, view.memory, form, exc)
        return _page(panel, request, "memory_conflict.html", fresh, status=409,
                     stale=stale)
    except SagememError as exc:  # locked, a name taken in archive/, a field not editable
        fresh = await panel.run(_view, panel, cache, store, layer, file)
        return _page(panel, request, "memory.html", fresh, status=409,
                     error=f"Nothing was done: {exc}")
    return RedirectResponse(f"{request.url.path}?done={outcome}", status_code=303)


CONFIRMED_HERE = ("save", "lock", "unlock", "restore")
"""Actions whose first POST shows what will change and posts again with ``confirm=yes``
(archive and revert have their own confirmation pages, reached before any POST)."""


@dataclass(frozen=True)
class Step:
    """The confirmation of one action: what it changes, and the form to post again."""

    says: str
    diff: str
    values: dict[str, str]


def _second_step(memory: Memory, action: str, form: Form) -> Step:
    """What ``action`` will change, in words (and, for a save, the diff)."""
    values = {k: v for k, v in form.values.items() if k != "confirm"}
    if action != "save":
        says = {"lock": f"Lock {memory.file}: it will never be archived or purged.",
                "unlock": f"Unlock {memory.file}: it may be archived again.",
                "restore": f"Restore {memory.file} from archive/ to the folder and "
                           "MEMORY.md."}[action]
        return Step(visible(says), "", values)
    opened = _opened(form, memory.file)
    mine = composed(opened, form)
    import difflib

    diff = "".join(difflib.unified_diff(opened.text.splitlines(keepends=True),
                                        mine.splitlines(keepends=True),
                                        f"{memory.file} (as you opened it)",
                                        f"{memory.file} (as you will save it)"))
    return Step(visible(f"Save {memory.file} (a guarded write against revision "
                        f"{opened.revision[:12]})."), diff or "No change.", values)


class ReasonMissing(Exception):
    """An archive asked for without a reason (archive.jsonl records why)."""


def _save(store: MemoryStore, memory: Memory, form: Form) -> str:
    if memory.archived:
        raise Refused(409, f"{visible(memory.file)} is archived: restore it before editing.")
    opened = _opened(form, memory.file)
    mine = composed(opened, form)
    if mine == opened.text:
        return "unchanged"
    store.write(opened.file, mine, expected_revision=opened.revision, writer=WRITER,
                reason="edited in the panel")
    return "saved"


def _opened(form: Form, file: str) -> Memory:
    """The text the form opened, as it was; refused when it is not what it claims."""
    try:
        data = base64.b64decode(form.get("opened", 10_000_000), validate=True)
    except (binascii.Error, ValueError):
        raise Refused(400, "The form did not carry the text it opened; open the memory "
                           "again and repeat the edit.") from None
    if revision_of(data) != form.get("revision", 80):
        raise Refused(400, "The form's text does not match its revision; open the memory "
                           "again and repeat the edit.")
    return parse(data, file)


def composed(opened: Memory, form: Form) -> str:
    """The text the user meant: ``opened`` with the fields they changed set and, when the
    form carried one, its body."""
    changes = {key: value for key, value in _fields(form).items()
               if value != _current(opened, key)}
    text = set_fields(opened.text, changes, opened.file) if changes else opened.text
    body = form.values.get("body")
    if body is None or in_line_endings(body, "\n") == editable_body(opened):
        return text
    return with_body(parse(text.encode(), opened.file), body)


def editable_body(memory: Memory) -> str:
    """The body in LF line endings without the newline that ends the file, which
    ``with_body`` puts back: an unchanged form gives back the very same bytes."""
    body = in_line_endings(memory.body, "\n")
    return body[:-1] if body.endswith("\n") and memory.text.endswith("\n") else body


def _fields(form: Form) -> dict[str, object]:
    """The fields the form sent (one it left out, as for a value holding control
    characters, stays as it is); an emptied one is removed."""
    fields: dict[str, object] = {}
    for key, limit in TEXT_FIELDS.items():
        text = form.get(key, limit).strip()
        if key in LIST_FIELDS:
            fields[key] = [t.strip() for t in text.split(",") if t.strip()] or None
        elif key in DATE_FIELDS:
            fields[key] = _date(key, text)
        else:
            fields[key] = text or None
    return {key: value for key, value in fields.items() if key in form.values}


def _date(key: str, text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        raise Refused(400, f"{key} must be a date written YYYY-MM-DD, "
                           f"not {visible(text)!r}.") from None


def _current(memory: Memory, key: str) -> object:
    value = getattr(memory, key)
    if key in LIST_FIELDS:
        return list(value) or None
    return value or None


def _stale(store: MemoryStore, memory: Memory, form: Form, exc: WriteRefused) -> Stale:
    """Both sides of a refused save, from the conflict record the guard wrote."""
    if exc.conflict_id is not None:
        record = conflicts.load(store.state_dir, exc.conflict_id)
        disk, mine = record.side("disk").get("text"), record.side("mine").get("text")
        if isinstance(disk, str) and isinstance(mine, str):
            return Stale(exc.conflict_id, disk, mine)
    return Stale(exc.conflict_id, memory.text, composed(_opened(form, memory.file), form))


def _lock(store: MemoryStore, memory: Memory, _form: Form) -> str:
    lock_memory(store, memory.file, by=WRITER)
    return "locked"


def _unlock(store: MemoryStore, memory: Memory, _form: Form) -> str:
    unlock_memory(store, memory.file, by=WRITER)
    return "unlocked"


def _archive(store: MemoryStore, memory: Memory, form: Form) -> str:
    reason = form.get("reason", 500).strip()
    if not reason:
        raise ReasonMissing("An archive needs a reason: it is recorded in archive.jsonl, "
                            "so whoever restores it later knows why it went. Nothing was "
                            "archived.")
    archive_memory(store, memory.file, reason, by=WRITER,
                   expected_revision=form.get("revision", 80) or None)
    return "archived"


def _restore(store: MemoryStore, memory: Memory, _form: Form) -> str:
    restore_memory(store, memory.file, reason="restored in the panel", by=WRITER)
    return "restored"


def _revert(store: MemoryStore, memory: Memory, form: Form) -> str:
    if memory.revision != form.get("revision", 80):  # revert reads the file itself
        raise StaleRevision(memory.file, form.get("revision", 80), memory.revision)
    revert(store, memory.file, form.get("to", 80), reason="reverted in the panel",
           writer=WRITER)
    return "reverted"


ACTIONS: dict[str, Callable[[MemoryStore, Memory, Form], str]] = {
    "save": _save, "lock": _lock, "unlock": _unlock, "archive": _archive,
    "restore": _restore, "revert": _revert}
"""Each POST's ``do``: a function on the store thread returning a ``DONE`` key."""
