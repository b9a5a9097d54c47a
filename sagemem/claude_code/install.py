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
Each hook event gets a group of sagemem's own; the hook objects install wrote are
recorded (``changes.py``) and found again by that record alone (``owned.py``), so a second
install changes nothing, an upgrade replaces exactly our objects, and every hook of
anyone else — in a group beside ours or in the same group — is never touched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import HostConfigError
from .changes import (
    RECORDS_DIR,
    FileChange,
    OwnedHook,
    Record,
    read_backup,
    read_record,
    sha256,
)
from .owned import (
    FoundHook,
    find,
    hooks_in,
    legacy_hooks,
    remove_owned_hooks,
    runs_sagemem,
)
from .settings_file import (
    Document,
    Key,
    add_element,
    json_kind,
    parse_text,
    parsed,
    read_document,
    remove_member,
    replace_value,
    set_member,
    value_at,
)
from .skill import SKILL_RELATIVE, shipped_skill, skill_status
from .wiring import HOOK_TIMEOUT_S as HOOK_TIMEOUT_S
from .wiring import Wiring

Scope = Literal["user", "project"]
HOOK_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("UserPromptSubmit", None),  # every prompt: the memories that answer it
    ("SessionStart", "compact|clear"),  # the context was emptied: reset the session
    ("PreToolUse", "Write|Edit|MultiEdit|Bash"),  # the write gate and the Bash guard
    ("PostToolUse", "Read|Write|Edit|MultiEdit"),  # what the model read, and wrote itself
)
FORMER_MATCHERS: dict[str, tuple[str, ...]] = {"PreToolUse": ("Write|Edit|MultiEdit",)}
"""Matchers earlier installs wrote: a group of ours still holding one is brought up to
``HOOK_EVENTS``' by installing again (before the Bash guard, PreToolUse left Bash out).
A matcher edited to anything else is the user's, and is left for doctor to report."""
SERVER_NAME = "sagemem"
ENV_KEYS = ("SAGE_MEM_DIR", "SAGE_MEM_STATE_DIR")
NO_MCP_EXTRA = ("MCP server not installed: the mcp extra is missing "
                "(pip install 'sagemem[mcp]', then install again)")


@dataclass(frozen=True)
class Targets:
    """The three files one scope's install writes, and the folder of its records."""

    scope: Scope
    settings: Path
    mcp: Path
    skill: Path
    records: Path


def targets(scope: Scope, *, home: Path, project: Path) -> Targets:
    """Where Claude Code reads hooks, MCP servers and skills for ``scope``."""
    base = home if scope == "user" else project
    mcp = home / ".claude.json" if scope == "user" else project / ".mcp.json"
    return Targets(scope, followed(base / ".claude" / "settings.json"), followed(mcp),
                   followed(base / ".claude" / SKILL_RELATIVE), base / ".claude" / RECORDS_DIR)


def followed(path: Path) -> Path:
    """The file a symlink at ``path`` names, else ``path``: a dotfiles manager (stow,
    chezmoi) links ``settings.json`` into a repository, and replacing the link with an
    edited copy would cut the file off from it (and undo would not bring the link back)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def recorded_hooks(doc: Document, records: Path) -> tuple[OwnedHook, ...]:
    """The hook objects install wrote to this file, as its record says (an older record
    without them: the exact groups such an install wrote)."""
    return _owned_by(read_record(doc.path, records), doc.data)


def _owned_by(record: Record | None, data: Any) -> tuple[OwnedHook, ...]:
    if record is None:
        return ()
    if record.hooks is not None:
        return record.hooks
    former = tuple((e, m) for e, ms in FORMER_MATCHERS.items() for m in ms)
    return legacy_hooks(data, HOOK_EVENTS + former)


def _twice(other: Targets) -> str:
    """The other scope runs sagemem too: undo there takes out only what install wrote
    (its record), so a hook written by hand needs deleting by hand (review 4: the note
    named an undo that left it)."""
    try:
        installed = bool(recorded_hooks(read_document(other.settings), other.records))
    except HostConfigError:
        installed = False
    if installed:
        return (f"{other.settings} holds sagemem's hooks too: every prompt would run the "
                f"hook twice; keep one scope (sagemem install claude-code --undo "
                f"--{other.scope})")
    return _by_hand(other.settings)


def _by_hand(settings: Path) -> str:
    return (f"{settings} runs sagemem's hook too (written by hand): every prompt "
            "would run it twice; delete those entries (sagemem doctor names them)")


def _runs_sagemem(settings: Path) -> bool:
    """Whether a settings file holds a hook that runs sagemem (an unreadable file: no)."""
    try:
        data = read_document(settings).data
    except HostConfigError:
        return False
    return bool(sagemem_hooks(data))


def sagemem_hooks(data: Any) -> list[FoundHook]:
    """The hooks of sagemem's events that run sagemem, however written (named to a
    person, never taken over: ``owned.runs_sagemem``)."""
    return [h for e, _ in HOOK_EVENTS for h in hooks_in(data, e) if runs_sagemem(h.command)]


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
    if where.scope == "project" and other is not None and _same_base(where, other):
        raise HostConfigError(where.settings, "is your user settings, read in every project "
                              "(the current directory is your home): a project's hooks "
                              "there would look for the memory folder under "
                              "$CLAUDE_PROJECT_DIR in every other project; run install "
                              "--project in the project's folder, or install --user")
    if other is not None and other.settings != where.settings and _runs_sagemem(other.settings):
        notices.append(_twice(other))
    project = where if where.scope == "project" else other
    local = project.records.parent / "settings.local.json" if project is not None else None
    if local is not None and _runs_sagemem(local):  # personal, never ours to change
        notices.append(_by_hand(local))
    doc = read_document(where.settings)
    text, owned = _wire_settings(doc, wiring, recorded_hooks(doc, where.records))
    notices += _strangers(doc.path, _data(text), owned, wiring.hook())
    _add(changes, doc, text, "hooks and env", owned)
    if mcp:
        doc = read_document(where.mcp)
        _add(changes, doc, _wire_server(doc, wiring), "MCP server")
    else:
        notices.append(NO_MCP_EXTRA)
    if skill:
        status = skill_status(where.skill, where.records)
        if status.state in ("missing", "outdated"):
            changes.append(FileChange(where.skill, status.text, shipped_skill(), "skill"))
        elif status.state == "edited":
            notices.append(f"{where.skill} differs from this sagemem's skill (edited, or "
                           "not ours): left alone; remove it and install again to replace it")
    return Plan(where, tuple(changes), tuple(notices))


def _same_base(one: Targets, other: Targets) -> bool:
    """Whether two scopes' files are the same ones (a project install run in the home)."""
    return os.path.realpath(one.records) == os.path.realpath(other.records)


def _add(changes: list[FileChange], doc: Document, text: str, what: str,
         owned: tuple[OwnedHook, ...] = ()) -> None:
    after = text.encode("utf-8")
    if after != doc.raw:
        changes.append(FileChange(doc.path, doc.raw, after, what, owned))


def _strangers(path: Path, data: Any, owned: tuple[OwnedHook, ...],
               hook: dict[str, Any]) -> list[str]:
    """A note for each hook that runs sagemem but is neither one install wrote nor the
    very object it would write (a teammate's committed one): written by hand, or by
    another tool, so left as it is — it is not ours to change."""
    ours = {(o.event, json.dumps(o.hook, sort_keys=True)) for o in owned}
    ours |= {(e, json.dumps(hook, sort_keys=True)) for e, _ in HOOK_EVENTS}
    return [f"{path}: {h.where()} runs `{h.command}`, which install did not write: left as "
            "it is; if it is an old sagemem hook, remove it by hand (sagemem's own runs "
            "beside it)"
            for h in sagemem_hooks(data)
            if (h.event, json.dumps(h.hook, sort_keys=True)) not in ours]


def _wire_settings(doc: Document, wiring: Wiring, recorded: tuple[OwnedHook, ...]
                   ) -> tuple[str, tuple[OwnedHook, ...]]:
    """The settings text with sagemem's hooks and env, and the hook objects it owns."""
    _require_object(doc, ("hooks",))
    _require_object(doc, ("env",))
    text, owned = doc.text, []
    by_event = {o.event: o for o in recorded}
    for event, matcher in HOOK_EVENTS:
        text, mine = _ensure_hook(doc, text, event, matcher, wiring, by_event.get(event))
        owned += [mine] if mine is not None else []
    for key, value in wiring.env.items():
        text = _ensure(text, ("env",), key, value)
    return text, tuple(owned)


def _ensure_hook(doc: Document, text: str, event: str, matcher: str | None,
                 wiring: Wiring, before: OwnedHook | None) -> tuple[str, OwnedHook | None]:
    """Our hook in ``hooks.<event>``: the object install wrote before replaced in place,
    else left alone when the same object is already there (not ours: a teammate's committed
    file, or written by hand — so undo leaves it too), else a group of our own appended."""
    groups = value_at(_data(text), ("hooks", event))
    if groups is not None and not isinstance(groups, list):
        raise HostConfigError(doc.path, f"has hooks.{event} as a JSON "
                                        f"{json_kind(groups)}, not an array")
    hook = wiring.hook()
    found = find(_data(text), before) if before is not None else None
    if before is not None and found is not None:
        group, index = found.place
        if found.hook != hook:
            text = replace_value(text, ("hooks", event, group, "hooks", index), hook)
        if before.new_group:
            text = _upgraded_matcher(text, event, group, matcher)
        return text, OwnedHook(event, hook, before.new_group)
    if groups is None:
        return set_member(text, ("hooks",), event, [wiring.hook_group(matcher)]), \
            OwnedHook(event, hook)
    if any(h.hook == hook for h in hooks_in(_data(text), event)):
        return text, None
    return add_element(text, ("hooks", event), wiring.hook_group(matcher)), \
        OwnedHook(event, hook)


def _upgraded_matcher(text: str, event: str, group: int, matcher: str | None) -> str:
    """Our own group's matcher set to today's, when it is one an earlier install wrote."""
    current = value_at(_data(text), ("hooks", event, group, "matcher"))
    if matcher is None or current == matcher or current not in FORMER_MATCHERS.get(event, ()):
        return text
    return replace_value(text, ("hooks", event, group, "matcher"), matcher)


def _wire_server(doc: Document, wiring: Wiring) -> str:
    _require_object(doc, ("mcpServers",))
    return _ensure(doc.text, ("mcpServers",), SERVER_NAME, wiring.server())


def _require_object(doc: Document, path: tuple[Key, ...]) -> None:
    """Refuse a key holding something Claude Code would not read as we would write it."""
    value = value_at(doc.data, path)
    if value is not None and not isinstance(value, dict):
        raise HostConfigError(doc.path, f"has {'.'.join(map(str, path))} as a JSON "
                                        f"{json_kind(value)}, not an object")


def _ensure(text: str, path: tuple[Key, ...], key: str, value: Any) -> str:
    data = _data(text)
    if isinstance(value_at(data, path), dict) and value_at(data, (*path, key)) == value:
        return text
    return set_member(text, path, key, value)


_data = parsed


# -- undo --------------------------------------------------------------------------------

def plan_undo(where: Targets) -> Plan:
    """What taking the install out would change: a file still as sagemem left it gets its
    backup back byte for byte (one sagemem created is removed); one changed since keeps
    the changes and loses only the hook objects install recorded (and the groups it made
    for them), its env keys and server; an edited skill is left alone."""
    changes: list[FileChange] = []
    notices: list[str] = []
    records = where.records
    forget = [p for p in (where.settings, where.mcp, where.skill)
              if read_record(p, records) is not None or read_backup(p, records) is not None]
    for path, what, strip in ((where.settings, "hooks and env", _strip_settings),
                              (where.mcp, "MCP server", _strip_server),
                              (where.skill, "skill", None)):
        if path in forget:
            _undo_one(path, records, what, strip, changes, notices)
    return Plan(where, tuple(changes), tuple(notices), tuple(forget))


Strip = Callable[[str, Any, tuple[OwnedHook, ...]], str]


def _undo_one(path: Path, records: Path, what: str, strip: Strip | None,
              changes: list[FileChange], notices: list[str]) -> None:
    record, backup = read_record(path, records), read_backup(path, records)
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
    text, data = parse_text(path, current)
    owned = _owned_by(record, data)
    old = _data(backup.decode("utf-8", "replace")) if backup else {}
    after = strip(text, old, owned).encode("utf-8")
    if after != current:
        changes.append(FileChange(path, current, after, what))


def _strip_settings(text: str, old: Any, owned: tuple[OwnedHook, ...]) -> str:
    """The hook objects install wrote out (with a group it made, once empty), ``env`` keys
    back to what the backup had, and containers we created (now empty) out too."""
    text = remove_owned_hooks(text, owned)
    for event, _ in HOOK_EVENTS:
        text = _drop_if_new_and_empty(text, ("hooks",), event, old)
    text = _drop_if_new_and_empty(text, (), "hooks", old)
    for key in ENV_KEYS:
        text = _restore(text, ("env",), key, old)
    return _drop_if_new_and_empty(text, (), "env", old)


def _strip_server(text: str, old: Any, owned: tuple[OwnedHook, ...]) -> str:
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
