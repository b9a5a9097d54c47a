"""Which hook objects in a settings file are sagemem's: exactly the ones install recorded.

A hook is sagemem's because install wrote it and said so in its record
(``changes.Record.hooks``), never because its command looks like ours: a group may hold
someone else's hook beside ours (``prettier-check`` and ``sagemem hook claude-code`` under
one ``Write|Edit`` matcher), and another tool's command may end in ``hook claude-code``
too. So install replaces or removes only a recorded object, found by equality, and adds
its own group beside everything else; a hand-written sagemem entry that install did not
write is left as it is and named (it would run the hook a second time).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .changes import OwnedHook
from .settings_file import parsed, remove_element

Place = tuple[int, int]
"""A hook object's place in ``hooks.<event>``: (group index, index in its ``hooks``)."""


@dataclass(frozen=True)
class FoundHook:
    """A hook object in a settings file, where it is and its command."""

    event: str
    place: Place
    hook: dict[str, Any]

    @property
    def command(self) -> str:
        command = self.hook.get("command")
        return command if isinstance(command, str) else ""

    def where(self) -> str:
        """The JSON path a person edits: ``hooks.UserPromptSubmit[0].hooks[1]``."""
        group, index = self.place
        return f"hooks.{self.event}[{group}].hooks[{index}]"


def hooks_in(data: Any, event: str) -> Iterator[FoundHook]:
    """Every hook object of ``hooks.<event>``, in file order (odd shapes skipped)."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        inner = group.get("hooks") if isinstance(group, dict) else None
        for i, hook in enumerate(inner if isinstance(inner, list) else []):
            if isinstance(hook, dict):
                yield FoundHook(event, (g, i), hook)


def find(data: Any, owned: OwnedHook) -> FoundHook | None:
    """The first object of ``owned.event`` equal to what install wrote, if it is there."""
    return next((f for f in hooks_in(data, owned.event) if f.hook == owned.hook), None)


def group_of(data: Any, found: FoundHook) -> dict[str, Any]:
    """The matcher group that holds ``found`` (``hooks_in`` found it, so it is there)."""
    group: dict[str, Any] = data["hooks"][found.event][found.place[0]]
    return group


def runs_sagemem(command: str) -> bool:
    """Whether a command starts sagemem's hook (however spelt, typos included): a word
    naming sagemem (any path, ``python -m sagemem``, ``uvx sagemem``) with ``hook`` after
    it. For naming entries to a person (doctor, install's notes), never for taking one
    over: ownership is the record's alone."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words):
        if os.path.basename(word).startswith("sagemem") and not _assignment(word):
            return "hook" in words[i + 1:]
    return False


def _assignment(word: str) -> bool:
    name, sep, _ = word.partition("=")
    return bool(sep) and name.isidentifier()


def legacy_hooks(data: Any, events: tuple[tuple[str, str | None], ...]) -> tuple[OwnedHook, ...]:
    """What an install from before hook records wrote, recognised by its exact shape: a
    group of its own (our matcher, one hook) whose one hook is ``{"type": "command",
    "command": "<…> hook claude-code", "timeout": 10}`` — nothing less specific."""
    found: list[OwnedHook] = []
    for event, matcher in events:
        for hook in hooks_in(data, event):
            group = group_of(data, hook)
            shape = {**({"matcher": matcher} if matcher else {}), "hooks": [hook.hook]}
            if group == shape and set(hook.hook) == {"type", "command", "timeout"} and \
                    hook.hook["type"] == "command" and hook.hook["timeout"] == 10 and \
                    hook.command.endswith(" hook claude-code"):
                found.append(OwnedHook(event, hook.hook, True))
                break
    return tuple(found)


def remove_owned_hooks(text: str, owned: tuple[OwnedHook, ...]) -> str:
    """``text`` with the hook objects an install wrote taken out (with a group it made,
    once that holds nothing else); a hook changed or removed since is no longer ours and
    stays as it is."""
    for hook in owned:
        found = find(parsed(text), hook)
        if found is None:
            continue  # taken out already, or changed by someone: no longer ours
        group, index = found.place
        if hook.new_group and group_of(parsed(text), found).get("hooks") == [hook.hook]:
            text = remove_element(text, ("hooks", hook.event), group)
        else:
            text = remove_element(text, ("hooks", hook.event, group, "hooks"), index)
    return text
