"""What an import would do with each thing a Batch offers, decided before anything is
written, so ``--dry-run`` and the real import say the same.

The rules, in the order they apply to one ``Incoming``:

1. a name the folder cannot take (``check_new_name``), or one the batch already used
   (compared like every name, ``name_key``), is skipped;
2. the same name holding the same text (after redaction, which every write applies) —
   live or archived here — is ``unchanged``: importing twice changes nothing;
3. the same name holding another text is a ``conflict`` (merge: a record in the conflict
   queue, never an overwrite) or an ``overwrite`` (replace; a locked memory is skipped);
4. another tool's new name whose body is, word for word, the body of another memory
   here or of one the batch creates first is skipped as a duplicate: those are notes
   made into memories for the first time, and the same fact twice is noise. Only exact
   duplicates: the near-duplicate title check of ``remember`` would refuse the versions
   a folder legitimately keeps side by side (``deploy_process`` beside
   ``deploy_process_v1``). Never for an export (``EXPORT_SOURCE``): those are memories
   already, and an export of a folder must come back whole — two memories of one body
   included;
5. anything else is a ``create`` — unless its name holds a secret
   (``refuse_secret_name``), which the store's create would refuse: skipped.

Replace then archives every live memory the batch does not name (never deletes it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InvalidName, SagememError
from ..files.memory import Memory, parse
from ..files.paths import check_new_name, name_key, with_suffix
from ..store import MemoryStore
from ..writes.redact import redact_memory, refuse_secret_name
from .incoming import EXPORT_SOURCE, Batch, Incoming, Skipped

MODES = ("merge", "replace")
ACTIONS = ("create", "unchanged", "conflict", "overwrite")


@dataclass(frozen=True)
class Step:
    """One Incoming and what the import does with it; ``current`` is the memory of that
    name here (None for a create); ``text`` is what would be written (redacted)."""

    action: str
    item: Incoming
    file: str
    text: str
    current: Memory | None = None


@dataclass(frozen=True)
class Plan:
    """Every step, what is skipped and why, and (replace) the live memories to archive."""

    batch: Batch
    mode: str
    steps: tuple[Step, ...]
    skipped: tuple[Skipped, ...]
    to_archive: tuple[str, ...] = ()


def plan_import(store: MemoryStore, batch: Batch, mode: str = "merge") -> Plan:
    """Decide every item of ``batch`` against ``store`` as it is now (nothing written)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    here = _memories(store) if _exists(store) else {}  # a new folder: all is a create
    # the bodies a create may not repeat; None for an export, taken whole (rule 4)
    bodies = None if batch.source == EXPORT_SOURCE else {
        _body_key(m.body): m.file for m in here.values() if _body_key(m.body)}
    steps: list[Step] = []
    skipped = list(batch.skipped)
    seen: set[str] = set()
    for item in batch.items:
        decided = _decide(store, item, mode, here, bodies, seen)
        if isinstance(decided, Skipped):
            skipped.append(decided)
            continue
        steps.append(decided)
        if (bodies is not None and decided.action == "create"
                and (key := _body_key(parse_body(decided)))):
            bodies[key] = decided.file
    to_archive = _not_named(store, seen, here) if mode == "replace" else ()
    return Plan(batch, mode, tuple(steps), tuple(skipped), to_archive)


def _decide(store: MemoryStore, item: Incoming, mode: str, here: dict[str, Memory],
            bodies: dict[str, str] | None, seen: set[str]) -> Step | Skipped:
    try:
        file = check_new_name(with_suffix(item.name), store.reserved)
    except InvalidName as exc:
        return Skipped(item.origin, str(exc))
    if name_key(file) in seen:
        return Skipped(item.origin, f"{file} comes twice in this import; the first is taken")
    seen.add(name_key(file))
    text = redact_memory(item.text).text
    current = here.get(name_key(file))
    if current is not None:
        return _against(item, current, text, mode)
    try:  # the store's create refuses it too; said here, a dry run says the same
        refuse_secret_name(file)
    except InvalidName as exc:
        return Skipped(item.origin, str(exc))
    step = Step("create", item, file, text)
    if bodies is not None and (key := _body_key(parse_body(step))) in bodies:
        return Skipped(item.origin, f"its body is the same as {bodies[key]}'s")
    return step


def _against(item: Incoming, current: Memory, text: str, mode: str) -> Step | Skipped:
    """The same name is here already: unchanged, a conflict, or (replace) an overwrite."""
    moved = current.archived != item.archived  # replace also moves it where the source has it
    if current.text == text and not (mode == "replace" and moved):
        return Step("unchanged", item, current.file, text, current)
    if mode == "merge":
        return Step("conflict", item, current.file, text, current)
    return Step("overwrite", item, current.file, text, current)


def parse_body(step: Step) -> str:
    """The body of a step's text (a text that does not parse counts as all body)."""
    try:
        return parse(step.text.encode("utf-8"), step.file).body
    except SagememError:
        return step.text


def _body_key(body: str) -> str:
    return " ".join(body.split())


def _exists(store: MemoryStore) -> bool:
    """Whether the folder is there (a path that is no folder is DirectoryMissing); a
    missing one is what ``apply_batch`` creates, so the plan sees it empty."""
    if not os.path.lexists(store.directory):
        return False
    store.require_directory()
    return True


def _memories(store: MemoryStore) -> dict[str, Memory]:
    """Every memory here, live and archived, by ``name_key`` (a live one wins)."""
    listing = store.list(include_archived=True)
    found: dict[str, Memory] = {}
    for memory in sorted(listing.memories, key=lambda m: not m.archived):
        found.setdefault(name_key(memory.file), memory)
    return found


def _not_named(store: MemoryStore, seen: set[str], here: dict[str, Memory]
               ) -> tuple[str, ...]:
    return tuple(sorted(m.file for key, m in here.items()
                        if not m.archived and key not in seen))
