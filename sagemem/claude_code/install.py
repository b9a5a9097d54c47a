"""``sagemem install claude-code``: the hooks, the MCP server and the skill, written into
Claude Code's own files, and taken out again.

Where Claude Code reads each (its settings and MCP documentation):

=========  ==================================  =====================================
scope      hooks and ``env``                   MCP servers (``mcpServers``)
=========  ==================================  =====================================
user       ``~/.claude/settings.json``         ``~/.claude.json`` (top level)
project    ``<project>/.claude/settings.json`` ``<project>/.mcp.json``
=========  ==================================  =====================================

MCP servers in ``settings.json`` are ignored by Claude Code, hence two files per scope.
Every hook runs the one command ``<sagemem> hook claude-code``; our entries are found
again by that command, so a second install changes nothing and an old hand-written one
(``sagemem hook claude-code``) is brought up to date in place.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import HostConfigError
from .changes import FileChange, read_backup, read_record, sha256
from .settings_file import (
    BOM,
    Document,
    Key,
    add_element,
    json_kind,
    parse_text,
    read_document,
    remove_element,
    remove_member,
    replace_value,
    set_member,
    value_at,
)
from .skill import SKILL_RELATIVE, shipped_skill, skill_status

Scope = Literal["user", "project"]
HOOK_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("UserPromptSubmit", None),  # every prompt: the memories that answer it
    ("SessionStart", "compact|clear"),  # the context was emptied: reset the session
    ("PreToolUse", "Write|Edit|MultiEdit"),  # the write gate, before a memory file changes
    ("PostToolUse", "Read|Write|Edit|MultiEdit"),  # what the model read, and wrote itself
)
HOOK_TIMEOUT_S = 10
"""Claude Code's per-hook ``timeout`` (seconds); the hook keeps to ``hook_budget_ms``
(5 s) well inside it, since a killed hook injects nothing."""
SERVER_NAME = "sagemem"
ENV_KEYS = ("SAGE_MEM_DIR", "SAGE_MEM_STATE_DIR")


@dataclass(frozen=True)
class Targets:
    """The three files one scope's install writes."""

    scope: Scope
    settings: Path
    mcp: Path
    skill: Path


def targets(scope: Scope, *, home: Path, project: Path) -> Targets:
    """Where Claude Code reads hooks, MCP servers and skills for ``scope``."""
    base = home if scope == "user" else project
    mcp = home / ".claude.json" if scope == "user" else project / ".mcp.json"
    return Targets(scope, followed(base / ".claude" / "settings.json"), followed(mcp),
                   followed(base / ".claude" / SKILL_RELATIVE))


def followed(path: Path) -> Path:
    """The file a symlink at ``path`` names, else ``path``: a dotfiles manager (stow,
    chezmoi) links ``settings.json`` into a repository, and replacing the link with an
    edited copy would cut the file off from it (and undo would not bring the link back)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@dataclass(frozen=True)
class Wiring:
    """What the entries run: ``command`` starts sagemem (an absolute path, so a virtual
    environment's sagemem is found without it on PATH), ``env`` names the folders."""

    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)

    def hook_command(self) -> str:
        return shlex.join([*self.command, "hook", "claude-code"])

    def hook_group(self, matcher: str | None) -> dict[str, Any]:
        hook = {"type": "command", "command": self.hook_command(), "timeout": HOOK_TIMEOUT_S}
        return {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}

    def server(self) -> dict[str, Any]:
        return {"type": "stdio", "command": self.command[0],
                "args": [*self.command[1:], "mcp"], "env": dict(self.env)}


def sagemem_command(argv0: str | None = None, python: str | None = None) -> tuple[str, ...]:
    """The running sagemem as an absolute command: the console script we run as, else
    the one beside this Python (a venv's bin/), else on PATH, else ``python -m sagemem``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    python = sys.executable if python is None else python
    script = Path(argv0)
    if script.name.startswith("sagemem") and script.suffix in ("", ".exe") \
            and script.is_file():
        return (os.path.abspath(script),)
    beside = Path(python).parent / ("sagemem.exe" if os.name == "nt" else "sagemem")
    if beside.is_file():
        return (str(beside),)
    found = shutil.which("sagemem")
    if found:
        return (os.path.abspath(found),)
    return (os.path.abspath(python), "-m", "sagemem")


def is_ours(group: object) -> bool:
    """A hook group whose command is ``… hook claude-code``: ours, whoever wrote it."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    for hook in group["hooks"]:
        command = hook.get("command") if isinstance(hook, dict) else None
        try:
            words = shlex.split(command) if isinstance(command, str) else []
        except ValueError:
            continue
        if words[-2:] == ["hook", "claude-code"]:
            return True
    return False


def holds_our_hooks(settings: Path) -> bool:
    """Whether a settings file has one of our hook groups (an unreadable one: no)."""
    try:
        hooks = value_at(read_document(settings).data, ("hooks",))
    except HostConfigError:
        return False
    return isinstance(hooks, dict) and any(
        isinstance(groups, list) and any(is_ours(g) for g in groups)
        for groups in hooks.values())


@dataclass(frozen=True)
class Plan:
    """The changes an install (or undo) makes, what it leaves alone and why, and (undo)
    the files whose backups and records it drops."""

    targets: Targets
    changes: tuple[FileChange, ...]
    notices: tuple[str, ...] = ()
    forget: tuple[Path, ...] = ()


def plan_install(where: Targets, wiring: Wiring, *, mcp: bool, skill: bool,
                 other: Targets | None = None) -> Plan:
    """Every change install would make; a file already wired the same is left out.
    ``other`` is the other scope: hooks there too would run twice on every prompt."""
    changes: list[FileChange] = []
    notices: list[str] = []
    if other is not None and other.settings != where.settings and \
            holds_our_hooks(other.settings):
        notices.append(f"{other.settings} holds sagemem's hooks too: every prompt would run "
                       f"the hook twice; keep one scope (sagemem install claude-code --undo "
                       f"--{other.scope})")
    _add(changes, read_document(where.settings), lambda d: _wire_settings(d, wiring),
         "hooks and env")
    if mcp:
        _add(changes, read_document(where.mcp), lambda d: _wire_server(d, wiring),
             "MCP server")
    if skill:
        status = skill_status(where.skill)
        if status.state in ("missing", "outdated"):
            changes.append(FileChange(where.skill, status.text, shipped_skill(), "skill"))
        elif status.state == "edited":
            notices.append(f"{where.skill} differs from this sagemem's skill (edited, or "
                           "not ours): left alone; remove it and install again to replace it")
    return Plan(where, tuple(changes), tuple(notices))


def _add(changes: list[FileChange], doc: Document, edit: Callable[[Document], str],
         what: str) -> None:
    after = edit(doc).encode("utf-8")
    if after != doc.raw:
        changes.append(FileChange(doc.path, doc.raw, after, what))


def _wire_settings(doc: Document, wiring: Wiring) -> str:
    _require_object(doc, ("hooks",))
    _require_object(doc, ("env",))
    text = doc.text
    for event, matcher in HOOK_EVENTS:
        text = _ensure_group(doc, text, event, wiring.hook_group(matcher))
    for key, value in wiring.env.items():
        text = _ensure(text, ("env",), key, value)
    return text


def _wire_server(doc: Document, wiring: Wiring) -> str:
    _require_object(doc, ("mcpServers",))
    return _ensure(doc.text, ("mcpServers",), SERVER_NAME, wiring.server())


def _require_object(doc: Document, path: tuple[Key, ...]) -> None:
    """Refuse a key holding something Claude Code would not read as we would write it."""
    value = value_at(doc.data, path)
    if value is not None and not isinstance(value, dict):
        raise HostConfigError(doc.path, f"has {'.'.join(map(str, path))} as a JSON "
                                        f"{json_kind(value)}, not an object")


def _ensure_group(doc: Document, text: str, event: str, group: dict[str, Any]) -> str:
    """``group`` in ``hooks.<event>``: appended, or our old entry replaced in place (a
    duplicate of ours removed: the hook would run twice)."""
    groups = value_at(_data(text), ("hooks", event))
    if groups is None:
        return set_member(text, ("hooks",), event, [group])
    if not isinstance(groups, list):
        raise HostConfigError(doc.path, f"has hooks.{event} as a JSON "
                                        f"{json_kind(groups)}, not an array")
    ours = [i for i, g in enumerate(groups) if is_ours(g)]
    if not ours:
        return add_element(text, ("hooks", event), group)
    for index in reversed(ours[1:]):
        text = remove_element(text, ("hooks", event), index)
    if groups[ours[0]] != group:
        text = replace_value(text, ("hooks", event, ours[0]), group)
    return text


def _ensure(text: str, path: tuple[Key, ...], key: str, value: Any) -> str:
    data = _data(text)
    if isinstance(value_at(data, path), dict) and value_at(data, (*path, key)) == value:
        return text
    return set_member(text, path, key, value)


def _data(text: str) -> Any:
    return json.loads(text.removeprefix(BOM)) if text.strip() else {}


# -- undo --------------------------------------------------------------------------------

def plan_undo(where: Targets) -> Plan:
    """What taking the install out would change: a file still as sagemem left it gets its
    backup back byte for byte (one sagemem created is removed); one changed since keeps
    the changes and loses only our entries; an edited skill is left alone."""
    changes: list[FileChange] = []
    notices: list[str] = []
    forget = [p for p in (where.settings, where.mcp, where.skill)
              if read_record(p) is not None or read_backup(p) is not None]
    for path, what, strip in ((where.settings, "hooks and env", _strip_settings),
                              (where.mcp, "MCP server", _strip_server),
                              (where.skill, "skill", None)):
        if path in forget:
            _undo_one(path, what, strip, changes, notices)
    return Plan(where, tuple(changes), tuple(notices), tuple(forget))


Strip = Callable[[str, Any], str]


def _undo_one(path: Path, what: str, strip: Strip | None, changes: list[FileChange],
              notices: list[str]) -> None:
    record, backup = read_record(path), read_backup(path)
    try:
        current: bytes | None = path.read_bytes()
    except FileNotFoundError:
        current = None
    if current is None:
        return
    if record is not None and record.sha256 == sha256(current) and \
            (record.created or backup is not None):
        changes.append(FileChange(path, current, None if record.created else backup, what))
        return
    if strip is None:
        notices.append(f"{path} changed since sagemem installed it: left as it is")
        return
    text, _ = parse_text(path, current)
    old = _data(backup.decode("utf-8", "replace")) if backup else {}
    after = strip(text, old).encode("utf-8")
    if after != current:
        changes.append(FileChange(path, current, after, what))


def _strip_settings(text: str, old: Any) -> str:
    """Our hook groups out, ``env`` keys back to what the backup had, and containers we
    created (now empty) out too."""
    for event, _ in HOOK_EVENTS:
        groups = value_at(_data(text), ("hooks", event))
        if isinstance(groups, list):
            for index in reversed([i for i, g in enumerate(groups) if is_ours(g)]):
                text = remove_element(text, ("hooks", event), index)
        text = _drop_if_new_and_empty(text, ("hooks",), event, old)
    text = _drop_if_new_and_empty(text, (), "hooks", old)
    for key in ENV_KEYS:
        text = _restore(text, ("env",), key, old)
    return _drop_if_new_and_empty(text, (), "env", old)


def _strip_server(text: str, old: Any) -> str:
    text = _restore(text, ("mcpServers",), SERVER_NAME, old)
    return _drop_if_new_and_empty(text, (), "mcpServers", old)


def _restore(text: str, path: tuple[Key, ...], key: str, old: Any) -> str:
    """``path.key`` back to its value in ``old`` (the backup), or out if it had none."""
    previous = value_at(old, (*path, key))
    if previous is not None:
        return _ensure(text, path, key, previous)
    if isinstance(value_at(_data(text), path), dict) and key in value_at(_data(text), path):
        return remove_member(text, path, key)
    return text


def _drop_if_new_and_empty(text: str, path: tuple[Key, ...], key: str, old: Any) -> str:
    value = value_at(_data(text), (*path, key))
    if value in ({}, []) and value_at(old, (*path, key)) is None:
        return remove_member(text, path, key)
    return text
