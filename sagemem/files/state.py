"""Which state directory belongs to which memory folder: the one rule is that every
record of a state directory (snapshots, locks, conflicts, ledger, sessions, tasks, logs,
indexes) belongs to exactly one memory folder.

A state directory names its folder in ``<state>/folder.json``, written create-only the
first time it is initialised or written for a folder (``init``, the store lock). Two
folders side by side (``init work; init personal``) both default to
``<parent>/.sage-mem``; they used to share it, and personal listed, rolled back to and
was blocked by work's records. Now the default is resolved in order:

1. ``<parent>/.sage-mem/folders/<name>-<hash8>/`` if it is this folder's own (it got one
   before, and keeps it even if the shared one is unowned again);
2. another ``folders/*`` whose ``folder.json`` names this folder (one adopted after a
   move or copy: the hash is of the old path);
3. ``<parent>/.sage-mem`` if it is unowned or this folder's — so sage-mem's one-folder
   layout, including a ``.sage-mem`` from before owner files, works unchanged;
4. otherwise this folder's own ``folders/<name>-<hash8>/``.

A folder moved (``mv work job``) or copied with its parent (``cp -r notes notes2``) finds
no state of its own at step 4 — its locks and snapshots stay with the old path, and a
locked memory would look archivable. ``stray_states`` names the state directories beside
it that look left behind (their folder is gone, or is one of the same name elsewhere), so
the settings can warn; nothing is adopted silently.

Whatever the layout, a state directory keeps itself out of git: ``claim`` leaves a
``.gitignore`` of ``*`` in it (``keep_out_of_git``), so a state directory inside a
repository's working tree — beside a project's memory folder, in a clone that never ran
``init`` — is never added by ``git add -A`` and never travels.

A state directory given explicitly (``--state-dir``, ``SAGE_MEM_STATE_DIR``,
``MemoryStore(dir, state_dir)``) that another folder owns is refused (``WrongFolder``)
before anything in it is read or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    MemoryExists,
    SagememError,
    SettingsError,
    StateDirNotDirectory,
    WrongFolder,
)
from .atomic import atomic_write
from .paths import STATE_DIR_NAME, read_state_file

OWNER_FILE = "folder.json"
STATE_GITIGNORE = ".gitignore"
STATE_GITIGNORE_TEXT = b"# sagemem's state directory: never committed\n*\n"
FOLDERS_DIR = "folders"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def owner_of(state_dir: Path) -> Path | None:
    """The memory folder ``state_dir`` belongs to, or None when it names none."""
    if os.path.lexists(state_dir) and not state_dir.is_dir():  # not "cannot read folder.json"
        raise StateDirNotDirectory(state_dir)
    path = state_dir / OWNER_FILE
    raw = read_state_file(path)
    if raw is None:
        return None
    try:
        folder = json.loads(raw.decode("utf-8"))["folder"]
    except (UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise SettingsError(path, "must hold {\"folder\": \"<absolute memory dir>\"}") from exc
    if not isinstance(folder, str) or not os.path.isabs(folder):
        raise SettingsError(path, "its folder must be an absolute path")
    return Path(folder)


def same_folder(a: Path, b: Path) -> bool:
    """Whether two paths name one memory folder (spelt alike, or the same directory)."""
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def own_state_dir(memory_dir: Path) -> Path:
    """``<parent>/.sage-mem/folders/<name>-<hash8>``: the state directory a folder gets
    when the shared one belongs to another (the hash keeps two ``notes`` apart)."""
    memory_dir = Path(os.path.abspath(memory_dir))
    digest = hashlib.sha256(str(memory_dir).encode("utf-8", "surrogateescape")).hexdigest()
    name = _UNSAFE.sub("_", memory_dir.name).strip("._") or "memory"
    return memory_dir.parent / STATE_DIR_NAME / FOLDERS_DIR / f"{name[:40]}-{digest[:8]}"


def default_state_dir(memory_dir: Path) -> Path:
    """The state directory of a memory folder when none is given (see the module doc)."""
    memory_dir = Path(os.path.abspath(memory_dir))
    own = own_state_dir(memory_dir)
    if _owned_by(own, memory_dir):
        return own
    for state_dir, named in _owned_folders(own.parent):
        if same_folder(named, memory_dir):
            return state_dir
    shared = memory_dir.parent / STATE_DIR_NAME
    owner = owner_of(shared)
    return shared if owner is None or same_folder(owner, memory_dir) else own


@dataclass(frozen=True)
class StrayState:
    """A state directory beside a folder that has none of its own, which looks like that
    folder's left behind: ``owner`` (in its folder.json) is gone — a move — or is a
    folder of the same name elsewhere — a copy."""

    state_dir: Path
    owner: Path
    moved: bool


def stray_states(memory_dir: Path) -> tuple[StrayState, ...]:
    """The state directories under ``<parent>/.sage-mem`` that may be ``memory_dir``'s
    under an old path; none when ``memory_dir`` has state of its own (or uses an unowned
    shared one)."""
    memory_dir = Path(os.path.abspath(memory_dir))
    own = own_state_dir(memory_dir)
    if default_state_dir(memory_dir) != own or os.path.lexists(own):
        return ()
    shared = memory_dir.parent / STATE_DIR_NAME
    found = []
    for state_dir, owner in ((shared, _owner_or_none(shared)), *_owned_folders(own.parent)):
        if owner is None or same_folder(owner, memory_dir):
            continue
        moved = not os.path.isdir(owner)
        if moved or owner.name == memory_dir.name:
            found.append(StrayState(state_dir, owner, moved))
    return tuple(found)


KEPT_RECORDS = ("snapshots", "versions", "conflicts", "journal.jsonl", "locked.json",
                "access.json", "archive.jsonl", "rollbacks.jsonl", "tasks", "edits")
"""What a state directory holds that no rebuild brings back (the index, vectors and
sessions are caches): the names ``left_state`` looks for. Spelled here, not imported from
``history``/``writes``, so that reading the settings loads none of them."""


def left_state(memory_dir: Path, state_dir: Path) -> Path | None:
    """The state directory ``memory_dir`` would use by default, when ``state_dir`` is
    another one and that default is this folder's own and holds records (snapshots,
    conflicts, locks, the change log…): what a changed ``SAGE_MEM_STATE_DIR`` leaves
    behind, unseen by every command, unless someone says so."""
    try:
        default = default_state_dir(memory_dir)
        if same_folder(default, state_dir) or not default.is_dir():
            return None
        owner = owner_of(default)
    except (OSError, SettingsError):
        return None
    if owner is None or not same_folder(owner, Path(os.path.abspath(memory_dir))):
        return None
    return default if any(os.path.lexists(default / name) for name in KEPT_RECORDS) else None


def check_owner(state_dir: Path, memory_dir: Path, *, given: bool = True) -> None:
    """Refuse (WrongFolder) a state directory that another memory folder owns; ``given``:
    it came from ``--state-dir``/``SAGE_MEM_STATE_DIR`` (the refusal says drop it)."""
    owner = owner_of(state_dir)
    if owner is not None and not same_folder(owner, memory_dir):
        raise WrongFolder(state_dir, owner, Path(os.path.abspath(memory_dir)), given=given)


def claim(state_dir: Path, memory_dir: Path) -> None:
    """Record that ``state_dir`` (which exists) belongs to ``memory_dir``, unless it
    already does; WrongFolder if another folder owns it. Create-only, so of two folders
    claiming at once one wins and the other is refused."""
    memory_dir = Path(os.path.abspath(memory_dir))
    check_owner(state_dir, memory_dir)
    keep_out_of_git(state_dir)
    if owner_of(state_dir) is not None:
        return
    data = json.dumps({"version": 1, "folder": str(memory_dir)}, ensure_ascii=False)
    try:
        atomic_write(state_dir / OWNER_FILE, f"{data}\n".encode("utf-8", "surrogateescape"),
                     create=True)
    except MemoryExists:  # another process claimed it just now: for this folder?
        check_owner(state_dir, memory_dir)


def keep_out_of_git(state_dir: Path) -> None:
    """``<state>/.gitignore`` holding ``*``: git then ignores the whole state directory
    (that file included) wherever it lies — inside the memory folder, beside it in a
    project's repository, in a clone that never ran ``init`` — with no line in any
    ``.gitignore`` of the user's that a clone might lack. Create-only: a file the user
    put there is theirs; a read-only state directory is left as it is."""
    path = state_dir / STATE_GITIGNORE
    if os.path.lexists(path):
        return
    with contextlib.suppress(SagememError, OSError):  # made just now; a read-only dir
        atomic_write(path, STATE_GITIGNORE_TEXT, create=True)


def _owned_by(state_dir: Path, memory_dir: Path) -> bool:
    owner = _owner_or_none(state_dir)
    return owner is not None and same_folder(owner, memory_dir)


def _owner_or_none(state_dir: Path) -> Path | None:
    """``owner_of``, with an unreadable owner file (or a file in its place) as none."""
    try:
        return owner_of(state_dir)
    except SettingsError:
        return None


def _owned_folders(folders: Path) -> list[tuple[Path, Path]]:
    """Every ``folders/*`` state directory that names its folder, with that folder."""
    try:
        entries = sorted(os.scandir(folders), key=lambda e: e.name)
    except OSError:  # none yet (or unreadable): nothing to find
        return []
    found = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            owner = _owner_or_none(Path(entry.path))
            if owner is not None:
                found.append((Path(entry.path), owner))
    return found
