"""The write gate on Claude Code's own Write/Edit/MultiEdit tools, for the memory folder.

Claude Code's tools write memory files directly, past sagemem's guarded writes, so a
model that read ``user_role.md`` an hour ago (or before ``/compact``) could write over a
change made since by a person, another session or ``sagemem`` itself. The gate closes
that: every Read (and every Write or Edit, whose result the model knows) of a file in
the folder records the revision the model saw (``inject.seen``); a Write or Edit of a
file whose revision is no longer the one seen is denied, and the model is told to
read it again.

Rules, in order: a path outside the folder and the global layer's is never touched; a
file that does not exist yet, or that the model never read, is allowed (creating notes
must work); only the hook session's own records count, never another session's or a
shell's (what someone else read says nothing of what this model knows); the gate that
cannot decide allows, and says why in the hook's log. Allowing prints nothing: an
explicit "allow" would skip the user's own permission prompts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MemoryNotFound, SagememError
from ..files.paths import MAX_INDEX_BYTES, new_file_refusal, read_regular
from ..files.revision import revision_of
from ..inject.seen import latest_seen, record_seen

if TYPE_CHECKING:
    from ..files.folder import MemoryFolder

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
SEEN_TOOLS = WRITE_TOOLS | {"Read"}
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: a longer file_path names no file, at any cost
MAX_GATED_BYTES = MAX_INDEX_BYTES
"""The biggest file the gate hashes (MEMORY.md's own limit): bigger ones are allowed."""
_STRAIGHT = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@dataclass(frozen=True)
class Target:
    """A file inside the memory folder: its resolved path and its folder-relative name."""

    path: Path
    file: str


@dataclass(frozen=True)
class GateAnswer:
    """What the hook prints ("" allows) and the lines it logs."""

    output: str = ""
    log: tuple[str, ...] = ()


def gate(event: str, tool: str | None, file_path: str | None, cwd: str | None,
         session_id: str, memory_dir: Path, state_dir: Path, *,
         written: str | None = None, edited: tuple[str, ...] = (),
         global_dir: Path | None = None) -> GateAnswer:
    """Answer one PreToolUse or PostToolUse call of Claude Code's file tools; ``written``
    is a Write's ``content``, the whole text the model knows the file to hold;
    ``edited`` an Edit's (or MultiEdit's) ``new_string`` texts, which it knows are there;
    ``global_dir`` the global layer's folder, whose memories are guarded as well. Around
    the gate the upkeep of ``after_write`` runs: the version an allowed write replaces is
    kept, a written file is redacted and journaled, a Read counts in the ledger."""
    if event not in TOOL_EVENTS or tool not in SEEN_TOOLS or not file_path:
        return GateAnswer()
    try:
        found = locate(file_path, cwd, memory_dir, state_dir, global_dir)
    except SagememError as exc:  # a state directory of another folder: refuse nothing
        return GateAnswer(log=(f"{file_path}: allowed, the folder cannot be used: {exc}",))
    if found is None:
        return GateAnswer()
    target, folder, name = found
    if event == "PostToolUse":
        return _after_tool(tool, target, folder, name, session_id, state_dir, written,
                           edited)
    if tool not in WRITE_TOOLS:
        return GateAnswer()
    answer = _before_write(tool, target, session_id, state_dir)
    if answer.output or not _kept_up(name):
        return answer
    from .after_write import keep_before  # the upkeep's imports, for memory files only

    kept = keep_before(folder, target.path, folder.max_bytes)
    return GateAnswer(answer.output, (*answer.log, *((f"{name}: {kept}",) if kept else ())))


def locate(file_path: str, cwd: str | None, memory_dir: Path, state_dir: Path,
           global_dir: Path | None) -> tuple[Target, MemoryFolder, str] | None:
    """The memory file ``file_path`` names (its key for the seen records), the folder it
    belongs to (the project's, else the global layer's, with its own state directory)
    and its folder-relative name; None for a path outside both."""
    from ..files.folder import MemoryFolder  # the parser with it: not for a Bash call

    target = memory_target(file_path, cwd, memory_dir)
    if target is not None:
        return target, MemoryFolder(memory_dir, state_dir), target.file
    own = memory_target(file_path, cwd, global_dir) if global_dir is not None else None
    if own is None or global_dir is None:
        return None
    return global_target(file_path, cwd, global_dir) or own, MemoryFolder(global_dir), own.file


def _kept_up(name: str) -> bool:
    """Markdown files are memories (and MEMORY.md) and get the upkeep; anything else in
    the folder (a ``.gitignore``) is gated but not redacted, journaled or counted."""
    return name.lower().endswith(".md")


def _after_tool(tool: str, target: Target, folder: MemoryFolder, name: str,
                session_id: str, state_dir: Path, written: str | None,
                edited: tuple[str, ...]) -> GateAnswer:
    """A Read or write has happened: record what the model saw, then the upkeep."""
    from .after_write import Written, record_read, settle

    before = latest_seen(state_dir, session_id, target.file).revision \
        if tool in WRITE_TOOLS else None
    answer = _after(target, session_id, state_dir, written if tool == "Write" else None,
                    edited if tool in ("Edit", "MultiEdit") else ())
    if not _kept_up(name):
        return answer
    if tool not in WRITE_TOOLS:
        return GateAnswer(log=(*answer.log, *record_read(folder, name)))
    def ours(data: bytes) -> bool:
        return _holds_write(data, written if tool == "Write" else None, edited)

    done = settle(folder, name, target.path, Written(tool, session_id, before, ours),
                  seen_state=state_dir, seen_key=target.file)
    return GateAnswer(done.output, (*answer.log, *done.log))


def memory_target(file_path: str, cwd: str | None, memory_dir: Path) -> Target | None:
    """The file ``file_path`` (relative to ``cwd``) really is, if it lies in the folder.

    Both sides are resolved (``..``, symlinks), so a path through a link into the folder
    is gated and a link inside the folder that points out of it is not the folder's. The
    folder is recognised by its inode, not its spelling, so a differently cased or
    bind-mounted spelling of it is still it. A leading ``~`` is the home, as Claude
    Code's tools read it (else ``~/memory/x.md`` would name a folder ``~`` in cwd)."""
    if len(file_path) > MAX_PATH_CHARS or "\x00" in file_path:
        return None
    usable = cwd and len(cwd) <= MAX_PATH_CHARS and "\x00" not in cwd and os.path.isabs(cwd)
    base = Path(cwd) if usable and cwd else Path.cwd()  # Claude Code runs hooks in its cwd
    if file_path == "~" or file_path.startswith("~/"):  # Claude Code's tools expand it
        file_path = os.path.expanduser(file_path)
    real = Path(os.path.realpath(base / file_path))
    try:
        root = os.stat(memory_dir)
    except (OSError, ValueError):
        return None  # no memory folder: nothing in it to guard
    for parent in real.parents:
        try:
            if os.path.samestat(os.stat(parent), root):
                return Target(real, real.relative_to(parent).as_posix())
        except OSError:
            continue
    return None


def global_target(file_path: str, cwd: str | None, global_dir: Path) -> Target | None:
    """A file of the global layer, named by its absolute path: the key of its record then
    never meets a project file's folder-relative one (``user_role.md`` in both)."""
    target = memory_target(file_path, cwd, global_dir)
    if target is None:
        return None
    return Target(target.path, f"{Path(os.path.abspath(global_dir)).as_posix()}/{target.file}")


def _current(target: Target) -> str | None:
    """The file's revision now, through the safe read path; None if it does not exist."""
    data = _current_bytes(target)
    return None if data is None else revision_of(data)


def _current_bytes(target: Target) -> bytes | None:
    try:
        return read_regular(target.path, MAX_GATED_BYTES).data
    except MemoryNotFound:
        return None


def _after(target: Target, session_id: str, state_dir: Path,
           written: str | None, edited: tuple[str, ...] = ()) -> GateAnswer:
    """The model read or wrote the file: what it holds now is what the model has seen,
    unless a Write's text says otherwise (``_seen_of_write``)."""
    try:
        data = _current_bytes(target)
    except SagememError as exc:
        return GateAnswer(log=(f"not recorded as seen: {target.file}: {exc}",))
    if data is None:
        return GateAnswer()
    if not _holds_edits(data, edited):
        return GateAnswer(log=(f"{target.file}: changed between the Edit and its hook (its "
                               "new text is not in the file): not recorded as seen",))
    revision, note = _seen_of_write(data, written)
    warnings = record_seen(state_dir, session_id, {target.file: revision})
    return GateAnswer(log=tuple(f"{target.file}: {line}" for line in (*note, *warnings)))


def _seen_of_write(data: bytes, written: str | None) -> tuple[str, tuple[str, ...]]:
    """The revision a session has seen after it wrote ``written`` over a file now holding
    ``data``. The hook runs a moment after the tool (a process start, some 300 ms): a
    change landing in between is not the model's, and recording it as seen would let the
    model's next Write overwrite it. So the file counts as seen only while it holds what
    the model wrote (line endings and a BOM aside, which Claude Code may keep from the
    old file); otherwise the model has seen its own text, whose revision matches no
    file, and its next write is denied until it reads again."""
    if written is None or _plain(data.decode("utf-8", errors="replace")) == _plain(written):
        return revision_of(data), ()
    own = revision_of(written.encode("utf-8", errors="surrogatepass"))
    return own, ("changed between the Write and its hook: recorded the model's own text "
                 "as seen, not the file's",)


def _holds_write(data: bytes, written: str | None, edited: tuple[str, ...]) -> bool:
    """Whether the file holds what the model wrote: a Write's whole text, else each of
    an Edit's new texts (line endings, a BOM and quote styles aside, as below)."""
    if written is not None:
        return _plain(data.decode("utf-8", errors="replace")) == _plain(written)
    return _holds_edits(data, edited)


def _holds_edits(data: bytes, edited: tuple[str, ...]) -> bool:
    """Whether the file still holds each text an Edit put there. The hook runs a moment
    after the tool, as for a Write: an editor saving its buffer in between puts back a
    text without the model's edit, and recording that as seen would let the model's next
    Write overwrite the person's change. A deletion (an empty text) proves nothing."""
    text = _quotes(_plain(data.decode("utf-8", errors="replace")))
    return all(_quotes(_plain(new)) in text for new in edited if new)


def _quotes(text: str) -> str:
    """Curly quotes made straight: Claude Code's Edit writes ``new_string`` in the quote
    style of the file, so its own text may arrive with other quotes than it sent."""
    return text.translate(_STRAIGHT)


def _plain(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _before_write(tool: str, target: Target, session_id: str,
                  state_dir: Path) -> GateAnswer:
    """Deny a write over a file that changed since the model last saw it."""
    try:
        current = _current(target)
    except SagememError as exc:
        return GateAnswer(log=(f"allowed {tool} {target.file}: cannot tell ({exc})",))
    if current is None:
        return GateAnswer(deny(why)) if (why := new_file_refusal(target.path)) else GateAnswer()
    seen = latest_seen(state_dir, session_id, target.file)
    log = tuple(f"{tool} {target.file}: {problem}" for problem in seen.problems)
    if seen.revision is None or seen.revision == current:
        return GateAnswer(log=log)
    at = seen.at.isoformat(timespec="seconds") if seen.at else "?"
    return GateAnswer(deny(stale_reason(target.file, seen.revision, current)),
                      (*log, f"denied {tool} {target.file}: changed since read (seen "
                             f"{seen.revision[:12]} at {at} in session {session_id}, "
                             f"now {current[:12]})"))


def stale_reason(file: str, seen: str, current: str) -> str:
    """What the model is told: what happened, and the one thing to do about it. Only
    this session's Read tool vouches (``inject.seen``), so the message names that tool:
    a model that re-read through sagemem's MCP tools or ``sagemem read`` in Bash would
    otherwise be denied again and not know why."""
    return (f"sagemem: {file} changed since you last read it (you saw revision "
            f"{seen[:12]}, it is now {current[:12]}). Read it again with the Read tool "
            "(a read through sagemem's MCP tools or `sagemem read` does not count for "
            "this edit), then make your change to what it says now.")


def deny(reason: str) -> str:
    """Claude Code's PreToolUse answer that refuses the call and tells the model why."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                              "permissionDecision": "deny",
                                              "permissionDecisionReason": reason}},
                      ensure_ascii=False)
