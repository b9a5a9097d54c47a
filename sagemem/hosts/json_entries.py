"""sagemem's entries in a host's JSON file: its MCP server under the host's key and its
hook groups, put in and taken out by Claude Code's span editor (every other byte kept).

Ownership is as for Claude Code (``claude_code/owned.py``): a hook object is ours when
install's record names it; a server named ``sagemem`` is ours when install's record says
it wrote the file and the backup held no such server. Anything else named ``sagemem`` is
someone's own: install refuses it rather than overwrite it, and undo never touches it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..claude_code.changes import OwnedHook
from ..claude_code.owned import find, hooks_in, remove_owned_hooks
from ..claude_code.settings_file import (
    Document,
    Key,
    add_element,
    json_kind,
    parsed,
    remove_member,
    replace_value,
    set_member,
    value_at,
)
from ..errors import HostConfigError
from .spec import SERVER_NAME

Events = tuple[tuple[str, str | None], ...]




def require_object(doc: Document, path: tuple[Key, ...]) -> None:
    """Refuse a key holding what the host would not read as we would write it."""
    value = value_at(doc.data, path)
    if value is not None and not isinstance(value, dict):
        raise HostConfigError(doc.path, f"has {'.'.join(map(str, path))} as a JSON "
                                        f"{json_kind(value)}, not an object")


def wire_server(doc: Document, text: str, key: str, entry: dict[str, Any], *,
                ours: bool) -> str:
    """``key.sagemem`` set to ``entry``; one already there and not ours is refused."""
    require_object(doc, (key,))
    current = value_at(parsed(text), (key, SERVER_NAME))
    if current == entry:
        return text
    if current is not None and not ours:
        raise HostConfigError(doc.path, f"has an MCP server named {SERVER_NAME!r} in "
                                        f"{key} that install did not write; rename or "
                                        "remove it, then install again")
    return set_member(text, (key,), SERVER_NAME, entry)


def wire_hooks(doc: Document, text: str, events: Events, hook: dict[str, Any],
               recorded: tuple[OwnedHook, ...]) -> tuple[str, tuple[OwnedHook, ...]]:
    """Our hook in a group of its own under each event; the objects we own afterwards."""
    require_object(doc, ("hooks",))
    by_event = {o.event: o for o in recorded}
    owned: list[OwnedHook] = []
    for event, matcher in events:
        groups = value_at(parsed(text), ("hooks", event))
        if groups is not None and not isinstance(groups, list):
            raise HostConfigError(doc.path, f"has hooks.{event} as a JSON "
                                            f"{json_kind(groups)}, not an array")
        text, mine = _ensure_hook(text, event, matcher, hook, by_event.get(event))
        owned += [mine] if mine is not None else []
    return text, tuple(owned)


def _ensure_hook(text: str, event: str, matcher: str | None, hook: dict[str, Any],
                 before: OwnedHook | None) -> tuple[str, OwnedHook | None]:
    found = find(parsed(text), before) if before is not None else None
    if before is not None and found is not None:
        if found.hook != hook:
            where, index = found.place
            text = replace_value(text, ("hooks", event, where, "hooks", index), hook)
        return text, OwnedHook(event, hook, before.new_group)
    if any(h.hook == hook for h in hooks_in(parsed(text), event)):
        return text, None  # the very object, written by someone else: theirs, left
    group: dict[str, Any] = {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}
    if value_at(parsed(text), ("hooks", event)) is None:
        return set_member(text, ("hooks",), event, [group]), OwnedHook(event, hook)
    return add_element(text, ("hooks", event), group), OwnedHook(event, hook)


def strangers(path: Path, data: Any, events: Events, host: str,
              owned: tuple[OwnedHook, ...], hook: dict[str, Any]) -> list[str]:
    """A note for each hook running ``sagemem … hook <host>`` that install neither wrote
    nor would write (by hand, a teammate's): left as it is, but it runs the hook twice."""
    ours = [o.hook for o in owned] + [hook]
    return [f"{path}: {h.where()} runs `{h.command}`, which install did not write: left "
            "as it is; it runs sagemem's hook a second time, remove it by hand if it is "
            "an old one"
            for e, _ in events for h in hooks_in(data, e)
            if f"hook {host}" in h.command and h.hook not in ours]


def strip(text: str, old: Any, key: str | None, events: Events,
          owned: tuple[OwnedHook, ...]) -> str:
    """Undo on a file changed since install: our hook objects out (with the groups we
    made), the server back to the backup's, containers we created and left empty out."""
    text = remove_owned_hooks(text, owned)
    for event, _ in events:
        text = _drop_if_new_and_empty(text, ("hooks",), event, old)
    if events:
        text = _drop_if_new_and_empty(text, (), "hooks", old)
    if key is not None:
        text = _restore_server(text, key, old)
        text = _drop_if_new_and_empty(text, (), key, old)
    return text


def _restore_server(text: str, key: str, old: Any) -> str:
    previous = value_at(old, (key, SERVER_NAME))
    servers = value_at(parsed(text), (key,))
    if previous is not None:
        return set_member(text, (key,), SERVER_NAME, previous) \
            if value_at(parsed(text), (key, SERVER_NAME)) != previous else text
    if isinstance(servers, dict) and SERVER_NAME in servers:
        return remove_member(text, (key,), SERVER_NAME)
    return text


def _drop_if_new_and_empty(text: str, path: tuple[Key, ...], key: str, old: Any) -> str:
    value = value_at(parsed(text), (*path, key))
    if value in ({}, []) and value_at(old, (*path, key)) is None:
        return remove_member(text, path, key)
    return text
