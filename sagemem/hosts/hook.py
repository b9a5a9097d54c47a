"""``sagemem hook gemini`` and ``sagemem hook codex``: each host's payload translated to
the Claude Code hook's (``claude_code.hook.claude_code``), and its answer back, so every
host gets the same memories by the same code.

Gemini CLI (https://geminicli.com/docs/hooks/reference) calls the prompt event
``BeforeAgent`` (its ``prompt`` field as Claude Code's) and appends
``hookSpecificOutput.additionalContext`` to the prompt; its ``SessionStart`` carries
``source`` ``clear`` as Claude Code's does. Codex (https://developers.openai.com/codex/hooks)
uses Claude Code's names and output for ``UserPromptSubmit`` and ``SessionStart``; only
those two are passed on: Codex's tools (``Bash``, ``apply_patch``) are not the file tools
the write gate knows, so a tool event is answered with nothing. As for Claude Code, a
hook never fails the user's prompt: anything unexpected prints nothing and exits 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..claude_code.hook import MAX_STDIN_BYTES, claude_code, run_stdin_hook

GEMINI_EVENTS = {"BeforeAgent": "UserPromptSubmit", "SessionStart": "SessionStart"}
CODEX_EVENTS = {"UserPromptSubmit": "UserPromptSubmit", "SessionStart": "SessionStart"}
Adapter = Callable[..., str]


def gemini(payload: bytes, env: Mapping[str, str] | None = None, *,
           memory_dir: Path | None = None, state_dir: Path | None = None) -> str:
    """What to print for one Gemini CLI hook call ("" for nothing); never raises."""
    return _translated(payload, GEMINI_EVENTS, env, memory_dir, state_dir)


def codex(payload: bytes, env: Mapping[str, str] | None = None, *,
          memory_dir: Path | None = None, state_dir: Path | None = None) -> str:
    """What to print for one Codex hook call ("" for nothing); never raises."""
    return _translated(payload, CODEX_EVENTS, env, memory_dir, state_dir)


def _translated(payload: bytes, events: dict[str, str], env: Mapping[str, str] | None,
                memory_dir: Path | None, state_dir: Path | None) -> str:
    data = _object(payload)
    if data is None:  # not one we can read: Claude Code's hook logs why, answers nothing
        return claude_code(payload, env, memory_dir=memory_dir, state_dir=state_dir)
    host_event = data.get("hook_event_name")
    ours = events.get(host_event) if isinstance(host_event, str) else None
    if ours is None or not isinstance(host_event, str):
        return ""
    translated = json.dumps({**data, "hook_event_name": ours}).encode("utf-8")
    answer = claude_code(translated, env, memory_dir=memory_dir, state_dir=state_dir)
    return _renamed(answer, host_event) if answer else ""


def _object(payload: bytes) -> dict[str, Any] | None:
    if len(payload) > MAX_STDIN_BYTES:
        return None
    try:
        data = json.loads(payload.decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _renamed(answer: str, host_event: str) -> str:
    """The answer under the host's own event name (its validator checks it)."""
    data = json.loads(answer)
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict) and "hookEventName" in specific:
        specific["hookEventName"] = host_event
    return json.dumps(data, ensure_ascii=False)


def run_host_hook(adapter: Adapter, memory_dir: Path | None = None,
                  state_dir: Path | None = None) -> int:
    """Read the payload from stdin, print the adapter's answer, return 0 whatever."""
    return run_stdin_hook(lambda data: adapter(data, memory_dir=memory_dir,
                                               state_dir=state_dir))
