"""The change log: ``<state>/journal.jsonl``, one JSON line for every change sagemem
makes to a memory — when, which file, what (``op``), who (``writer``), why, the
revisions before and after, and the byte and line change.

It is an account, not the guard: the change itself has already landed when its line is
written, so a log that cannot be written (a read-only or full state directory) never
fails the change — ``append`` returns a warning, ``record`` also logs it. A line never
holds a memory's text, only names, revisions, counts and the reason: a secret written
into a memory must not leak into a log. (Not ``history/journal.py``, which holds the
intent records of multi-file operations in flight.)

Lines are appended with one ``O_APPEND`` write, under the store lock, so concurrent
writers never interleave them; past ``MAX_LOG_BYTES`` the file is rotated to
``journal.1.jsonl`` (one older generation kept). A torn or garbled line costs only
itself: ``read`` skips and counts it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files.controls import visible
from ..files.paths import INDEX_FILE

if TYPE_CHECKING:
    from ..files.folder import IndexUpdate, MemoryFolder

LOG_FILE = "journal.jsonl"
ROTATED_FILE = "journal.1.jsonl"
MAX_LOG_BYTES = 4 * 1024 * 1024
"""About 15,000 lines of ~250 bytes; with the rotated generation, months of an agent's
writes, and never more than 8 MiB to read for ``sagemem log``."""
MAX_REASON_CHARS = 300
"""A reason is a sentence; a longer one is cut so a line stays a line."""
NOT_GIVEN = "not given"
OPS = ("create", "write", "set", "new", "archive", "restore", "purge", "rename",
       "rollback", "fix", "revert", "sync")
"""``sync``: ``sagemem sync`` reached a commit (``commit``); its ``file`` is ``.``, the
folder, and its reason says what came in."""
SYNC_FILE = "."
WRITERS = ("cli", "library", "mcp", "memory-tool", "hook", "consolidation", "candidates", "ui",
           "claude-code")
"""The callers' own names (``writes.conflicts.WRITERS``, ``history.archive_log.BY``)."""


@dataclass(frozen=True)
class Facts:
    """What the log keeps of one version of a file: never its text."""

    revision: str
    size: int
    lines: int


@dataclass(frozen=True)
class Entry:
    """One line of the log. ``before``/``after``: revisions (None: the file did not
    exist there); ``bytes``/``lines``: the change, as signed numbers; ``to``: a
    rename's new name."""

    time: str
    file: str
    op: str
    writer: str
    reason: str
    before: str | None
    after: str | None
    bytes: int
    lines: int
    to: str | None = None
    run: str | None = None
    """The consolidation run that made the change (``dream run``), if one did."""
    commit: str | None = None
    """The git commit a ``sync`` line reached."""


def facts_of(data: bytes) -> Facts:
    """The revision (sha256, as everywhere in sagemem), size and line count of bytes."""
    import hashlib

    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return Facts(hashlib.sha256(data).hexdigest(), len(data), lines)


def stamp(now: datetime | None = None) -> str:
    """UTC to the microsecond, so lines written in one second still read in order."""
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def entry(file: str, op: str, *, writer: str, reason: str | None, before: Facts | None,
          after: Facts | None, now: datetime | None = None, to: str | None = None,
          run: str | None = None, commit: str | None = None) -> Entry:
    """The line for a change from ``before`` to ``after`` (None: absent)."""
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}")
    from .redact import redact  # a reason is the writer's text: it may carry a secret

    said = " ".join(redact(reason or "").text.split())[:MAX_REASON_CHARS] or NOT_GIVEN
    return Entry(stamp(now), file, op, writer, said,
                 before.revision if before else None, after.revision if after else None,
                 (after.size if after else 0) - (before.size if before else 0),
                 (after.lines if after else 0) - (before.lines if before else 0), to, run,
                 commit)


def record(state_dir: Path, file: str, op: str, *, writer: str, reason: str | None,
           before: Facts | None, after: Facts | None, now: datetime | None = None,
           to: str | None = None, run: str | None = None,
           commit: str | None = None) -> str | None:
    """Append the line for one change; the caller holds the store lock. Never raises
    for the state directory: a warning is logged and returned instead (None: written)."""
    return _warned(append(state_dir, entry(file, op, writer=writer, reason=reason,
                                           before=before, after=after, now=now, to=to,
                                           run=run, commit=commit)))


def record_write(state_dir: Path, file: str, op: str, *, writer: str, reason: str | None,
                 replaced: bytes | None, written: bytes, run: str | None = None) -> str | None:
    """A write that put ``written`` where ``replaced`` was (None: created): keep the
    replaced bytes (``versions``) so ``revert`` can bring them back, then log it."""
    from .versions import keep

    before = None if replaced is None else facts_of(replaced)
    after = facts_of(written)
    kept = keep(state_dir, replaced) if replaced is not None and before != after else None
    logged = append(state_dir, entry(file, op, writer=writer, reason=reason, before=before,
                                     after=after, run=run))
    return _warned("; ".join(w for w in (kept, logged) if w) or None)


def record_index(folder: MemoryFolder, update: IndexUpdate, op: str, *, writer: str,
                 reason: str | None) -> str | None:
    """MEMORY.md changed by ``update`` (an ``audit --fix`` repair); read back under the
    caller's lock for the counts. Its versions are not kept: no write restores them."""
    return record(folder.state_dir, INDEX_FILE, op, writer=writer, reason=reason,
                  before=facts_of(update.before.encode("utf-8")),
                  after=facts_of(folder.read_index()[0].encode("utf-8")))


def record_move(state_dir: Path, path: Path, op: str, *, writer: str, reason: str | None,
                renamed_from: str | None = None, run: str | None = None) -> str | None:
    """A file moved, bytes unchanged (archive, restore, rename), now at ``path``: its
    revision before and after is the same, the change +0. A rename's line names the
    old name as ``file`` and the new one as ``to``."""
    facts = file_facts(path)
    file, to = (path.name, None) if renamed_from is None else (renamed_from, path.name)
    return record(state_dir, file, op, writer=writer, reason=reason, before=facts,
                  after=facts, to=to, run=run)


def file_facts(path: Path) -> Facts | None:
    """A file's facts, read in chunks (any size); None when it cannot be read — the
    line is still written, without revisions."""
    import hashlib

    from ..errors import SagememError
    from ..files.paths import read_chunks

    digest, size, lines, last = hashlib.sha256(), 0, 0, b"\n"
    try:
        for chunk in read_chunks(path):
            digest.update(chunk)
            size, lines, last = size + len(chunk), lines + chunk.count(b"\n"), chunk[-1:]
    except SagememError:
        return None
    return Facts(digest.hexdigest(), size, lines + (0 if last == b"\n" else 1))


def _warned(warning: str | None) -> str | None:
    if warning is not None:
        import logging  # only on this path: every command imports the guard

        logging.getLogger("sagemem.changelog").warning("warning: %s", warning)
    return warning


def record_all(state_dir: Path, items: Sequence[Entry]) -> str | None:
    """``record`` for many changes (a batch of creates): their lines in one append; the
    caller holds the store lock. Never raises: a warning is logged and returned."""
    return _warned(append_all(state_dir, items)) if items else None


def append(state_dir: Path, item: Entry) -> str | None:
    """Add one line: a single ``O_APPEND`` write, rotating first past MAX_LOG_BYTES.
    None when written; otherwise what went wrong, as a warning (nothing is raised)."""
    return append_all(state_dir, (item,))


def append_all(state_dir: Path, items: Sequence[Entry]) -> str | None:
    """Add the lines of ``items`` in a single ``O_APPEND`` write, as ``append`` adds one."""
    lines = b"".join(_line(item) for item in items)
    path = state_dir / LOG_FILE
    try:
        _rotate_if_full(path, len(lines))
        fd = _open_log(path)
        try:
            lines = _after_torn_line(fd) + lines
            written = os.write(fd, lines)
        finally:
            os.close(fd)
    except OSError as exc:
        return (f"the change was made, but its line could not be added to {visible(str(path))} "
                f"({exc.strerror or exc})")
    if written != len(lines):  # a full disk mid-line: the torn line is skipped when read
        return f"the change was made, but its line in {visible(str(path))} is incomplete"
    return None


def _line(item: Entry) -> bytes:
    data = {k: v for k, v in vars(item).items() if v is not None or k in ("before", "after")}
    return (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")


def _open_log(path: Path) -> int:
    """The log open for appending; the state directory is made if it is not there yet
    (a library caller's first change), never through a symlink in the log's place.
    ``O_NONBLOCK`` and the regular-file check: a FIFO in the log's place once hung
    every write for good, under the store lock, after its change had landed. Read as
    well as written, for ``_after_torn_line``."""
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NONBLOCK", 0))
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return fd


def _after_torn_line(fd: int) -> bytes:
    """A newline when the log does not end with one (a line torn by a full disk or a
    crash), so the torn line costs only itself: appended to it, the next line was
    garbled with it and skipped too."""
    size = os.fstat(fd).st_size
    return b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""


def _rotate_if_full(path: Path, adding: int) -> None:
    try:
        size = os.lstat(path).st_size
    except FileNotFoundError:
        return
    if size + adding > MAX_LOG_BYTES:
        os.replace(path, path.with_name(ROTATED_FILE))


# -- reading -------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogRead:
    """The lines asked for, newest first, and how many could not be read (skipped)."""

    entries: tuple[Entry, ...]
    skipped: int
    unreadable: tuple[str, ...] = ()
    """A log file that is there and could not be read (a symlink, over its bound): why."""


def read(state_dir: Path, name: str | None = None, since: datetime | None = None) -> LogRead:
    """Every change (of ``name`` only: its file, or a rename to it), newest first, from
    ``since`` on. A torn or garbled line is skipped and counted, never a crash."""
    wanted = None if name is None else _with_md(name).casefold()
    entries: list[Entry] = []
    skipped = 0
    unreadable: list[str] = []
    for raw in _lines_newest_first(state_dir, unreadable):
        item = _parse(raw)
        if item is None:
            skipped += 1
            continue
        if wanted is not None and wanted not in (item.file.casefold(),
                                                 (item.to or "").casefold()):
            continue
        if since is not None and item.time < stamp(since):
            continue
        entries.append(item)
    return LogRead(tuple(entries), skipped, tuple(unreadable))


def _lines_newest_first(state_dir: Path, unreadable: list[str]) -> Iterator[bytes]:
    for name in (LOG_FILE, ROTATED_FILE):
        data = _read_bytes(state_dir / name, unreadable)
        yield from (raw for raw in reversed(data.split(b"\n")) if raw.strip())


def _read_bytes(path: Path, unreadable: list[str]) -> bytes:
    """A log file through the safe path (no symlink, bounded); absent: b"", and one that
    is there but cannot be read says why in ``unreadable`` (its lines are not shown)."""
    from ..errors import MemoryNotFound, SagememError
    from ..files.paths import read_regular

    try:
        return read_regular(path, MAX_LOG_BYTES * 2).data
    except MemoryNotFound:
        return b""
    except SagememError as exc:
        if path.exists() or path.is_symlink():
            unreadable.append(str(exc))
        return b""


def _parse(raw: bytes) -> Entry | None:
    try:
        item = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError; and a
        return None                       # line of nested brackets, which crashed `log`
    if not isinstance(item, dict):
        return None
    try:
        return _entry_from(item)
    except (KeyError, TypeError):
        return None


def _entry_from(item: dict[str, Any]) -> Entry:
    texts = [item[k] for k in ("time", "file", "op", "writer", "reason")]
    optional = [item.get(k) for k in ("before", "after")]
    counts = [item[k] for k in ("bytes", "lines")]
    to, run, commit = item.get("to"), item.get("run"), item.get("commit")
    if not (all(isinstance(t, str) for t in texts)
            and all(r is None or isinstance(r, str) for r in (*optional, to, run, commit))
            and all(type(c) is int for c in counts)):
        raise TypeError("not a change log line")
    time, file, op, writer, reason = texts
    return Entry(time, file, op, writer, reason, optional[0], optional[1], counts[0],
                 counts[1], to, run, commit)


def entry_json(item: Entry) -> dict[str, Any]:
    """The stable JSON shape of a line, as ``log --json`` prints it; ``run`` only on the
    lines a consolidation run wrote, ``commit`` only on a sync's."""
    shape = dict(vars(item))
    for optional in ("run", "commit"):
        if shape[optional] is None:
            del shape[optional]
    return shape


def _with_md(name: str) -> str:
    return name if name.lower().endswith(".md") else f"{name}.md"


# -- --since -------------------------------------------------------------------------------

_AGO = re.compile(r"(\d+)\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``7d``, ``24h``, ``30m``, ``2w`` ago, or a date (``2026-11-30``, UTC midnight) or
    ISO time; ValueError for anything else."""
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    given = text.strip().lower()
    ago = _AGO.fullmatch(given)
    if ago:
        try:
            return now - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
        except OverflowError:  # `--since 9999999d` was an internal error
            raise ValueError(f"{text!r} is further back than any date") from None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is neither a time ago (7d, 24h, 30m, 2w) nor a date "
                         "(2026-11-30)") from None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when
