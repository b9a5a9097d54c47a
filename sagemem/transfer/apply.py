"""The one apply path of every import: a Batch (an export, another tool's notes) goes
into the folder through the store's guarded writes — redaction, size, caps, the index
line — and nothing already here is overwritten in a merge.

Before the first write an ``auto`` snapshot is taken (``history/snapshots.py``), so an
import killed half way, or one regretted, is undone with ``sagemem rollback ID --scope
all``; a merge killed half way is also finished by running it again, since it is
idempotent (every memory it already made is ``unchanged`` the second time). The new
memories are made by one ``create_many`` (``history/create_batch.py``): each gets the
checks of a guarded create, under one lock, with one MEMORY.md edit per group, and a
kill mid-way is finished by ``sagemem recover`` (each made file gets its index line).

The index: when the folder holds no memory and its MEMORY.md is the starter one (or
missing), an export's MEMORY.md is written as it is, so an export imported into a fresh
``sagemem init`` gives byte-identical files; ``replace`` writes it as it is too (the
folder is made to match the export); otherwise each created memory gets its own line,
as every create does, and the rest of the index is left alone.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import SagememError
from ..files import indexfile
from ..files.init import init_directory
from ..history import journal
from ..history.archive import archive_memory, restore_memory
from ..history.archive_batch import ArchiveItem, archive_many
from ..history.create_batch import create_many
from ..history.locks import lock_memory, locked_names
from ..history.snapshots import create_snapshot
from ..search.progress import Progress, named
from ..store import MemoryStore
from ..writes import conflicts
from ..writes.resolve import resolve_applied
from .incoming import Batch, Skipped, grouped_notes
from .plan import Plan, Step, plan_import
from .report import ImportReport, Placed

if TYPE_CHECKING:
    from pathlib import Path

    from ..files.memory import Memory


def apply_batch(store: MemoryStore, batch: Batch, *, mode: str = "merge",
                dry_run: bool = False, writer: str = "library", snapshot_keep: int = 20,
                now: datetime | None = None, progress: Progress | None = None
                ) -> ImportReport:
    """Import ``batch`` into ``store``: ``merge`` (the default) creates what is new and
    records a conflict for every name that holds another text here; ``replace`` also
    overwrites those and archives the live memories the batch does not name. With
    ``dry_run`` the report says what would happen and nothing is written. A memory
    folder that does not exist yet is created first, as ``sagemem init`` creates it
    (a newcomer's first command in a new project may be an import); a dry run only
    says it would be. ``progress`` is told of the rollback point's copies
    (``"snapshot"``) and the new memories (``"importing"``)."""
    plan = plan_import(store, batch, mode)
    new_folder = not os.path.lexists(store.directory)
    if dry_run:
        return _preview(plan, store.directory if new_folder else None)
    if new_folder:
        init_directory(store.directory, store.state_dir)
    journal.require_none_pending(store.state_dir)
    # A conflict record changes no memory: only creates, overwrites and archives need
    # a way back.
    writes = [s for s in plan.steps if s.action in ("create", "overwrite")] or plan.to_archive
    copy_index = _index_to_copy(store, plan)
    snapshot = None
    if writes or copy_index:
        snapshot = create_snapshot(store, kind="auto", keep=snapshot_keep, now=now,
                                   label=f"before import from {batch.source}",
                                   progress=named(progress, "snapshot")).id
    run = _Run(store, batch.source, writer, now, progress)
    if new_folder:
        run.notes.append(f"created the memory folder {store.directory} (as sagemem init "
                         "does) and its state directory")
    run.create_all([s for s in plan.steps if s.action == "create"])
    for step in plan.steps:
        if step.action != "create":
            run.step(step)
    for file in plan.to_archive:
        run.archive_absent(file)
    if copy_index:
        run.copy_index(batch.index or "", plan.skipped)
    return run.report(plan, snapshot)



def _preview(plan: Plan, new_folder: Path | None) -> ImportReport:
    created = () if new_folder is None else (
        f"would create the memory folder {new_folder}, as sagemem init does",)
    placed = {action: tuple(_placed(s) for s in plan.steps if s.action == action)
              for action in ("create", "unchanged", "conflict", "overwrite")}
    return ImportReport(plan.batch.source, plan.mode, True, placed["create"],
                        placed["unchanged"], placed["conflict"], placed["overwrite"],
                        plan.to_archive, plan.skipped, (*created, *plan.batch.notes))


def _placed(step: Step, conflict_id: str | None = None) -> Placed:
    return Placed(step.file, step.item.origin, step.item.archived, step.item.locked,
                  conflict_id)


def _starter_index(store: MemoryStore) -> bool:
    """No memory here, live or archived, and MEMORY.md missing or the starter text."""
    text, _ = store.read_index()
    return text == indexfile.INDEX_HEADER and not store.files() and not store.files(True)


def _index_to_copy(store: MemoryStore, plan: Plan) -> bool:
    """Whether the source's MEMORY.md is written as it is (see the module docstring)."""
    if plan.batch.index is None or store.read_index()[0] == plan.batch.index:
        return False
    return plan.mode == "replace" or _starter_index(store)


class _Run:
    """One import being applied: each step's outcome, gathered for the report."""

    def __init__(self, store: MemoryStore, source: str, writer: str,
                 now: datetime | None, progress: Progress | None = None) -> None:
        self.store, self.source, self.writer, self.now = store, source, writer, now
        self.progress = progress
        self.done: dict[str, list[Placed]] = {a: [] for a in
                                              ("create", "unchanged", "conflict", "overwrite")}
        self.archived: list[str] = []
        self.skipped: list[Skipped] = []
        self.notes: list[str] = []
        self.item_notes: list[tuple[str, str]] = []  # per memory, grouped in the report

    def create_all(self, steps: list[Step]) -> None:
        """Every new memory in one ``create_many`` (one lock, one MEMORY.md edit per
        group, finished by ``recover`` after a kill) — one guarded create each made an
        import quadratic (16 s for 1,000 memories, 140 s for 3,000) — then what the
        source had archived archived in one ``archive_many``, and locks."""
        if not steps:
            return
        report = create_many(self.store, [(s.file, s.text) for s in steps],
                             writer=self._writer(), reason=f"import from {self.source}",
                             progress=self.progress)
        for refused in report.refused:
            self.skipped.append(Skipped(steps[refused.index].item.origin, str(refused.error)))
        created = [(steps[c.index], c.redacted) for c in report.created]
        self.notes += report.warnings
        archived = [step for step, _ in created if step.item.archived]
        answers = archive_many(self.store, [ArchiveItem(step.file, f"{self._reason(step)}: "
                                                        "archived there") for step in archived],
                               by=self._writer(), now=self.now) if archived else []
        for step, answer in zip(archived, answers, strict=True):
            if answer is not None:
                self.notes.append(f"{step.file}: created, but not archived as in the "
                                  f"source: {answer}")
        for step, redacted in created:
            if step.item.locked:
                lock_memory(self.store, step.file, by=self._writer(), now=self.now)
            self.done["create"].append(_placed(step))
            if redacted or step.text != step.item.text:
                self.item_notes.append((step.file, "secrets were redacted from the imported "
                                                   "text"))

    def step(self, step: Step) -> None:
        try:
            conflict_id = self._apply(step)
        except SagememError as exc:  # caps, a locked memory, a full disk: said, not fatal
            self.skipped.append(Skipped(step.item.origin, str(exc)))
            return
        self.done[step.action].append(_placed(step, conflict_id))
        if step.action in ("create", "overwrite") and step.text != step.item.text:
            self.item_notes.append((step.file, "secrets were redacted from the imported text"))

    def _apply(self, step: Step) -> str | None:
        if step.action == "unchanged":
            return None
        if step.action == "conflict":
            assert step.current is not None
            return self._conflict(step, step.current)
        assert step.action == "overwrite" and step.current is not None  # creates: create_all
        self._overwrite(step, step.current)
        self._place(step)
        return None

    def _conflict(self, step: Step, current: Memory) -> str:
        record = conflicts.create(
            self.store, "external_change", current.file, writer=self._writer(),
            reason=f"{self._reason(step)}: another text under this name; nothing was "
                   f"overwritten", disk=(current.revision, current.text),
            mine={"based_on": current.revision, "text": step.text, "import": self.source},
            now=self.now)
        return record.id

    def _overwrite(self, step: Step, current: Memory) -> None:
        """Replace: bring an archived one back first, then a guarded write on the
        revision the plan saw (an edit made since is refused, not lost)."""
        if current.file in locked_names(self.store):
            raise _locked(current.file)
        if current.archived:  # guarded writes reach live memories only
            restore_memory(self.store, current.file, reason=self._reason(step),
                           by=self._writer(), now=self.now)
        if step.text != current.text:
            self.store.write(current.file, step.text, current.revision,
                             writer=self._writer(), reason=self._reason(step))
        self._close_import_conflicts(current.file, step.text)

    def _close_import_conflicts(self, file: str, text: str) -> None:
        """Resolve the open records an earlier merge import made for ``file``: replace
        has just answered them (the imported text is on disk now), so they must not
        stay open asking."""
        records = [r for r in conflicts.list_conflicts(self.store.state_dir, "open")
                   if r.file == file and r.side("mine").get("import")]
        for record in records:
            decision = "keep_mine" if record.side("mine").get("text") == text else "replaced"
            try:
                resolve_applied(self.store, record.id, decision, self.store.revision(file),
                                now=self.now)
            except SagememError as exc:
                self.notes.append(f"{file}: conflict record {record.id} left open: {exc}")
                continue
            self.notes.append(f"{file}: conflict record {record.id} resolved ({decision}): "
                              "--replace wrote the imported text")

    def _place(self, step: Step) -> None:
        """Archive and lock what the source had archived and locked."""
        if step.item.archived:
            archive_memory(self.store, step.file, f"{self._reason(step)}: archived there",
                           by=self._writer(), now=self.now)
        if step.item.locked:
            lock_memory(self.store, step.file, by=self._writer(), now=self.now)

    def archive_absent(self, file: str) -> None:
        try:
            archive_memory(self.store, file, f"import --replace from {self.source}: not in "
                                             f"the import", by=self._writer(), now=self.now)
        except SagememError as exc:
            self.skipped.append(Skipped(file, f"not archived: {exc}"))
            return
        self.archived.append(file)

    def copy_index(self, text: str, planned: tuple[Skipped, ...]) -> None:
        """MEMORY.md as the source has it (guarded like any MEMORY.md write) — unless a
        memory was skipped, by the plan (``planned``) or while applying: its line would
        point at nothing, while each memory created already has its own line."""
        if planned or self.skipped:
            self.notes.append("MEMORY.md was not copied from the import, since not every "
                              "memory could be written; each created one has its line")
            return
        try:
            with self.store.locked():
                self.store.update_index(lambda _: text)
        except SagememError as exc:
            self.notes.append(f"MEMORY.md was not copied from the import: {exc}")
            return
        self.notes.append("MEMORY.md was copied from the import as it is")

    def report(self, plan: Plan, snapshot: str | None) -> ImportReport:
        done = {action: tuple(placed) for action, placed in self.done.items()}
        return ImportReport(self.source, plan.mode, False, done["create"], done["unchanged"],
                            done["conflict"], done["overwrite"], tuple(self.archived),
                            (*plan.skipped, *self.skipped),
                            (*plan.batch.notes, *grouped_notes(self.item_notes), *self.notes),
                            snapshot)

    def _reason(self, step: Step) -> str:
        return f"import from {self.source} ({step.item.origin})"

    def _writer(self) -> str:
        return self.writer


def _locked(file: str) -> SagememError:
    from ..errors import MemoryLocked

    return MemoryLocked(file, "replace")
