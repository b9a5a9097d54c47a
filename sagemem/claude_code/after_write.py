"""What follows Claude Code's own writes to a memory file: the same upkeep sagemem's
guarded writes get, done by the hook since the model wrote past them.

Claude Code's Write/Edit/MultiEdit tools write memory files directly, so a token the
model pasted would sit on disk, ``sagemem log`` would not show the change and ``sagemem
revert`` could not undo it. So, before an allowed write (``PreToolUse``), the bytes about
to be replaced are kept (``writes/versions.py``, named by their revision); after it
(``PostToolUse``) the file is redacted as a guarded write redacts (``redact: false`` in
its frontmatter opts out), rewritten only if it still holds the bytes the hook read, and
the change gets its journal line (writer ``claude-code``, the session in the reason).

The version the write replaced is the revision the session had seen (``inject/seen``,
read before the after-hook records the new one): the gate allows a write over an
existing file only when that is what the file held, and the before-hook kept those very
bytes. A write with no seen record is logged as a ``create`` (Claude Code refuses to
write over a file it has not read). The lexical index is left to the next search's sync,
which notices the changed mtime: refreshing it here would load the index in a hook that
runs on every file tool call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import FileTooLarge, MemoryNotFound, RewriteOvertaken, SagememError
from ..files.atomic import atomic_write, make_folder
from ..files.folder import MemoryFolder
from ..files.paths import INDEX_FILE, read_regular
from ..files.revision import revision_of
from ..history.ledger import record_if_possible
from ..inject.seen import record_seen
from ..writes import changelog, versions
from ..writes.redact import Found, redact_memory

WRITER = "claude-code"


@dataclass(frozen=True)
class Settled:
    """What the after-hook prints ("" for nothing) and the lines it logs."""

    output: str = ""
    log: tuple[str, ...] = ()


def keep_before(folder: MemoryFolder, path: Path, max_bytes: int) -> str | None:
    """Keep the bytes an allowed write is about to replace, so ``revert`` can bring them
    back; None when kept (or there is no file yet), else a line for the log."""
    try:
        data = read_regular(path, max_bytes).data
        make_folder(folder.state_dir, follow_link=True)  # a first write may precede all
    except MemoryNotFound:
        return None
    except SagememError as exc:
        return f"the version before the write was not kept: {exc}"
    return versions.keep(folder.state_dir, data)


@dataclass(frozen=True)
class Written:
    """One write of Claude Code's tools, as the after-hook knows it: the tool, the
    session, the revision it replaced (as the session had seen it; None: a create), and
    whether bytes on disk are the model's own (``ours``), not a change made since."""

    tool: str
    session_id: str
    before: str | None
    ours: Callable[[bytes], bool]


def settle(folder: MemoryFolder, name: str, path: Path, write: Written, *,
           seen_state: Path, seen_key: str) -> Settled:
    """Redact, journal and record one Claude Code write of ``name`` (folder-relative,
    at ``path``); ``seen_key`` names it in the session's seen records in ``seen_state``."""
    try:
        with folder.locked():
            return _settle_locked(folder, name, path, write, seen_state, seen_key)
    except SagememError as exc:
        return Settled(log=(f"{name}: after {write.tool}: {exc}",))


def _settle_locked(folder: MemoryFolder, name: str, path: Path, write: Written,
                   seen_state: Path, seen_key: str) -> Settled:
    tool, session_id, before = write.tool, write.session_id, write.before
    try:
        data = read_regular(path, folder.max_bytes).data
    except MemoryNotFound:
        return Settled()  # gone already (moved, deleted): nothing to keep clean
    except FileTooLarge as exc:  # not read, so not redacted: the model must know
        return Settled(_unchecked(name, tool, exc), (f"{name}: after {tool}: {exc}",))
    found: tuple[Found, ...] = ()
    final: bytes = data
    log: tuple[str, ...] = ()
    if write.ours(data):
        found, final, log = _redacted(folder, path, data)
    else:  # someone saved over the model's text: theirs is not ours to rewrite
        log = (f"{name}: changed between the {tool} and its hook: not redacted",)
    if found:
        log += tuple(record_seen(seen_state, session_id, {seen_key: revision_of(final)}))
    replaced = versions.load(folder.state_dir, before) if before else None
    op = "create" if before is None else "write"
    warning = changelog.record_write(folder.state_dir, name, op, writer=WRITER,
                                     reason=f"Claude Code {tool} (session {session_id})",
                                     replaced=replaced, written=final)
    if warning:
        log += (warning,)
    if before is not None and replaced is None:
        log += (f"{name}: the version before this {tool} is not kept ({before[:12]}); "
                "revert cannot go back past it",)
    return Settled(_told(name, found, tool) if found else "", log)


def _redacted(folder: MemoryFolder, path: Path, data: bytes
              ) -> tuple[tuple[Found, ...], bytes, tuple[str, ...]]:
    """The secrets found, the bytes the file holds afterwards, and lines for the log.
    Rewritten only while the file still holds ``data``: a later change is someone's."""
    text = data.decode("utf-8", errors="surrogateescape")
    redaction = redact_memory(text)
    if not redaction.changed:
        return (), data, ()
    clean = redaction.text.encode("utf-8", errors="surrogateescape")

    def unchanged() -> None:
        try:
            now = read_regular(path, folder.max_bytes).data
        except MemoryNotFound:
            now = None
        if now != data:
            raise RewriteOvertaken(path)

    try:
        atomic_write(path, clean, create=False, before_replace=unchanged)
    except RewriteOvertaken as exc:
        return (), data, (str(exc),)
    return redaction.found, clean, ()


def _unchecked(name: str, tool: str, exc: FileTooLarge) -> str:
    """The PostToolUse answer for a file too big to check: nothing was redacted."""
    text = (f"sagemem: {name} is over the {exc.limit // 1024} KiB limit per memory, so "
            f"what your {tool} wrote was not checked for secrets. Keep secrets out of it, "
            "and split it into smaller memories.")
    return _context(text)


def _context(text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                              "additionalContext": text}},
                      ensure_ascii=False)


def _told(name: str, found: tuple[Found, ...], tool: str) -> str:
    """The PostToolUse answer telling the model what was redacted (kinds and lines,
    never a secret) and that the file on disk changed under its write."""
    kinds = ", ".join(sorted({f.kind for f in found}))
    lines = ", ".join(str(f.line) for f in found[:10])
    count = len(found)
    text = (f"sagemem: {count} secret{'s' if count != 1 else ''} ({kinds}; line"
            f"{'s' if count != 1 else ''} {lines}) redacted from {name} after your "
            f"{tool}: the file on disk now holds "
            "<REDACTED:kind> marks where the secrets were. Your next Edit of it is "
            "allowed, but its old_string must match the redacted text: Read it first "
            "if you edit near those lines. Keep where a secret lives, not the secret.")
    return _context(text)


def record_read(folder: MemoryFolder, name: str) -> list[str]:
    """A Read of a memory counts in the access ledger, as ``sagemem read`` counts; the
    index file is no memory."""
    if name == INDEX_FILE or not name.endswith(".md"):
        return []
    return record_if_possible(folder.state_dir, "read", [name], datetime.now(timezone.utc))
