"""Which memories carry a frontmatter block sagemem wrote for the model, not the model.

A plain ``create`` gets a frontmatter block so the memory can be found (``text.py``); the
model never wrote those lines, so ``view``, ``str_replace`` and ``insert`` leave them out
(``view.py``) and the line numbers stay the ones the model wrote. Which files those are
cannot be read off the file: a model that copies the shape of a block it viewed writes
one identical to sagemem's, and that one is its own. So the tool records it, in
``<state>/memory-tool.json`` (``{"version": 1, "generated": ["<file>.md", ...]}``), as
every record sagemem keeps for itself; the folder stays plain Markdown.

The record follows the file through the tool (``create`` sets it, ``rename`` moves it,
``delete`` drops it) and is read leniently on a view: a file it names that has no closed
frontmatter any more is shown whole, so a person's edit never hides a line.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import SettingsError
from ..files.atomic import atomic_write
from ..files.paths import name_key, read_state_file
from ..store import MemoryStore

RECORD_FILE = "memory-tool.json"
RECORD_VERSION = 1


def is_generated(store: MemoryStore, file: str) -> bool:
    """Whether ``file``'s frontmatter is the block sagemem gave a plain ``create``."""
    key = name_key(file)
    return any(name_key(name) == key for name in _load(store)["generated"])


def set_generated(store: MemoryStore, file: str, generated: bool) -> None:
    """Record whether ``file``'s frontmatter is sagemem's (a create's, before its write)."""
    if is_generated(store, file) == generated:
        return  # the common case, a create with the model's own block, takes no lock
    with store.locked():
        data = _load(store)
        kept = [name for name in data["generated"] if name_key(name) != name_key(file)]
        _save_if_changed(store, data, [*kept, file] if generated else kept)


def move_generated(store: MemoryStore, file: str, new_file: str) -> None:
    """After a rename: ``new_file`` is what ``file`` was, and ``file`` is no more."""
    with store.locked():
        data = _load(store)
        was = any(name_key(name) == name_key(file) for name in data["generated"])
        keys = {name_key(file), name_key(new_file)}
        kept = [name for name in data["generated"] if name_key(name) not in keys]
        _save_if_changed(store, data, [*kept, new_file] if was else kept)


def _save_if_changed(store: MemoryStore, data: dict[str, Any], names: list[str]) -> None:
    """Write the record only when it changes: a create with the model's own frontmatter
    leaves the state directory as it was."""
    if sorted(names) == sorted(data["generated"]):
        return
    data["generated"] = sorted(names)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    atomic_write(store.state_dir / RECORD_FILE, text.encode("utf-8"), create=False)


def _load(store: MemoryStore) -> dict[str, Any]:
    """The whole record, keeping keys this version does not know; a malformed one is an
    error (guessing would show the model lines it never wrote, or hide some)."""
    path = store.state_dir / RECORD_FILE
    raw = read_state_file(path)
    if raw is None:
        return {"version": RECORD_VERSION, "generated": []}
    try:
        data = json.loads(raw.decode("utf-8-sig") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(path, f"not valid JSON ({exc})") from exc
    names = data.setdefault("generated", []) if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise SettingsError(path, 'must hold {"generated": ["<file>.md", ...]}')
    return dict(data)
