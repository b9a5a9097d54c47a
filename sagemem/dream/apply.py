"""One planned operation applied as a guarded write — or refused, and the run goes on.

Every write goes through the paths every other writer takes (``MemoryStore.write``,
``archive_memory``, ``update_index``), so redaction, the caps, the change journal (writer
``consolidation``, the run id), kept versions and the index all follow. A memory changed
since the plan was made is refused: a rewrite or create by the guard, which records both
sides as a conflict; an archive under the archive's lock (there is no planner text to
keep). Nothing here raises for a refused operation: each becomes an ``Outcome``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SagememError, StaleRevision, WriteRefused
from ..files.paths import INDEX_FILE
from ..history.archive import archive_memory
from ..store import MemoryStore
from ..writes import changelog
from ..writes.conflicts import record_write_conflict
from .plan import Operation

WRITER = "consolidation"


@dataclass(frozen=True)
class Outcome:
    """What became of one operation: ``applied``, ``refused`` (``why``; ``conflict_id``
    when both sides were kept) or ``planned`` (a report: it would be applied)."""

    number: int
    operation: Operation
    status: str
    why: str | None = None
    conflict_id: str | None = None
    bytes: int = 0
    lines: int = 0
    after_revision: str | None = None
    fields: tuple[str, ...] = ()
    """The frontmatter fields whose values the operation changed (a rewrite): facts too,
    which "Facts no longer present" (body lines) does not list."""

    def to_json(self) -> dict[str, Any]:
        op = self.operation
        item: dict[str, Any] = {"number": self.number, "op": op.op, "file": op.file,
                                "kind": op.kind, "reason": op.reason or None,
                                "self_described": op.self_described, "status": self.status,
                                "bytes": self.bytes, "lines": self.lines}
        if op.source:
            item["source"] = list(op.source)
        if self.why is not None:
            item["why"] = self.why
        if self.conflict_id is not None:
            item["conflict_id"] = self.conflict_id
        if self.after_revision is not None:
            item["after_revision"] = self.after_revision
        if self.fields:
            item["fields_changed"] = list(self.fields)
        return item


FIELDS = ("name", "description", "type", "tags", "aliases", "baseline", "updated",
          "valid_at", "invalid_at", "superseded_by", "when", "former_names")


def fields_changed(before: str | None, after: str | None) -> tuple[str, ...]:
    """The frontmatter fields a rewrite from ``before`` to ``after`` changes."""
    if before is None or after is None or before == after:
        return ()
    from ..files.memory import parse

    old, new = parse(before.encode("utf-8"), "x.md"), parse(after.encode("utf-8"), "x.md")
    return tuple(f for f in FIELDS if getattr(old, f) != getattr(new, f))


def change_of(before: str | None, after: str | None) -> tuple[int, int]:
    """The byte and line change from one text to another (None: no file)."""
    def facts(text: str | None) -> tuple[int, int]:
        if text is None:
            return 0, 0
        data = text.encode("utf-8")
        return len(data), data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)

    (b0, l0), (b1, l1) = facts(before), facts(after)
    return b1 - b0, l1 - l0


def apply_operation(store: MemoryStore, number: int, op: Operation, *, run_id: str,
                    before: Mapping[str, str]) -> Outcome:
    """Apply ``op`` (``before``: the folder's texts when the run began, for the change)."""
    try:
        if op.op == "archive":
            archive_memory(store, op.file, op.reason, by=WRITER, run_id=run_id,
                           expected_revision=op.revision)
            after_revision = None
        elif op.file == INDEX_FILE:
            after_revision = _rewrite_index(store, op, run_id)
        else:
            assert op.text is not None
            written = store.write(op.file, op.text,
                                  None if op.op == "create" else op.revision,
                                  reason=op.reason or None, writer=WRITER, run_id=run_id)
            after_revision = written.revision
    except WriteRefused as exc:
        return Outcome(number, op, "refused", str(exc), exc.conflict_id)
    except SagememError as exc:
        return Outcome(number, op, "refused", str(exc))
    after = None if op.op == "archive" else _text_now(store, op.file)
    size, lines = change_of(before.get(op.file), after)
    fields = () if op.file == INDEX_FILE else fields_changed(before.get(op.file), after)
    return Outcome(number, op, "applied", bytes=size, lines=lines,
                   after_revision=after_revision, fields=fields)


def apply_archives(store: MemoryStore, batch: Sequence[tuple[int, Operation]], *,
                   run_id: str, before: Mapping[str, str]) -> list[Outcome]:
    """Archive operations applied together: each file moved and refused alone as one
    archive would be, MEMORY.md edited once (``history/archive_batch``)."""
    from ..history.archive_batch import ArchiveItem, archive_many

    items = [ArchiveItem(op.file, op.reason, op.revision) for _, op in batch]
    try:
        answers = archive_many(store, items, by=WRITER, run_id=run_id)
    except SagememError as exc:
        return [Outcome(number, op, "refused", str(exc)) for number, op in batch]
    outcomes = []
    for (number, op), problem in zip(batch, answers, strict=True):
        if problem is not None:
            outcomes.append(Outcome(number, op, "refused", str(problem)))
            continue
        size, lines = change_of(before.get(op.file), None)
        outcomes.append(Outcome(number, op, "applied", bytes=size, lines=lines))
    return outcomes


def _text_now(store: MemoryStore, file: str) -> str | None:
    try:
        return store.read_index()[0] if file == INDEX_FILE else store.get(file).text
    except SagememError:
        return None


def _rewrite_index(store: MemoryStore, op: Operation, run_id: str) -> str:
    """MEMORY.md replaced if still at the planned revision; else both sides recorded."""
    from ..writes.redact import redact

    assert op.text is not None and op.revision is not None
    text = redact(op.text).text
    with store.locked():
        current, revision = store.read_index()
        if revision is None or not revision.startswith(op.revision):
            conflict_id = record_write_conflict(
                store, "stale_version", INDEX_FILE, writer=WRITER, reason=op.reason or None,
                disk=(revision, current if revision else None),
                mine={"based_on": op.revision, "text": text}, run_id=run_id)
            raise StaleRevision(INDEX_FILE, op.revision, revision, conflict_id)
        update = store.update_index(lambda _: text)
        if update is not None:
            changelog.record(store.state_dir, INDEX_FILE, "write", writer=WRITER,
                             reason=op.reason or None,
                             before=changelog.facts_of(update.before.encode("utf-8")),
                             after=changelog.facts_of(text.encode("utf-8")), run=run_id)
    store.notice_change()
    return update.after_revision if update is not None else revision
