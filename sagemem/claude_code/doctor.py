"""``sagemem doctor``: what is wired where, whether it works, and what to do if not.

It reads Claude Code's files for both scopes, runs the hook command it finds exactly as
Claude Code would (through the shell, with the settings' ``env``, a sample
``UserPromptSubmit`` payload on stdin, killed at the settings' timeout), and checks the
memory folder those settings point at. It changes nothing of Claude Code's; the hook run
does what a prompt does (a session named ``sagemem-doctor`` in the state directory).
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import time
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import resolve_dirs
from ..errors import HostConfigError, SagememError
from ..files.folder import MemoryFolder
from .install import HOOK_EVENTS, HOOK_TIMEOUT_S, SERVER_NAME, Targets, is_ours, targets
from .settings_file import read_document, value_at
from .skill import skill_status

Level = Literal["ok", "note", "problem"]
DOCTOR_SESSION = "sagemem-doctor"
SAMPLE_PROMPT = "sagemem doctor: does the prompt hook answer?"


@dataclass(frozen=True)
class Finding:
    level: Level
    topic: str
    message: str
    fix: str = ""


@dataclass(frozen=True)
class Wired:
    """One scope's hooks as found: the events wired, the hook entry, the settings' env."""

    where: Targets
    events: tuple[str, ...]
    hook: Mapping[str, Any] | None
    env: Mapping[str, str]


def diagnose(*, home: Path, project: Path, env: Mapping[str, str],
             run_hook: bool = True) -> list[Finding]:
    """Every finding, problems with what to do; ``env`` is the environment Claude Code
    would start with (the settings' ``env`` is laid over it)."""
    findings: list[Finding] = []
    scopes = [targets("user", home=home, project=project)]
    if project != home:
        scopes.append(targets("project", home=home, project=project))
    wired = [w for w in (_hooks(t, findings) for t in scopes) if w is not None]
    unreadable = any(f.topic == "hooks" for f in findings)
    findings += _wiring_summary(wired, unreadable)
    for where in scopes:
        findings += _server(where) + _skill(where, wired)
    findings.append(_mcp_extra())
    if wired:
        merged = {**env, **wired[-1].env}  # project settings win over the user's
        if run_hook and wired[-1].hook is not None:
            findings += _run_hook(wired[-1].hook, merged, project, wired[-1].where)
        findings += _memory_folder(merged)
    return findings


def _hooks(where: Targets, findings: list[Finding]) -> Wired | None:
    """The scope's settings, read: None when they hold none of our hooks."""
    try:
        doc = read_document(where.settings)
    except HostConfigError as exc:
        findings.append(_unreadable("hooks", exc))
        return None
    events, hook = [], None
    for event, _ in HOOK_EVENTS:
        groups = value_at(doc.data, ("hooks", event))
        ours = [g for g in groups if is_ours(g)] if isinstance(groups, list) else []
        if ours:
            events.append(event)
            hook = hook or next(h for h in ours[0]["hooks"] if isinstance(h, dict))
    if not events:
        return None
    env = value_at(doc.data, ("env",))
    env = {k: str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    return Wired(where, tuple(events), hook, env)


def _unreadable(topic: str, exc: HostConfigError) -> Finding:
    """A file install would refuse too: said without install's "nothing was changed"."""
    return Finding("problem", topic, f"{exc.path} {exc.problem}", "fix the file by hand")


def _wiring_summary(wired: list[Wired], unreadable: bool = False) -> list[Finding]:
    """Where the hooks are; "nothing wired" is left unsaid when a settings file could not
    be read (that problem is already reported, and install would refuse the file too)."""
    if not wired and unreadable:
        return []
    if not wired:
        return [Finding("problem", "hooks", "no Claude Code settings file holds sagemem's "
                        "hooks", "sagemem install claude-code")]
    found = []
    for w in wired:
        missing = [e for e, _ in HOOK_EVENTS if e not in w.events]
        found.append(Finding("ok", "hooks", f"{w.where.settings} ({', '.join(w.events)})"))
        if missing:
            found.append(Finding("problem", "hooks", f"{w.where.settings} lacks "
                                 f"{', '.join(missing)}", _install(w.where)))
    if len(wired) > 1:
        found.append(Finding("problem", "hooks", "both the user's and the project's settings "
                             "hold the hooks: every prompt runs the hook twice",
                             "sagemem install claude-code --undo --project (or --user)"))
    return found


def _install(where: Targets) -> str:
    return f"sagemem install claude-code --{where.scope}"


def _server(where: Targets) -> list[Finding]:
    try:
        server = value_at(read_document(where.mcp).data, ("mcpServers", SERVER_NAME))
    except HostConfigError as exc:
        return [_unreadable("mcp", exc)]
    if isinstance(server, dict):
        return [Finding("ok", "mcp", f"{where.mcp} runs the MCP server "
                        f"({server.get('command', '?')} {' '.join(server.get('args', []))})")]
    return []


def _skill(where: Targets, wired: list[Wired]) -> list[Finding]:
    status = skill_status(where.skill)
    if status.state == "current":
        return [Finding("ok", "skill", f"{where.skill} (current)")]
    if status.state == "outdated":
        return [Finding("problem", "skill", f"{where.skill} is an older sagemem's skill",
                        _install(where))]
    if status.state == "edited":
        return [Finding("note", "skill", f"{where.skill} differs from this sagemem's "
                        "skill (edited by hand?)")]
    if any(w.where.scope == where.scope for w in wired):
        return [Finding("note", "skill", f"no skill at {where.skill}", _install(where))]
    return []


def _mcp_extra() -> Finding:
    if importlib.util.find_spec("mcp") is not None:
        return Finding("ok", "mcp", "the mcp extra is installed")
    return Finding("note", "mcp", "the mcp extra is not installed: no MCP server",
                   "pip install 'sagemem[mcp]', then sagemem install claude-code")


def _run_hook(hook: Mapping[str, Any], env: Mapping[str, str], project: Path,
              where: Targets) -> list[Finding]:
    """Run the hook command as Claude Code does and judge its answer and its time."""
    command = str(hook.get("command", ""))
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
        return [Finding("problem", "hook", f"`{command}` ran past its {timeout} s timeout: "
                        "Claude Code kills it and injects nothing",
                        "lower hook_budget_ms, or run `sagemem index` once")]
    spent = time.monotonic() - started
    if done.returncode != 0:
        said = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        return [Finding("problem", "hook", f"`{command}` exits {done.returncode}"
                        + (f" ({said})" if said else ""),
                        f"{_install(where)} (writes the path of this sagemem)")]
    return [_judge_output(done.stdout, command, spent, timeout)]


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
    return Finding("ok", "hook", f"the hook answers in {spent * 1000:.0f} ms "
                   f"(timeout {timeout} s)")


def _memory_folder(env: Mapping[str, str]) -> list[Finding]:
    """The folder the hooks use exists and its search index is up to date."""
    try:
        memory_dir, state_dir, _ = resolve_dirs(env, None, None)
    except SagememError as exc:
        return [Finding("problem", "memory", str(exc))]
    if not memory_dir.is_dir():
        return [Finding("problem", "memory", f"memory directory {memory_dir} does not exist",
                        f"sagemem init {memory_dir}")]
    folder = MemoryFolder(memory_dir, state_dir)
    found = [Finding("ok", "memory", f"memory directory {memory_dir}")]
    stale = _unindexed(folder)
    if stale is None:
        found.append(Finding("problem", "index", "the search index was never built",
                             "sagemem index"))
    elif stale:
        found.append(Finding("note", "index", f"{stale} memory files not indexed yet "
                             "(the hook indexes within its budget)", "sagemem index"))
    else:
        found.append(Finding("ok", "index", "the search index is up to date"))
    return found


def _unindexed(folder: MemoryFolder) -> int | None:
    """How many memory files differ from the index (read only); None: no index yet."""
    from ..search.index import index_path
    from ..search.sync import stat_pass

    path = index_path(folder)
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            rows = conn.execute("SELECT name, mtime_ns, size, inode FROM files").fetchall()
    except sqlite3.Error:
        return None
    indexed = {name: (mtime, size, inode) for name, mtime, size, inode in rows}
    listing = stat_pass(folder, archived=False)
    return sum(1 for name, stats in listing.items() if indexed.get(name) != stats)


def healthy(findings: list[Finding]) -> bool:
    return not any(f.level == "problem" for f in findings)

