"""Saving the same thing twice updates it: ``remember`` decides update-or-create before
anything is written (issue 16).

An agent that saves "API address" in every session must not leave ten copies of it, and
one that saves "backend API address" beside "frontend API address" must not overwrite
the other. So, over the live memories of the store it is given (one layer):

- an **identical title** — the ``name`` field, or one of its ``former_names`` (a title
  it had before a rename), equal after ``fold`` — with the same ``when`` → that memory
  is **updated** (the body replaced, the fields given set, the others kept, the name
  kept). ``aliases`` never match: they are words that should retrieve a memory ("cat"
  for "家里的猫"), not titles it had, and saving "cat" over it would replace the body;
- a title only **similar** (``similarity`` of the names at least ``SIMILAR_AT``,
  ``similar.py``) → **nothing is written**: the result names the close match, so the
  caller updates that one or saves again with ``distinct``. Similarity alone never
  merges;
- otherwise → a **new** memory (a file name taken by another memory gets a suffix).

``decide`` is the pure decision over a listing (table-tested); ``remember`` reads the
store, decides, and makes one guarded write: an update is based on the revision just
read, so a change landing meanwhile is refused as ``StaleRevision`` with both sides kept
in a conflict record, never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, Protocol

from ..errors import InvalidName, NearDuplicate
from ..files import indexfile
from ..files.fields import TYPES
from ..files.memory import Memory
from ..files.paths import file_name_for
from .close_titles import M, candidates
from .close_titles import similarity as similarity
from .similar import SIMILAR_AT, fold
from .title_cache import live_cards

if TYPE_CHECKING:
    from ..files.folder import Listing
    from .guard import Required

Kind = Literal["exact", "former_title", "similar", "new"]
Action = Literal["created", "updated", "unchanged", "similar"]


@dataclass(frozen=True)
class Decision(Generic[M]):
    """What ``decide`` found: ``memory`` is the match (None for ``new``), ``score`` its
    similarity (100 for a title or former title that is identical); ``also``, the other
    files that hold the identical title when several do (then ``similar``)."""

    kind: Kind
    memory: M | None = None
    score: float = 0.0
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class RememberResult:
    """What ``remember`` did. ``memory`` is the memory as written (``created``,
    ``updated``), as it already was (``unchanged``), or the close match nothing was
    written over (``similar``: update that file, or save again with ``distinct``). With
    ``also`` (other files holding the identical title) ``distinct`` cannot help: update
    the one meant by its file, or rename the others."""

    action: Action
    memory: Memory
    kind: Kind
    score: float = 0.0
    previous_revision: str | None = None
    also: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        return self.memory.file


class Store(Protocol):
    """What ``remember`` needs of a store (``MemoryStore`` is one): ``writes`` sits
    below the store, so it names the methods rather than importing the class."""

    directory: Path
    state_dir: Path
    max_bytes: int

    def files(self, archived: bool = False) -> list[str]: ...

    def list(self, *, active: bool = False, today: date | None = None) -> Listing: ...

    def existing_name(self, name: str, *, archived: bool = False) -> str | None: ...

    def write(self, name: str, content: str | None = None,
              expected_revision: str | Required | None = ..., *,
              reason: str | None = None, writer: str = "library") -> Memory: ...

    def check_index_room(self, line: str) -> None: ...

    def index_hook(self, file: str) -> str | None: ...

    def set_index_hook(self, file: str, hook: str) -> bool: ...


# -- the decision ---------------------------------------------------------------------

def same_when(a: str | None, b: str | None) -> bool:
    """Both absent, or equal once folded: ``when`` names the occasion (a meeting's date)."""
    return (fold(a) if a else None) == (fold(b) if b else None)


def decide(memories: Iterable[M], title: str, *, description: str | None = None,
           when: str | None = None, distinct: bool = False,
           threshold: float = SIMILAR_AT) -> Decision[M]:
    """Update, ask or create: an identical name, then an identical former name, then the
    closest title at ``threshold`` or above (``new`` instead with ``distinct``),
    else ``new``. Only memories with the same ``when`` take part: a different ``when`` is
    another occasion. Two memories holding the identical name answer ``similar`` (100),
    since updating either would be a guess."""
    wanted = fold(title)
    same = [m for m in memories if same_when(m.when, when)]
    named = [m for m in same if m.name is not None and fold(m.name) == wanted]
    if len(named) == 1:
        return Decision("exact", named[0], 100.0)
    if len(named) > 1:
        return Decision("similar", named[0], 100.0, tuple(m.file for m in named[1:]))
    former = [m for m in same if any(fold(f) == wanted for f in m.former_names)]
    if len(former) == 1:
        return Decision("former_title", former[0], 100.0)
    if len(former) > 1:
        return Decision("similar", former[0], 100.0, tuple(m.file for m in former[1:]))
    if distinct or not same:
        return Decision("new")
    score, closest = max(candidates(same, title, description, threshold),  # close_titles.py
                         key=lambda pair: pair[0], default=(0.0, None))
    return Decision("similar", closest, score) if closest is not None and score >= threshold \
        else Decision("new")


def refuse_near_duplicate(store: Store, title: str, *, description: str | None = None,
                          when: str | None = None, today: date | None = None) -> None:
    """Refuse (``NearDuplicate``) to create a memory titled ``title`` beside the one
    ``decide`` finds — the same name or former name, or a close title: what ``remember``
    would update or ask about. ``new`` and the memory tool's ``create`` call it before
    writing, so no surface writes a second copy of a memory without being told."""
    cards = live_cards(store, today or date.today())  # title_cache.py: changed files only
    found = decide(cards, " ".join(title.split()), description=description, when=when)
    if found.memory is not None:
        raise NearDuplicate(title, found.memory.file, found.memory.title, found.score)


# -- remembering ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Asked:
    """A ``remember`` call's arguments, as the write needs them."""

    type: str
    title: str
    body: str
    description: str | None
    when: str | None
    tags: Sequence[str] | None
    aliases: Sequence[str] | None
    writer: str
    reason: str | None
    today: date


def remember(store: Store, *, type: str, title: str, body: str,
             description: str | None = None, when: str | None = None,
             tags: Sequence[str] | None = None, aliases: Sequence[str] | None = None,
             distinct: bool = False, writer: str = "library", reason: str | None = None,
             today: date | None = None) -> RememberResult:
    """Update the memory this title already names, or create one — never a second copy
    of it, and never over a memory only similar (``similar``: nothing written)."""
    if type not in TYPES:
        raise InvalidName(type, f"type must be one of {', '.join(TYPES)}")
    from .redact import redact  # before the file name is made from the title, or matched

    title, body = redact(title).text, redact(body).text
    description, when = (None if t is None else redact(t).text for t in (description, when))
    tags, aliases = ([redact(t).text for t in ts] if ts is not None else None
                     for ts in (tags, aliases))
    if not fold(title):
        raise InvalidName(title, "a memory needs a title")
    if not any(c.isalnum() for c in title):  # refused before anything is read or written
        raise InvalidName(title, "the title has no letter or digit to make a file name "
                                 "of; add a word to it")
    asked = _Asked(type, " ".join(title.split()), body, _one_line(description),
                   _one_line(when), tags, aliases, writer, reason, today or date.today())
    listing = store.list(active=True, today=asked.today)
    decision = decide(listing.memories, asked.title, description=asked.description,
                      when=asked.when, distinct=distinct)
    if decision.kind == "new":
        return RememberResult("created", _create(store, asked, listing), "new")
    assert decision.memory is not None
    if decision.kind == "similar":
        return RememberResult("similar", decision.memory, "similar", decision.score,
                              also=decision.also)
    return _update(store, asked, decision)


def _one_line(text: str | None) -> str | None:
    return " ".join(text.split()) or None if text is not None else None


def _create(store: Store, asked: _Asked, listing: Listing) -> Memory:
    """A new memory under a file name no memory has (the guard's create gives it its
    MEMORY.md line); the write refuses (``MemoryExists``) a name another writer takes meanwhile."""
    from ..files.edit import render_new  # ruamel.yaml is only needed to write

    fields = {
        "name": asked.title,
        "description": asked.description or asked.title,
        "type": asked.type,
        "tags": list(asked.tags or ()),
        "aliases": list(asked.aliases or ()),
        "when": _when_value(asked.when),
        "updated": asked.today,
    }
    taken = {m.file.casefold() for m in listing.memories}
    taken |= {e.file.casefold() for e in listing.errors}
    file = free_file_name(file_name_for(asked.type, asked.title), asked.when,
                          lambda f: f.casefold() in taken or store.existing_name(f) is not None)
    store.check_index_room(indexfile.format_entry(asked.title, file,
                                                  str(fields["description"])))
    return store.write(file, render_new(fields, asked.body), None, reason=asked.reason,
                       writer=asked.writer)  # a create: the guard adds the MEMORY.md line


def free_file_name(file: str, when: str | None, taken: Callable[[str], bool]) -> str:
    """``file``, else with the ``when`` as a suffix (``project_standup_2026_12_01.md``:
    two dated notes of one title), else with ``_2``, ``_3``… — the first not taken."""
    from ..files.paths import slugify

    stem = file[:-3]
    stems = [stem] + ([f"{stem}_{slugify(when)}"] if when and slugify(when) else [])
    for candidate in stems:
        if not taken(f"{candidate}.md"):
            return f"{candidate}.md"
    n = 2
    while taken(f"{stems[-1]}_{n}.md"):
        n += 1
    return f"{stems[-1]}_{n}.md"


def _when_value(when: str | None) -> object:
    """A ``when`` that is a date is written as one (``when: 2026-12-01``), else as text."""
    if when is not None and len(when) == 10:
        try:
            return date.fromisoformat(when)
        except ValueError:
            pass
    return when


def _update(store: Store, asked: _Asked, decision: Decision[Memory]) -> RememberResult:
    """Replace the body and set the fields given, as a guarded write based on the
    revision just read; the name stays (a former name matched stays one)."""
    from ..files.edit import set_fields

    current = decision.memory
    assert current is not None
    head = current.text[:len(current.text) - len(current.body)]
    text = set_fields(head + _body(asked.body, head), _changes(asked, current), current.file)
    if text == current.text:
        return RememberResult("unchanged", current, decision.kind, decision.score)
    text = set_fields(text, {"updated": asked.today}, current.file)
    saved = store.write(current.file, text, current.revision, reason=asked.reason,
                        writer=asked.writer)
    _follow_description(store, current, saved)
    return RememberResult("updated", saved, decision.kind, decision.score, current.revision)


def _body(body: str, head: str) -> str:
    """The body as ``new`` writes it: a blank line after the frontmatter, one newline at
    the end, in the file's own line ending."""
    newline = "\r\n" if head.endswith("\r\n") else "\n"
    if not body.strip():
        return ""
    text = newline.join(body.strip("\r\n").splitlines()) + newline
    return (newline + text) if head else text


def _changes(asked: _Asked, current: Memory) -> Mapping[str, object]:
    """The fields an update sets: those given. Aliases are added to, never dropped: a
    retrieval word someone chose stays until they remove it."""
    changes: dict[str, object] = {}
    if asked.description is not None:
        changes["description"] = asked.description
    if asked.type != current.type:
        changes["type"] = asked.type
    if asked.tags is not None:
        changes["tags"] = list(asked.tags)
    if asked.aliases:
        known = {fold(a) for a in current.aliases}
        added = [a for a in asked.aliases if fold(a) not in known]
        if added:
            changes["aliases"] = [*current.aliases, *added]
    return changes


def _follow_description(store: Store, before: Memory, after: Memory) -> None:
    """A MEMORY.md line that said the old description says the new one; a hook a person
    wrote differently is theirs and stays."""
    if after.description == before.description:
        return
    hook = store.index_hook(after.file)
    if hook is not None and indexfile.hook_matches(hook, before.description):
        store.set_index_hook(after.file, after.description)
