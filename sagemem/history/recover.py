"""Finishing what a killed process left half done: each intent of the ``journal``.

Every interrupted operation is finished forward, because each can be, deterministically:

- an **archive** or **restore** whose file moved: its MEMORY.md line is removed (added),
  as the operation would have; one whose file never moved changed nothing;
- a **create_batch** (``create_many``): each file it made gets its MEMORY.md line;
  one it never made is not made now;
- a **purge** whose file was renamed aside is logged and unlinked, as asked;
- a **rollback** is planned again against the same snapshot and scope and carried out
  with the *original* protection snapshot — so its undo stays the one id the user was
  shown — but only over files still as that snapshot holds them: a file edited or
  created since the kill is left alone and reported (``conflict``).

In every case the operation's log line (``archive.jsonl``, ``rollbacks.jsonl``, a
create's line in the change log) ends up written exactly once, and the intent is removed only then.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import SagememError
from ..files import indexfile
from ..files.memory import Memory
from ..files.paths import file_sha256, name_key
from ..store import MemoryStore
from ..writes import changelog
from . import archive_log, journal
from .archive import unlink_logged_purge, with_index_line
from .archive_log import ArchiveEvent
from .journal import Intent
from .rollback import RollbackPlan, RollbackReport, carry_out, plan_rollback
from .rollback_log import Skip, append_history, rollback_history
from .snapshot_diff import CurrentFile
from .snapshots import Snapshot, load_snapshot, verify_snapshot

OUTCOMES = ("finished", "not_started", "needs_you", "failed")


@dataclass(frozen=True)
class Recovery:
    """What ``recover`` did with one journal entry. ``outcome``: ``finished`` (done now),
    ``not_started`` (nothing had changed; the intent is dropped), ``needs_you`` (left as
    it is: ``detail`` says what to look at), ``failed`` (an error; the intent stays, so
    ``recover`` can run again)."""

    operation: str
    subject: str
    outcome: str
    detail: str
    intent_id: str | None = None
    rollback: RollbackReport | None = None


def recover(store: MemoryStore) -> list[Recovery]:
    """Finish every interrupted operation of the journal, oldest first, under the lock."""
    store.require_directory()
    with store.locked():
        journal.remove_leftovers(store.state_dir)  # a record a kill cut short: never begun
        intents, damaged = journal.pending(store.state_dir)
        done = [_recover_one(store, intent) for intent in intents]
    if done:
        store.notice_change()  # files may have moved: an open index must look again
    return done + [Recovery("unknown", str(d.path), "needs_you",
                            f"{d.problem}; look at it, then delete it") for d in damaged]


def _recover_one(store: MemoryStore, intent: Intent) -> Recovery:
    try:
        if intent.operation == "rollback":
            result = _rollback(store, intent)
        elif intent.operation == "purge":
            result = _purge(store, intent)
        elif intent.operation == "archive_batch":
            result = _archive_batch(store, intent)
        elif intent.operation == "create_batch":
            result = _create_batch(store, intent)
        else:
            result = _move(store, intent, into_archive=intent.operation == "archive")
    except (SagememError, KeyError, ValueError, TypeError) as exc:  # a record hand-edited
        problem = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        return Recovery(intent.operation, intent.subject, "failed", problem, intent.id)
    if result.outcome in ("finished", "not_started"):
        journal.finish(store.state_dir, intent)
    return replace(result, intent_id=intent.id)


def _event(intent: Intent) -> ArchiveEvent:
    args = intent.args
    return ArchiveEvent(args["time"], args["action"], args["file"], args["reason"],
                        args["by"])


def _log_once(store: MemoryStore, record: ArchiveEvent) -> bool:
    """The line the operation would have written, unless it did before it was killed;
    True when written now (its change-log line, written after it, is missing too)."""
    if record in archive_log.read_log(store.state_dir)[0]:
        return False
    archive_log.append(store.state_dir, record)
    return True


def _here(store: MemoryStore, file: str, *, archived: bool) -> bool:
    return store.existing_name(file, archived=archived) == file


def _move(store: MemoryStore, intent: Intent, *, into_archive: bool) -> Recovery:
    record = _event(intent)
    file = record.file
    at_source = _here(store, file, archived=not into_archive)
    at_target = _here(store, file, archived=into_archive)
    if at_source and not at_target:
        return Recovery(record.action, file, "not_started",
                        "the file never moved; nothing had changed")
    if not at_target:
        return Recovery(record.action, file, "needs_you",
                        "the file is neither at the top level nor in archive/")
    if at_source:
        return Recovery(record.action, file, "needs_you", "both the top level and archive/ "
                        "hold this name; compare them, keep one, then run recover again")
    if into_archive:
        changed = store.update_index(lambda text: indexfile.remove_entries(text, file))
    else:
        memory = _memory_or_none(store, file)
        changed = store.update_index(lambda text: with_index_line(text, file, memory))
    if _log_once(store, record):
        changelog.record_move(store.state_dir, store.folder(archived=into_archive) / file,
                              record.action, writer=record.by, reason=record.reason)
    line = "MEMORY.md line removed" if into_archive else "MEMORY.md line added"
    return Recovery(record.action, file, "finished",
                    f"the file had moved; {line if changed else 'MEMORY.md already in step'}"
                    "; logged")


def _archive_batch(store: MemoryStore, intent: Intent) -> Recovery:
    """A batch killed mid-way: the files that moved lose their MEMORY.md lines and get
    their log lines (once); the files still at the top level were never touched."""
    from .archive_batch import drop_index_lines, log_moves

    events = [ArchiveEvent(**item) for item in json.loads(intent.args["events"])]
    moved = [e for e in events if _here(store, e.file, archived=True)
             and not _here(store, e.file, archived=False)]
    changed = drop_index_lines(store, [e.file for e in moved])
    log_moves(store, moved, None, once=True)
    return Recovery("archive_batch", intent.subject, "finished",
                    f"{len(moved)} of {len(events)} memories had moved; "
                    f"{'MEMORY.md lines removed' if changed else 'MEMORY.md already in step'}"
                    "; logged")


def _create_batch(store: MemoryStore, intent: Intent) -> Recovery:
    """A batch of creates killed mid-way: the files it made (there, with the bytes
    recorded) get their MEMORY.md lines and their log lines (once); nothing is
    overwritten, and a file it never made is not made now."""
    from .create_batch import finish_killed

    files = [(str(file), str(revision)) for file, revision in json.loads(intent.args["files"])]
    made, changed = finish_killed(store, files, writer=intent.args["writer"],
                                  reason=intent.args["reason"] or None)
    if not made:
        return Recovery("create_batch", intent.subject, "not_started",
                        "none of its files had been made; nothing had changed")
    return Recovery("create_batch", intent.subject, "finished",
                    f"{made} of {len(files)} memories had been made; "
                    f"{'MEMORY.md lines added' if changed else 'MEMORY.md already in step'}"
                    "; logged")


def _memory_or_none(store: MemoryStore, file: str) -> Memory | None:
    try:
        return store.get(file)
    except SagememError:
        return None


def _purge(store: MemoryStore, intent: Intent) -> Recovery:
    record = _event(intent)
    aside = store.archive_dir / intent.args["aside"]
    if not aside.exists() and _here(store, record.file, archived=True):
        return Recovery("purge", record.file, "not_started",
                        "the file was never moved aside; nothing had changed")
    gone, logged = changelog.file_facts(aside), _log_once(store, record)
    unlink_logged_purge(store, aside, record.file)
    if logged:
        changelog.record(store.state_dir, record.file, "purge", writer=record.by,
                         reason=record.reason, before=gone, after=None)
    return Recovery("purge", record.file, "finished", "logged and deleted, as asked")


def _rollback(store: MemoryStore, intent: Intent) -> Recovery:
    args = intent.args
    protection = verify_snapshot(load_snapshot(store, args["protection"]))
    if any(line.get("protection") == protection.id for line in rollback_history(store)):
        return Recovery("rollback", args["snapshot"], "finished",
                        "it had finished and was recorded; only its intent was left")
    first = plan_rollback(store, args["snapshot"], args["scope"], against=_held(protection))
    plan = _since_interruption(plan_rollback(store, args["snapshot"], args["scope"]),
                               protection)
    now = carry_out(store, plan, protection, datetime.fromisoformat(args["time"]),
                    recovered=True)
    report = _whole(store, first, now)
    report = replace(report, history_error=append_history(store, report))
    if report.history_error:
        return Recovery("rollback", plan.snapshot.id, "failed", report.history_error,
                        rollback=report)
    return Recovery("rollback", plan.snapshot.id, "finished",
                    f"{len(report.restored)} restored, {len(report.moved)} moved "
                    f"({len(now.restored) + len(now.moved)} of them now), "
                    f"{len(report.skipped)} skipped; undo: rollback {protection.id}",
                    rollback=report)


def _held(protection: Snapshot) -> dict[str, CurrentFile]:
    """The folder as the killed rollback planned from it: its protection snapshot."""
    held = {f.name: CurrentFile(f.name, f.sha256) for f in protection.files}
    return held | {s.name: CurrentFile(s.name, None, s.reason) for s in protection.skipped}


def _whole(store: MemoryStore, first: RollbackPlan, now: RollbackReport) -> RollbackReport:
    """The report of the whole rollback: the first plan's steps the killed run carried out
    (a restore recover found already in place, a move whose file ``archive/`` now holds
    with the bytes planned) and what recover did now — so the line does not undercount."""
    touched = {*now.restored, *now.moved, *(s.file for s in now.skipped)}
    restored = [r.file for r in first.restores if r.file not in touched]
    moved = [m.file for m in first.moves
             if m.file not in touched and _archived_as(store, m.file, m.seen)]
    return replace(now, restored=_in_order(restored, now.restored),
                   moved=_in_order(moved, now.moved), unchanged=first.unchanged,
                   left=first.left)


def _in_order(earlier: list[str], later: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({*earlier, *later}, key=name_key))


def _archived_as(store: MemoryStore, file: str, sha256: str) -> bool:
    try:
        return (not _here(store, file, archived=False) and _here(store, file, archived=True)
                and file_sha256(store.archive_dir / file) == sha256)
    except SagememError:
        return False


def _since_interruption(plan: RollbackPlan, protection: Snapshot) -> RollbackPlan:
    """Keep only the steps over files still as the protection snapshot holds them (or
    absent): one edited or created since the kill has no copy to undo to, so it is left."""
    before = {f.name: f.sha256 for f in protection.files}
    restores = tuple(r for r in plan.restores if r.seen is None or before.get(r.file) == r.seen)
    moves = tuple(m for m in plan.moves if before.get(m.file) == m.seen)
    kept = {r.file for r in restores} | {m.file for m in moves}
    left = [r.file for r in plan.restores] + [m.file for m in plan.moves]
    changed = [Skip(file, "conflict", "changed since the interrupted rollback; left as it is")
               for file in left if file not in kept]
    return replace(plan, restores=restores, moves=moves, skips=(*plan.skips, *changed))
