"""Rollback: take the memory directory back to a snapshot, without deleting anything.

``touched`` restores the files of the snapshot that differ now (changed or removed
since) and leaves files added since alone; ``all`` also moves those added files into
``archive/`` (keeping their names; a name already taken there is skipped and counted,
never overwritten).

``archive/`` is part of the picture, so that a rollback and its undo are exact for the
top-level files and leave no duplicates: a file removed since the snapshot whose exact
name ``archive/`` holds with the snapshot's bytes is moved back out (it was archived),
not copied; a file to be moved into ``archive/`` that ``archive/`` already holds with
identical bytes is only taken off the top level — renamed aside, its sha256 and the
archived copy's checked again under the lock, then unlinked (its bytes stay in
``archive/`` and in the protection snapshot; any mismatch puts it back). Leaving it
(as ``already_archived``) would be safer still, but the rollback would not be exact.

A locked memory is never moved; restoring its old bytes is allowed — the lock guards
against losing a memory, and a restore loses nothing (the protection snapshot holds
what it replaced).

Before anything changes, a *protection* snapshot of now is taken, so a rollback can
itself be rolled back. Every rollback appends one line to ``<state>/rollbacks.jsonl``
(``rollback_history``). Between the protection snapshot and that line an intent record
(``journal``) names the rollback, so a killed one is finished by ``recover``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from ..errors import (
    MemoryNotFound,
    SagememError,
    StaleRevision,
    WriteRefused,
)
from ..files.atomic import atomic_write, remove_quietly, temp_name
from ..files.paths import file_sha256, name_key, read_regular
from ..store import MemoryStore
from ..writes.conflicts import record_write_conflict
from . import journal
from .archive import move_file, move_without_overwrite
from .locks import locked_names
from .rollback_log import HISTORY_FILE as HISTORY_FILE
from .rollback_log import RollbackReport as RollbackReport
from .rollback_log import Skip as Skip
from .rollback_log import append_history, check_history_file, log_changes
from .rollback_log import report_json as report_json
from .rollback_log import rollback_history as rollback_history
from .snapshot_diff import CurrentFile, Pairing, current_files, pair
from .snapshots import (
    Snapshot,
    SnapshotFile,
    check_taken_of,
    load_snapshot,
    read_copy,
    verify_snapshot,
    write_snapshot,
)

SCOPES = ("touched", "all")


@dataclass(frozen=True)
class Restore:
    """Put the snapshot's bytes of ``entry`` at ``file``, if it is still at ``seen``
    (its sha256 when the plan was made; None: it did not exist)."""

    file: str
    entry: SnapshotFile
    seen: str | None


@dataclass(frozen=True)
class Move:
    """Move ``file`` (added since the snapshot) into ``archive/``, if still at ``seen``."""

    file: str
    seen: str


@dataclass(frozen=True)
class RollbackPlan:
    """What a rollback would do, decided from the directory as it was when planned."""

    snapshot: Snapshot
    scope: str
    restores: tuple[Restore, ...]
    moves: tuple[Move, ...]
    skips: tuple[Skip, ...]
    unchanged: int
    left: tuple[str, ...]  # added since, left alone under ``touched``


def plan_rollback(store: MemoryStore, snapshot_id: str, scope: str = "touched", *,
                  against: dict[str, CurrentFile] | None = None) -> RollbackPlan:
    """Decide what a rollback to ``snapshot_id`` does; changes nothing. A damaged
    snapshot is refused (SnapshotDamaged), one of another memory folder (WrongFolder),
    an unknown id is SnapshotNotFound. ``against``: the files to plan from instead of
    the folder now (``recover`` replays the plan a killed rollback made)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
    store.require_directory()
    snapshot = verify_snapshot(check_taken_of(load_snapshot(store, snapshot_id),
                                              store.directory))
    paired = pair(snapshot, current_files(store) if against is None else against)
    restores, skips, unchanged = _restores(paired)
    skips += [Skip(name, "ambiguous", "another file's name differs from it only in case or "
                                      "Unicode form; left alone, sort them out by hand")
              for name in paired.ambiguous]
    moves, more_skips, left = _moves(store, snapshot, paired.added, scope)
    return RollbackPlan(snapshot, scope, tuple(restores), tuple(moves),
                        tuple(skips + more_skips), unchanged, tuple(left))


def _restores(paired: Pairing) -> tuple[list[Restore], list[Skip], int]:
    restores: list[Restore] = []
    skips: list[Skip] = []
    unchanged = 0
    for entry, current in paired.pairs:
        if current is None:
            restores.append(Restore(entry.name, entry, None))
        elif current.problem is not None:
            skips.append(Skip(current.name, "unreadable", current.problem))
        elif current.sha256 != entry.sha256:
            restores.append(Restore(current.name, entry, current.sha256))
        else:
            unchanged += 1
    return restores, skips, unchanged


def _moves(store: MemoryStore, snapshot: Snapshot, added: tuple[CurrentFile, ...], scope: str
           ) -> tuple[list[Move], list[Skip], list[str]]:
    not_captured = {name_key(s.name): s.reason for s in snapshot.skipped}
    if scope == "touched":
        return [], [], [c.name for c in added]
    locked = locked_names(store)
    moves: list[Move] = []
    skips: list[Skip] = []
    for current in added:
        key = name_key(current.name)
        if key in not_captured:
            skips.append(Skip(current.name, "not_captured",
                              f"the snapshot could not copy it ({not_captured[key]})"))
        elif current.sha256 is None:
            skips.append(Skip(current.name, "unreadable", current.problem or "unreadable"))
        elif key in locked:
            skips.append(Skip(current.name, "locked", "locked memories are never moved"))
        else:
            moves.append(Move(current.name, current.sha256))
    return moves, skips, []


def apply_rollback(store: MemoryStore, plan: RollbackPlan, *, now: datetime | None = None,
                   writer: str = "library") -> RollbackReport:
    """Carry out ``plan`` under the store lock: a protection snapshot of now first, then
    each restore and move, each guarded against a change since the plan (refused and
    reported as skipped, with a conflict record for a restore). Appends to the history.
    Raises UnfinishedOperation, changing nothing, while a killed operation is pending."""
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    if not plan.restores and not plan.moves:  # nothing to change: nothing to protect
        report = replace(preview(plan, now=when), dry_run=False)
        with store.locked():
            journal.require_none_pending(store.state_dir)
            return replace(report, history_error=append_history(store, report))
    with store.locked():
        check_history_file(store)
        journal.require_none_pending(store.state_dir)  # before its protection snapshot
        protection = write_snapshot(store, kind="protection", now=when,
                                    reason=f"before rollback to {plan.snapshot.id}")
        intent = journal.begin(store.state_dir, "rollback", {
            "snapshot": plan.snapshot.id, "scope": plan.scope, "protection": protection.id,
            "time": when.isoformat()}, now=when)
        try:
            report = carry_out(store, plan, protection, when, writer=writer)
        finally:
            store.notice_change()  # an open search index must not trust its silence now
        report = replace(report, history_error=append_history(store, report))
        if report.history_error is None:  # else the intent stays: ``recover`` writes it
            journal.finish(store.state_dir, intent)
    return report


def carry_out(store: MemoryStore, plan: RollbackPlan, protection: Snapshot, when: datetime,
              *, recovered: bool = False, writer: str = "library") -> RollbackReport:
    """Each restore and move of ``plan``, each with its change-log line; the caller holds
    the lock, ``protection`` holds what the rollback replaces, and the caller appends
    the history line."""
    restored: list[str] = []
    moved: list[str] = []
    skipped = list(plan.skips)
    held = frozenset(f.name for f in protection.files)
    for restore in plan.restores:
        outcome = _unprotected(held, restore.file, restore.seen) or \
            _restore(store, plan.snapshot, restore)
        _record(outcome, restore.file, restored, skipped)
    for move in plan.moves:
        outcome = _unprotected(held, move.file, move.seen) or _move(store, move)
        _record(outcome, move.file, moved, skipped)
    report = RollbackReport(plan.snapshot.id, plan.scope, False, when, protection.id,
                            tuple(restored), tuple(moved), tuple(skipped), plan.unchanged,
                            plan.left, recovered=recovered)
    log_changes(store, report, plan.snapshot, protection, writer)
    return report


def preview(plan: RollbackPlan, *, now: datetime | None = None) -> RollbackReport:
    """The report a dry run prints: what ``apply_rollback`` would do."""
    return RollbackReport(plan.snapshot.id, plan.scope, True, now or datetime.now(timezone.utc),
                          None, tuple(r.file for r in plan.restores),
                          tuple(m.file for m in plan.moves), plan.skips, plan.unchanged,
                          plan.left)


def rollback(store: MemoryStore, snapshot_id: str, *, scope: str = "touched",
             dry_run: bool = False, now: datetime | None = None, writer: str = "library"
             ) -> RollbackReport:
    """Plan and apply (or, with ``dry_run``, only plan) a rollback to ``snapshot_id``."""
    plan = plan_rollback(store, snapshot_id, scope)
    return preview(plan, now=now) if dry_run else \
        apply_rollback(store, plan, now=now, writer=writer)


def _record(outcome: Skip | None, file: str, done: list[str], skipped: list[Skip]) -> None:
    if outcome is None:
        done.append(file)
    else:
        skipped.append(outcome)


def _unprotected(held: frozenset[str], file: str, seen: str | None) -> Skip | None:
    """The second guard: a file is replaced or moved only if the protection snapshot holds
    it (by exact name), so the rollback's own undo can bring it back. Creating a file
    that did not exist replaces nothing and needs no copy."""
    if seen is None or file in held:
        return None
    return Skip(file, "not_protected", "the protection snapshot could not copy it; left "
                                       "as it is")


def _restore(store: MemoryStore, snapshot: Snapshot, restore: Restore) -> Skip | None:
    """Write the snapshot's exact bytes back, guarded by the revision seen at plan time.

    This bypasses ``store.write`` on purpose: restoring the exact bytes is the point of
    a rollback, and those bytes may hold merge markers, exceed today's size limit, or be
    MEMORY.md (reserved) — all of which ``store.write`` refuses. The guard is the same:
    the caller holds the store lock, and ``before_replace`` re-checks the sha256 right
    before the rename, so an edit made since the plan is refused, recorded as a conflict
    and reported, never overwritten. Creation never overwrites (a hard link).
    """
    archived = _archived_sha(store, restore.entry.name) if restore.seen is None else None
    if archived is not None and archived == restore.entry.sha256:
        return _move_back_out(store, restore)
    data = read_copy(snapshot, restore.entry)
    if data is None:
        return Skip(restore.file, "damaged", "the snapshot's copy no longer matches its "
                                             "manifest")
    target = store.directory / restore.file

    def still_as_planned() -> None:
        actual = _sha_or_none(target)
        if actual != restore.seen:
            raise StaleRevision(restore.file, restore.seen, actual,
                                _conflict(store, snapshot, restore, data, actual))

    try:
        atomic_write(target, data, create=restore.seen is None, before_replace=still_as_planned)
    except WriteRefused as exc:
        return Skip(restore.file, "conflict", f"changed since the plan ({exc})",
                    exc.conflict_id)
    except SagememError as exc:
        return Skip(restore.file, "failed", str(exc))
    return None


def _move_back_out(store: MemoryStore, restore: Restore) -> Skip | None:
    """``archive/`` holds the snapshot's exact bytes under the exact name: the file was
    archived since, so it moves back out rather than leaving a duplicate behind."""
    try:
        if move_file(store, restore.entry.name, into_archive=False):
            return None
    except SagememError as exc:
        return Skip(restore.file, "failed", str(exc))
    return Skip(restore.file, "conflict", "created since the plan; left in place")


def _archived_sha(store: MemoryStore, name: str) -> str | None:
    """The sha256 of ``archive/<name>`` by exact name; None when there is none or
    ``archive/`` cannot be used (a symlink): then nothing is taken from or left to it."""
    try:
        if store.existing_name(name, archived=True) != name:
            return None
    except SagememError:
        return None
    return _sha_or_none(store.archive_dir / name)


def _conflict(store: MemoryStore, snapshot: Snapshot, restore: Restore, data: bytes,
              actual: str | None) -> str | None:
    """Keep both sides, as a refused ``store.write`` does; the record is best effort."""
    disk_text = None
    if actual is not None:
        try:
            disk_text = read_regular(store.directory / restore.file, store.max_bytes).data \
                .decode("utf-8", errors="replace")
        except SagememError:
            disk_text = None
    mine = {"based_on": restore.seen, "text": data.decode("utf-8", errors="replace")}
    try:
        return record_write_conflict(store, "stale_version", restore.file, writer="library",
                                     reason=f"rollback to snapshot {snapshot.id}",
                                     disk=(actual, disk_text), mine=mine)
    except SagememError:
        return None


def _move(store: MemoryStore, move: Move) -> Skip | None:
    if _sha_or_none(store.directory / move.file) != move.seen:
        return Skip(move.file, "conflict", "changed since the plan; left in place")
    if _archived_sha(store, move.file) == move.seen:
        return _drop_archived_duplicate(store, move)
    try:
        if not move_file(store, move.file, into_archive=True):
            return Skip(move.file, "collision", "archive/ already holds this name; left "
                                                "in place, nothing overwritten")
    except SagememError as exc:
        return Skip(move.file, "failed", str(exc))
    return None


def _drop_archived_duplicate(store: MemoryStore, move: Move) -> Skip | None:
    """``archive/`` already holds these exact bytes: take the top-level copy away, but
    only after checking, once it is renamed aside (no editor can change it there), that
    both it and the archived copy still are those bytes. A mismatch puts it back."""
    source = store.directory / move.file
    aside = source.with_name(temp_name(move.file))
    try:
        os.rename(source, aside)
    except OSError as exc:
        return Skip(move.file, "failed", exc.strerror or str(exc))
    if _sha_or_none(aside) == move.seen == _archived_sha(store, move.file):
        remove_quietly(aside)
        return None
    try:
        move_without_overwrite(aside, source)
    except OSError:
        return Skip(move.file, "failed", f"changed while it was moved; its bytes are in {aside}")
    return Skip(move.file, "conflict", "changed since the plan; left in place")


def _sha_or_none(path: Path) -> str | None:
    try:
        return file_sha256(path)
    except MemoryNotFound:
        return None
    except SagememError:
        return "unreadable"  # never equal to a sha256: the guard refuses
