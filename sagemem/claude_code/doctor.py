"""``sagemem doctor``: what is wired where, whether it works, and what to do if not — and
it changes nothing while finding out.

It reads Claude Code's files for both scopes and names every hook that runs sagemem
(``owned.runs_sagemem``; typos included), then runs each distinct such command as Claude
Code would (through the shell, with the settings' ``env``, ``$CLAUDE_PROJECT_DIR``, a
sample ``UserPromptSubmit`` payload on stdin, killed at its timeout) against a throwaway
copy of the state directory (``sandbox.py``), so the ledger, the sessions' seen records
and the index stay as they were. A broken entry is named with its file and JSON path and
the edit that fixes it: install replaces only the hook objects it recorded, so "run
install" cannot repair an entry someone else wrote. The memory folder's index and
embeddings are judged from the copy before the probe runs (``folder_health.py``).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import load_settings, resolve_dirs
from ..errors import HostConfigError, SagememError
from .findings import Finding, healthy
from .folder_health import memory_findings
from .install import (
    HOOK_EVENTS,
    SERVER_NAME,
    Targets,
    recorded_hooks,
    sagemem_hooks,
    targets,
)
from .owned import FoundHook, hooks_in, runs_sagemem
from .probe import DOCTOR_SESSION, run_hook
from .sandbox import global_copy, state_copy
from .settings_file import read_document, value_at
from .skill import skill_status
from .wiring import PROJECT_ROOT

__all__ = ["DOCTOR_SESSION", "Finding", "diagnose", "healthy"]

LOCAL_SETTINGS = "settings.local.json"  # a project's personal settings, never committed


@dataclass(frozen=True)
class Wired:
    """One scope's hooks that run sagemem, which of them install wrote, and its env."""

    where: Targets
    hooks: tuple[FoundHook, ...]
    recorded: tuple[dict[str, Any], ...]
    env: Mapping[str, str]
    data: Any = None
    """The settings file's value, for the groups around the hooks (their matchers)."""

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(e for e, _ in HOOK_EVENTS if any(h.event == e for h in self.hooks))

    def installed(self, hook: FoundHook) -> bool:
        return hook.hook in self.recorded


def diagnose(*, home: Path, project: Path, env: Mapping[str, str],
             run_hook: bool = True) -> list[Finding]:
    """Every finding, problems with what to do; ``env`` is the environment Claude Code
    would start with (the settings' ``env`` is laid over it). Nothing is written."""
    findings: list[Finding] = []
    scopes = [targets("user", home=home, project=project)]
    if project != home:
        scopes.append(targets("project", home=home, project=project))
    wired = [w for w in (_hooks(t, findings) for t in scopes) if w is not None]
    unreadable = any(f.topic == "hooks" for f in findings)
    local = _local_hooks(project) if project != home else []
    findings += _wiring_summary(wired, unreadable or bool(local))
    findings += _local_findings(project, local, wired)
    for w in wired:
        findings += _duplicates(w) + _unmatched(w)
    if wired:
        findings += _all_hooks_off(scopes, project)
    for where in scopes:
        findings += _server(where) + _skill(where, wired)
    findings.append(_mcp_extra(served=any(_serves(where) for where in scopes)))
    if wired:
        merged = {**env, **wired[-1].env}  # project settings win over the user's
        findings += _folder_and_probe(wired, merged, project, run_hook)
    return findings


def _hooks(where: Targets, findings: list[Finding]) -> Wired | None:
    """The scope's settings, read: None when no hook in them runs sagemem."""
    try:
        doc = read_document(where.settings)
    except HostConfigError as exc:
        findings.append(_unreadable("hooks", exc))
        return None
    hooks = tuple(sagemem_hooks(doc.data))
    if not hooks:
        return None
    env = value_at(doc.data, ("env",))
    env = {k: str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    recorded = tuple(o.hook for o in recorded_hooks(doc, where.records))
    return Wired(where, hooks, recorded, env, doc.data)


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
        if missing and not _by_hand_beside(w, wired):
            found.append(Finding("problem", "hooks", f"{w.where.settings} lacks "
                                 f"{', '.join(missing)}", _install(w.where)))
    if len(wired) > 1:
        by_hand = [_remove(w.where, list(w.hooks)) for w in wired if _by_hand_beside(w, wired)]
        found.append(Finding("problem", "hooks", "both the user's and the project's settings "
                             "hold the hooks: every prompt runs the hook twice",
                             "; ".join(by_hand) or
                             "sagemem install claude-code --undo --project (or --user)"))
    return found


def _by_hand_beside(w: Wired, wired: list[Wired]) -> bool:
    """Whether ``w``'s sagemem hooks were all written by hand while the other scope holds
    an install: they are to be deleted — installing there too would run the hook twice,
    and undo takes out only what install wrote (review 4: doctor named both)."""
    return not w.recorded and any(o.recorded for o in wired if o is not w)


def _local_hooks(project: Path) -> list[FoundHook]:
    """The hooks of the project's ``settings.local.json`` (personal, never committed) that
    run sagemem: Claude Code runs them beside the other files' hooks."""
    try:
        data = read_document(project / ".claude" / LOCAL_SETTINGS).data
    except HostConfigError:
        return []
    return sagemem_hooks(data)


def _local_findings(project: Path, local: list[FoundHook], wired: list[Wired]
                    ) -> list[Finding]:
    """sagemem's hooks in ``settings.local.json``, which install neither writes nor
    takes out: beside an install they run the hook twice on every prompt; alone they
    work, and "run install" would double them."""
    if not local:
        return []
    path = project / ".claude" / LOCAL_SETTINGS
    listed = ", ".join(f"{h.where()} (`{h.command}`)" for h in local)
    delete = f"delete {', '.join(h.where() for h in local)} from {path}"
    if wired:
        return [Finding("problem", "hooks", f"{path} runs sagemem too: {listed}; with "
                        f"{' and '.join(str(w.where.settings) for w in wired)} every prompt "
                        "runs the hook twice", delete)]
    return [Finding("note", "hooks", f"{path} runs sagemem: {listed}; install and doctor "
                    "look after settings.json, not this personal file",
                    f"{delete}; then sagemem install claude-code")]


def _all_hooks_off(scopes: list[Targets], project: Path) -> list[Finding]:
    """``"disableAllHooks": true`` in any settings file Claude Code reads (a project's
    ``settings.local.json`` too): then it runs no hook at all — no memories before an
    answer, no write gate — however well every entry is wired."""
    files = [*dict.fromkeys(t.settings for t in scopes),
             project / ".claude" / LOCAL_SETTINGS]
    found = []
    for path in files:
        try:
            data = read_document(path).data
        except HostConfigError:
            continue  # a settings file that cannot be read is reported already
        if data.get("disableAllHooks") is True:
            found.append(Finding("problem", "hooks", f"{path} sets disableAllHooks: Claude "
                                 "Code runs no hook at all, sagemem's included",
                                 f"remove disableAllHooks from {path}"))
    return found


def _duplicates(w: Wired) -> list[Finding]:
    """An event whose hooks run sagemem more than once (an old hand-written entry beside
    install's): each run injects again. The fix names the entries install did not write."""
    found = []
    for event, _ in HOOK_EVENTS:
        hooks = [h for h in w.hooks if h.event == event]
        if len(hooks) < 2:
            continue
        extra = [h for h in hooks if not w.installed(h)] or hooks[:-1]
        listed = ", ".join(f"{h.where()} (`{h.command}`)" for h in hooks)
        found.append(Finding("problem", "hooks", f"{w.where.settings} runs sagemem "
                             f"{len(hooks)} times on {event}: {listed}",
                             _remove(w.where, extra)))
    return found


MISSED = {"SessionStart": "the session is not reset when the context is emptied",
          "PreToolUse": "the write gate (the Bash guard, for Bash) never checks those writes",
          "PostToolUse": "what the model reads and writes there is never recorded, so the "
                         "write gate lets every write through"}
"""What a sagemem hook whose group's matcher leaves a tool (a source) out stops doing."""


def _unmatched(w: Wired) -> list[Finding]:
    """An event whose sagemem hooks all sit under a matcher that leaves out a tool (or a
    ``SessionStart`` source) install's matcher names: a ``PreToolUse`` group edited to
    ``Write`` never gates an Edit, a ``PostToolUse`` one without ``Read`` never records a
    read — every entry still looks wired and install, finding its hook, changes nothing.
    The fix is the matcher edit (widened only, when the group runs other hooks too)."""
    found = []
    for event, wanted in HOOK_EVENTS:
        hooks = [h for h in w.hooks if h.event == event]
        if wanted is None or not hooks:
            continue
        missed = [n for n in wanted.split("|")
                  if not any(_matches(_matcher(w.data, h), n) for h in hooks)]
        if not missed:
            continue
        hook = next((h for h in hooks if w.installed(h)), hooks[0])
        matcher, group = _matcher(w.data, hook), hook.place[0]
        alone = all(runs_sagemem(h.command) for h in hooks_in(w.data, event)
                    if h.place[0] == group)
        widened = wanted if alone or not matcher else f"{matcher}|{'|'.join(missed)}"
        found.append(Finding("problem", "hooks", f"{w.where.settings}: hooks.{event}"
                             f"[{group}] matches {json.dumps(matcher)}, so sagemem never "
                             f"runs on {', '.join(missed)}: {MISSED[event]}",
                             f"set hooks.{event}[{group}].matcher to "
                             f"{json.dumps(widened)} in {w.where.settings}"))
    return found


def _matcher(data: Any, hook: FoundHook) -> str | None:
    group = value_at(data, ("hooks", hook.event, hook.place[0]))
    matcher = group.get("matcher") if isinstance(group, dict) else None
    return matcher if isinstance(matcher, str) else None


def _matches(matcher: str | None, name: str) -> bool:
    """Whether Claude Code runs a group with ``matcher`` for ``name``: no matcher, ``""``
    or ``*`` for all; names joined by ``|`` exactly; anything else as a regex."""
    if not matcher or matcher == "*":
        return True
    if re.fullmatch(r"[\w|]+", matcher):
        return name in matcher.split("|")
    try:
        return re.search(matcher, name) is not None
    except re.error:
        return False


def _remove(where: Targets, hooks: list[FoundHook]) -> str:
    """The edit, spelt for a person: which JSON entries to delete from which file."""
    entries = ", ".join(h.where() for h in hooks)
    return f"delete {entries} from {where.settings}"


def _install(where: Targets) -> str:
    return f"sagemem install claude-code --{where.scope}"


def _server(where: Targets) -> list[Finding]:
    try:
        server = value_at(read_document(where.mcp).data, ("mcpServers", SERVER_NAME))
    except HostConfigError as exc:
        return [_unreadable("mcp", exc)]
    if not isinstance(server, dict):
        return []
    command, args = server.get("command"), server.get("args", [])
    shown = " ".join(map(str, [command, *(args if isinstance(args, list) else [args])]))
    if not isinstance(command, str) or not command.strip():
        return [Finding("problem", "mcp", f"{where.mcp}: mcpServers.{SERVER_NAME} names no "
                        "command: Claude Code cannot start it", _install(where))]
    if "$" not in command and shutil.which(command) is None:  # ${VAR}: Claude Code's
        return [Finding("problem", "mcp", f"{where.mcp} runs the MCP server ({shown}), but "
                        f"{command} is not found: Claude Code shows the server as failed",
                        _install(where))]
    return [Finding("ok", "mcp", f"{where.mcp} runs the MCP server ({shown})")]


def _skill(where: Targets, wired: list[Wired]) -> list[Finding]:
    status = skill_status(where.skill, where.records)
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


def _serves(where: Targets) -> bool:
    """Whether the scope's MCP file has an entry for sagemem's server."""
    try:
        return value_at(read_document(where.mcp).data, ("mcpServers", SERVER_NAME)) is not None
    except HostConfigError:
        return False


def _mcp_extra(*, served: bool) -> Finding:
    """Without the extra there is no server: a note, unless an entry starts one anyway
    (installed with the extra, which has gone since) — then Claude Code shows it failed."""
    if importlib.util.find_spec("mcp") is not None:
        return Finding("ok", "mcp", "the mcp extra is installed")
    if served:
        return Finding("problem", "mcp", "an entry starts sagemem's MCP server, but the mcp "
                       "extra is not installed: the server cannot start",
                       "pip install 'sagemem[mcp]'")
    return Finding("note", "mcp", "the mcp extra is not installed: no MCP server",
                   "pip install 'sagemem[mcp]', then sagemem install claude-code")


# -- the memory folder and the probe, both against a copy of the state directory --------

def _folder_and_probe(wired: list[Wired], env: Mapping[str, str], project: Path,
                      run_hook: bool) -> list[Finding]:
    try:
        memory_dir, state_dir, _ = resolve_dirs(env, None, None, cwd=project)
    except SagememError as exc:
        return [Finding("problem", "memory", str(exc))]
    with state_copy(state_dir) as copy:
        found = memory_findings(memory_dir, state_dir, copy, env)
        if run_hook:
            probe_env = {**env, "SAGE_MEM_STATE_DIR": str(copy), PROJECT_ROOT: str(project)}
            global_copy(copy, _global_layer(probe_env, memory_dir, copy))
            found += _probe_all(wired, probe_env, project)
    return found


def _global_layer(env: Mapping[str, str], memory_dir: Path, copy: Path) -> Path | None:
    """The global layer's folder the hook would read (None: off, or settings it cannot
    read, when the hook reads no layer at all)."""
    from ..layers.stack import global_folder

    try:
        return global_folder(load_settings(env, memory_dir, copy))[0]
    except SagememError:
        return None


def _probe_all(wired: list[Wired], env: Mapping[str, str], project: Path) -> list[Finding]:
    """Each distinct command once; a failing one names every entry that runs it."""
    by_command: dict[str, list[tuple[Wired, FoundHook]]] = {}
    for w in wired:
        for hook in w.hooks:
            by_command.setdefault(hook.command, []).append((w, hook))
    found = []
    for entries in by_command.values():
        w, first = entries[0]
        finding = run_hook(first.hook, {**env, **w.env, **_sandboxed(env)}, project)
        if finding.level == "problem":
            finding = Finding("problem", "hook", finding.message + "; run by " + "; ".join(
                f"{h.where()} in {e.where.settings}" for e, h in entries),
                _repair(entries, wired) or finding.fix)
        found.append(finding)
    return found


def _sandboxed(env: Mapping[str, str]) -> dict[str, str]:
    """The probe's own keys, kept over the settings' env (which names the real state)."""
    return {k: env[k] for k in ("SAGE_MEM_STATE_DIR", PROJECT_ROOT)}


def _repair(entries: list[tuple[Wired, FoundHook]], wired: list[Wired]) -> str:
    """The fix of a failing command: install rewrites the objects it recorded; any other
    entry is deleted by hand, and install then adds its own where none is left (unless
    the other scope holds the install)."""
    fixes, scopes = [], []
    for w, hook in entries:
        if w.installed(hook):
            scopes.append(w.where)
        else:
            fixes.append(_remove(w.where, [hook]))
            if not any(w.installed(h) for h in w.hooks if h.event == hook.event) and \
                    not _by_hand_beside(w, wired):
                scopes.append(w.where)
    installs = dict.fromkeys(_install(s) for s in scopes)
    return "; then ".join([*dict.fromkeys(fixes), *installs])
