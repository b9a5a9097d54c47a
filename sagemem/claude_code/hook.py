"""The Claude Code hook: the model gets its memories before it answers, its file tools
do not write over what changed since it read it, and the user's work never breaks.

Claude Code runs ``sagemem hook claude-code`` with the hook's JSON on stdin. On
``UserPromptSubmit`` we answer with the injected block as ``additionalContext``; on
``SessionStart`` after ``compact`` or ``clear`` the model has lost what it was given, so
the session is reset and the same memories may be injected again. On ``PreToolUse`` and
``PostToolUse`` of its Read/Write/Edit/MultiEdit tools the write gate answers
(``gate.py``; it reads no settings, only where the folders are), with the upkeep of
``after_write.py`` around it; on ``PreToolUse`` of Bash the Bash guard
(``bash_guard.py``). A hook that fails
shows errors to the user, and exit 2 blocks the prompt outright, so every failure is
one line in ``<state>/logs/hook.log`` while the hook prints nothing and exits 0.
The folder follows the git project Claude Code starts the hook in (its working
directory; docs/configuration.md, "Which folder"); where memory is off for that
repository the hook prints nothing, logs nothing, and exits 0.

Claude Code kills a hook at its timeout, and a killed hook injects nothing, so the hook
keeps to ``hook_budget_ms``: bringing the index up to date stops at a share of it (the
build's batches are kept), the block is made from what is indexed, and what was left
is logged; the next prompt, or ``sagemem index``, goes on from there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import (
    Settings,
    load_settings,
    read_settings_file,
    resolve_dirs,
    resolve_global_dir,
)
from ..errors import MemoryOff, SagememError
from ..files.atomic import append_line, make_folder
from ..inject.session import DEFAULT_SESSION, reset_session
from .bash_guard import guard, in_folders
from .gate import TOOL_EVENTS, GateAnswer, gate

if TYPE_CHECKING:
    from ..layers import Layers

OpenLayers = Callable[[Settings], AbstractContextManager["Layers"]]
"""How a call gets its layers: ``Layers.from_settings`` (closed after the call), or a
server's, kept open (``serve/server.py``)."""
MAX_STDIN_BYTES = 1024 * 1024
CONTEXT_LIMIT = 10_000  # Claude Code swaps longer additionalContext for a preview
MAX_CONTEXT_CHARS = 9_500  # inject fits the block under this by design, never by cutting
RESETTING_SOURCES = frozenset({"compact", "clear"})
LOG_FILE = Path("logs") / "hook.log"
MAX_LOG_BYTES = 1024 * 1024  # then hook.log becomes hook.log.1: a log must not fill a disk
MAX_LOG_LINE = 2000
AFTER_SYNC_SECONDS = 0.5
"""Kept back from the budget (at most half of it) for ranking and composing the block once
indexing stops: at 10,000 memories both take well under this."""


@dataclass(frozen=True)
class HookEvent:
    """The fields we use from a payload, whichever Claude Code version named them."""

    name: str
    session_id: str
    prompt: str | None = None
    source: str | None = None
    cwd: str | None = None
    tool: str | None = None
    file_path: str | None = None
    content: str | None = None  # a Write's whole new text (``tool_input.content``)
    new_texts: tuple[str, ...] = ()  # an Edit's ``new_string``, a MultiEdit's each
    command: str | None = None  # a Bash call's ``tool_input.command``

    def where(self) -> str:
        tool = f" tool={self.tool}" if self.tool else ""
        return f"{self.name or '?'}{tool} session={self.session_id} cwd={self.cwd or '?'}"


def claude_code(payload_bytes: bytes, env: Mapping[str, str] | None = None, *,
                memory_dir: Path | None = None, state_dir: Path | None = None,
                cwd: Path | None = None, open_layers: OpenLayers | None = None) -> str:
    """What to print for one hook call ("" for nothing). Never raises (see the module doc).
    ``cwd`` picks the folder (default: the process's); a server answering for another
    process passes that process's, and ``open_layers`` to keep its layers open between
    prompts (``serve/server.py``; default: opened and closed for this call)."""
    started = time.monotonic()
    env = os.environ if env is None else env
    log = _log_path(env, memory_dir, state_dir, cwd)
    where = "payload"
    try:
        event = parse_event(payload_bytes)
        if isinstance(event, str):
            _log(log, f"{where}: {event}")
            return ""
        where = event.where()
        if event.name in TOOL_EVENTS:
            return _gate(event, env, memory_dir, state_dir, log)
        settings = load_settings(env, memory_dir, state_dir, cwd=cwd)
        for warning in settings.warnings:
            _log(log, f"{where}: settings: {warning}")
        recall = _recall_folders(settings, cwd, env) if event.name == "UserPromptSubmit" \
            else ()
        return _respond(event, settings, log, started, open_layers or _open_layers, recall)
    except MemoryOff:  # turned off for this repository: nothing to inject, nothing to log
        return ""
    except Exception as exc:  # anything at all: the user's prompt must go through
        _log(log, f"{where}: {type(exc).__name__}: {exc}")
        return ""


def parse_event(payload_bytes: bytes) -> HookEvent | str:
    """The hook event in a payload, or the reason it is not one we can act on."""
    if len(payload_bytes) > MAX_STDIN_BYTES:
        return f"payload over {MAX_STDIN_BYTES} bytes ignored"
    text = payload_bytes.decode("utf-8-sig", errors="replace")
    if not text.strip():
        return "empty stdin; Claude Code sends the hook's JSON there"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return f"not JSON ({type(exc).__name__}: {exc})"
    if not isinstance(data, dict):
        return f"expected a JSON object, got {type(data).__name__}"
    event = HookEvent(name=_text(data, "hook_event_name", "hookEventName") or "",
                      session_id=_session_id(data),
                      prompt=_text(data, "prompt", "user_prompt"),
                      source=_text(data, "source"), cwd=_text(data, "cwd"),
                      tool=_text(data, "tool_name", "toolName"),
                      file_path=_tool_input(data, "file_path", "filePath"),
                      content=_tool_input(data, "content"), new_texts=_new_texts(data),
                      command=_tool_input(data, "command"))
    if event.name == "UserPromptSubmit" and event.prompt is None:
        return f"{event.where()}: no string prompt"
    return event


def _text(data: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` holding a string: field names changed between versions."""
    return next((data[k] for k in keys if isinstance(data.get(k), str)), None)


def _tool_args(data: dict[str, Any]) -> dict[str, Any]:
    """The payload's ``tool_input`` object (none, or not an object: empty)."""
    tool_input = data.get("tool_input", data.get("toolInput"))
    return tool_input if isinstance(tool_input, dict) else {}


def _tool_input(data: dict[str, Any], *keys: str) -> str | None:
    """A string of ``tool_input``: ``file_path``, the file Read, Write, Edit and MultiEdit
    act on, or ``content``, the text a Write puts there."""
    return _text(_tool_args(data), *keys)


def _new_texts(data: dict[str, Any]) -> tuple[str, ...]:
    """The texts an Edit (``new_string``) or a MultiEdit (each of ``edits``) writes."""
    tool_input = _tool_args(data)
    edits = tool_input.get("edits")
    steps = edits if isinstance(edits, list) else [tool_input]
    return tuple(s["new_string"] for s in steps
                 if isinstance(s, dict) and isinstance(s.get("new_string"), str))


def _gate(event: HookEvent, env: Mapping[str, str], memory_dir: Path | None,
          state_dir: Path | None, log: Path | None) -> str:
    """The write gate's answer to a tool event; only the folders are resolved (the global
    layer's from the settings file alone), never the whole settings, since it runs on
    every file tool call of the session."""
    memory, state, _ = resolve_dirs(env, memory_dir, state_dir)
    if event.tool == "Bash":  # the Bash guard: a shell write into the folder is denied
        answer = guard(event.command, event.cwd, in_folders(
            memory, _global_dir(env, state))) if event.name == "PreToolUse" else GateAnswer()
    else:
        answer = gate(event.name, event.tool, event.file_path, event.cwd, event.session_id,
                      memory, state, written=event.content, edited=event.new_texts,
                      global_dir=_global_dir(env, state))
    for line in answer.log:
        _log(log, f"{event.where()}: {line}")
    return answer.output


def _global_dir(env: Mapping[str, str], state: Path) -> Path | None:
    """The global layer's folder (settings file, then SAGE_MEM_GLOBAL_DIR, then the
    default): its memories are memories too, and a stale Write to one would pass a gate
    that knew the project folder alone. Unreadable settings: the project's only."""
    try:
        return resolve_global_dir(env, read_settings_file(state))[0]
    except (SagememError, OSError):
        return None


def _session_id(data: dict[str, Any]) -> str:
    """The host's session id; without one, the shared default session (never an error)."""
    value = _text(data, "session_id", "sessionId")
    return value if value and value.strip() else DEFAULT_SESSION


def _open_layers(settings: Settings) -> AbstractContextManager[Layers]:
    """``Layers.from_settings``, imported here: the store, the index and numpy are the
    prompt's, and a tool event (every Bash call) should not pay ~40 ms to import them."""
    from ..layers import Layers

    return Layers.from_settings(settings)


def _recall_folders(settings: Settings, cwd: Path | None,
                    env: Mapping[str, str]) -> tuple[Path, ...]:
    """The transcript folders of the project the hook runs for (its ``cwd`` and ``env``,
    a served caller's too), only looked up when memory may be injected."""
    from ..transcripts.locate import transcript_folders

    return transcript_folders(settings, cwd, env)


def _respond(event: HookEvent, settings: Settings, log: Path | None, started: float,
             open_layers: OpenLayers, transcripts: tuple[Path, ...] = ()) -> str:
    """Act on one event: inject for a prompt, reset after the context was compacted;
    within the time budget counted from ``started`` (``time.monotonic()``)."""
    from ..history.journal import pending_notice
    from ..inject.block import inject

    if event.name == "SessionStart" and event.source in RESETTING_SOURCES:
        reset_session(settings.state_dir, event.session_id)
    if event.name != "UserPromptSubmit" or event.prompt is None:
        return ""
    with open_layers(settings) as layers:  # the project's and the global layer
        budget = settings.hook_budget_ms / 1000
        injection = inject(layers, event.prompt, event.session_id, settings,
                           max_text_chars=MAX_CONTEXT_CHARS, transcripts=transcripts,
                           deadline=started + budget - min(AFTER_SYNC_SECONDS, budget / 2))
    spent = time.monotonic() - started
    if spent > budget:
        _log(log, f"{event.where()}: took {spent * 1000:.0f} ms, over the budget of "
                  f"{settings.hook_budget_ms} ms (hook_budget_ms)")
    for notice in injection.notices:  # the hook's stderr is out of sight; keep them
        _log(log, f"{event.where()}: notice: {notice}")
    unfinished = pending_notice(settings.state_dir)
    if unfinished:
        _log(log, f"{event.where()}: warning: {unfinished}; run sagemem recover")
    if len(injection.text) >= CONTEXT_LIMIT:  # inject's cap failed: say so, still answer
        _log(log, f"{event.where()}: block of {len(injection.text)} chars exceeds {CONTEXT_LIMIT}")
    return additional_context(injection.text)


def additional_context(text: str) -> str:
    """The JSON Claude Code adds to the model's context; "" when there is nothing to add."""
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": text}}, ensure_ascii=False)


def _log_path(env: Mapping[str, str], memory_dir: Path | None,
              state_dir: Path | None, cwd: Path | None = None) -> Path | None:
    """``<state>/logs/hook.log``, found without reading settings.json (it may be the error)."""
    try:
        return resolve_dirs(env, memory_dir, state_dir, cwd=cwd)[1] / LOG_FILE
    except Exception:  # e.g. ``~`` with no home directory: then there is nowhere to log
        return None


def _log(path: Path | None, message: str) -> None:
    """Append one line to the hook log; if even that fails, stay silent. A symlink in
    place of ``logs/`` or ``hook.log`` is refused, never followed: the hook runs on every
    prompt and tool call, and would append to whatever file a planted link names."""
    if path is None:
        return
    try:
        make_folder(path.parent.parent, follow_link=True)  # the state directory
        make_folder(path.parent, parents=False)
        if path.is_file() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        line = f"{stamp} {' '.join(message.split())}"[:MAX_LOG_LINE] + "\n"
        append_line(path, line.encode("utf-8", errors="replace"))
    except Exception:  # the log is the last resort; nothing is left to tell
        pass


def run_claude_code_hook(memory_dir: Path | None = None, state_dir: Path | None = None,
                         payload: bytes | None = None) -> int:
    """Read the payload from stdin (unless the caller read it: ``payload``), print the
    answer, and return 0 whatever happened."""
    return run_stdin_hook(lambda data: claude_code(data, memory_dir=memory_dir,
                                                   state_dir=state_dir), payload)


def run_stdin_hook(answer: Callable[[bytes], str], payload: bytes | None = None) -> int:
    """A host's hook command: the payload from stdin (unless already read), ``answer``'s
    text on stdout, and 0 whatever happened; every host's hook (``hosts/hook.py``) too."""
    if payload is None:
        try:
            payload = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        except Exception:  # no stdin at all (closed, detached): the same as an empty one
            payload = b""
    output = answer(payload)
    if output:
        try:
            sys.stdout.buffer.write(output.encode("utf-8", errors="replace") + b"\n")
            sys.stdout.flush()
        except Exception:  # a closed pipe: the host went away, nothing to break
            pass
    return 0
