"""Running one hook command as Claude Code does, for ``doctor``: through the shell, with a
sample ``UserPromptSubmit`` payload on stdin and the settings' ``env``, killed at its
timeout, and judged on its answer (the JSON Claude Code reads) and its time.

The caller hands an environment whose state directory is a throwaway copy
(``sandbox.py``); a command that names its own state directory is therefore not run at
all, since the copy could not stand in for it (doctor changes nothing).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .findings import Finding
from .wiring import HOOK_TIMEOUT_S

DOCTOR_SESSION = "sagemem-doctor"
SAMPLE_PROMPT = "sagemem doctor: does the prompt hook answer?"


def run_hook(hook: Mapping[str, Any], env: Mapping[str, str], project: Path) -> Finding:
    """Run the hook command as Claude Code does and judge its answer and its time."""
    command = str(hook.get("command", ""))
    if _names_its_state(_words(command)):
        return Finding("note", "hook", f"`{command}` names its own state directory: not run "
                       "(doctor changes nothing)")
    timeout = hook.get("timeout", HOOK_TIMEOUT_S)
    timeout = timeout if isinstance(timeout, (int, float)) and timeout > 0 else 60
    payload = json.dumps({"session_id": DOCTOR_SESSION, "transcript_path": "",
                          "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": SAMPLE_PROMPT}).encode()
    started = time.monotonic()
    try:
        done = subprocess.run(command, shell=True, input=payload, capture_output=True,
                              timeout=timeout, env=dict(env), cwd=project)
    except subprocess.TimeoutExpired:
        return Finding("problem", "hook", f"`{command}` ran past its {timeout} s timeout: "
                       "Claude Code kills it and injects nothing",
                       "lower hook_budget_ms, or run `sagemem index` once")
    spent = time.monotonic() - started
    if done.returncode != 0:
        said = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        blocks = " — exit 2 blocks every prompt" if done.returncode == 2 else ""
        return Finding("problem", "hook", f"`{command}` exits {done.returncode}{blocks}"
                       + (f" ({said})" if said else ""), "sagemem install claude-code")
    return _judge_output(done.stdout, command, spent, timeout)


def _names_its_state(words: list[str]) -> bool:
    """Whether the command picks its own state directory, which the probe's copy cannot
    stand in for: ``--state-dir X``, ``--state-dir=X`` (click takes both) or the variable
    set in the command itself (``SAGE_MEM_STATE_DIR=X sagemem …``, ``env``, ``export``)."""
    return any(w == "--state-dir" or w.startswith("--state-dir=")
               or w.partition("=")[0] == "SAGE_MEM_STATE_DIR" for w in words)


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _judge_output(stdout: bytes, command: str, spent: float, timeout: float) -> Finding:
    text = stdout.decode("utf-8", "replace").strip()
    if text:
        try:
            json.loads(text)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return Finding("problem", "hook", f"`{command}` printed something Claude Code "
                           f"cannot use: {text[:120]!r}", "see <state>/logs/hook.log")
    if spent > timeout / 2:
        return Finding("problem", "hook", f"the hook took {spent:.1f} s of its {timeout} s "
                       "timeout", "run `sagemem index` once; lower hook_budget_ms")
    return Finding("ok", "hook", f"`{command}` answers in {spent * 1000:.0f} ms "
                   f"(timeout {timeout} s)")
