"""Which memory folder a project has: the project is found from where the agent works.

With no ``--dir`` and no ``SAGE_MEM_DIR`` the folder follows the git working tree the
working directory is in (docs/configuration.md, "Which folder"). The rules, in order:

1. ``find_project`` finds the working tree by ``files/gitroot.py``'s walk to the first
   ``.git`` (git is never run). A linked worktree's project is its main working tree, so
   every worktree of a repository shares one folder; a ``.git`` file that is not one by
   git's back-link check (a submodule's, a forged one) is a project of its own.
2. The user's project map ``~/.sage-mem/projects.json`` (the user's own file, trusted):
   a folder anywhere, or memory off, per project root.
3. The repository's ``.sagemem.json``. A repository someone cloned is not trusted like
   the user's files: it may turn memory off or name a folder *inside itself* — no
   ``..``, no absolute path, no symlink out, nothing in ``.git`` (its hooks run code), no
   control character; anything else is RepositoryFileError. Its folder's state
   directory is outside the repository, one per folder (``repo_state_dir``).
4. Otherwise ``~/.sage-mem/projects/<slug>/memory``, ``<slug>`` the root's path made
   readable by Claude Code's rule, then 8 hex digits of its sha256 (``slug``): the
   readable part alone gave ``client.app`` and ``client_app`` one folder.

A project's root is its real path (symlinks resolved, as git's own ``getcwd``): a
repository opened through a symlink is the same project, with the same folder.

Kept cheap: ``sagemem config`` comes through here; json, os and hashlib (which ``paths``
loads anyway) only, no store, no YAML.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ProjectMapError, RepositoryFileError, SagememError, SettingsError
from .atomic import atomic_write, make_folder
from .gitroot import claude_project_key, find_dot_git, main_tree
from .paths import STATE_DIR_NAME, read_state_file
from .state import FOLDERS_DIR, own_state_dir, owner_of, same_folder

Rule = Literal["user project map", "repository file", "git root"]
PROJECTS_FILE = "projects.json"
REPO_FILE = ".sagemem.json"
MAP_VERSION = 1
# the readable part of a project folder's name, the path's tail: 80 keeps a deep root's
# own name in view and the whole name (ASCII, hash included) far under a file system's
# 255 bytes; the hash, not this part, keeps two projects apart
MAX_READABLE_CHARS = 80
# what a path sagemem is handed may not hold: a NUL ends a C string (os calls raise
# ValueError), and other control characters make the error lines that name it lie
_CONTROL = frozenset(map(chr, [*range(32), 127]))


@dataclass(frozen=True)
class Project:
    """A git project: ``root`` is its identity (the main working tree), ``worktree``
    the working tree the walk found (``root`` itself unless a linked worktree)."""

    root: Path
    worktree: Path


@dataclass(frozen=True)
class Choice:
    """What the rules chose for a project: the folder (None: memory is off), the rule,
    and the file that decided (None for the git-root rule)."""

    project: Project
    rule: Rule
    memory_dir: Path | None
    file: Path | None = None

    @property
    def off(self) -> bool:
        return self.memory_dir is None


def sage_home(home: Path | None = None) -> Path:
    """``~/.sage-mem``, beside which the project map and project folders live."""
    return (Path.home() if home is None else home) / ".sage-mem"


def projects_file(home: Path | None = None) -> Path:
    return sage_home(home) / PROJECTS_FILE


def project_home(root: Path, home: Path | None = None) -> Path:
    """``~/.sage-mem/projects/<slug>``: the git-root rule's folder is its ``memory``."""
    return sage_home(home) / "projects" / slug(root)


def slug(root: Path) -> str:
    """sagemem's folder name for a project root: its path made readable by Claude Code's
    rule (its last ``MAX_READABLE_CHARS`` characters), then the first 8 hex digits of
    the path's sha256 — ``/home/u/src/app`` → ``-home-u-src-app-<8 hex>``. The hash keeps
    apart the roots that rule folds together (``client.app``, ``client_app``; ``日本``
    and ``中国`` both ``--``)."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{claude_project_key(root)[-MAX_READABLE_CHARS:]}-{digest[:8]}"


def find_project(cwd: Path) -> Project | None:
    """The git project holding ``cwd`` (``files/gitroot.py``), or None outside any
    working tree (or past its ``MAX_PARENTS`` folders up); its paths are real paths, so
    a symlink to a repository leads to the repository's own project."""
    dot_git = find_dot_git(Path(os.path.realpath(cwd)))
    if dot_git is None:
        return None
    return Project(Path(os.path.realpath(main_tree(dot_git))),
                   Path(os.path.realpath(dot_git.parent)))


def choose_folder(project: Project, *, home: Path | None = None) -> Choice:
    """The folder for ``project`` by the rules of the module doc; a malformed project
    map is ProjectMapError, a refused repository file RepositoryFileError."""
    path = projects_file(home)
    entry = map_entry(read_project_map(path), project.root)
    if entry.get("memory") == "off":
        return Choice(project, "user project map", None, path)
    if isinstance(entry.get("memory_dir"), str):
        return Choice(project, "user project map", Path(entry["memory_dir"]), path)
    repo = read_repo_file(project.root)
    repo_path = project.root / REPO_FILE
    outvoted = repo.get("memory") == "off" and entry.get("memory") == "on"
    if repo.get("memory") == "off" and not outvoted:
        return Choice(project, "repository file", None, repo_path)
    if "memory_dir" in repo:
        return Choice(project, "repository file", inside(project.root, str(repo["memory_dir"])),
                      repo_path)
    if outvoted:  # the user's on decided, and the folder is the git root's
        return Choice(project, "user project map", project_home(project.root, home) / "memory",
                      path)
    return Choice(project, "git root", project_home(project.root, home) / "memory")


def map_entry(projects: Mapping[str, dict[str, str]], root: Path) -> dict[str, str]:
    """The map's entry for ``root`` (a real path): its own key, else a key that names it
    through a symlink — a user may write the path they type."""
    if str(root) in projects:
        return projects[str(root)]
    for key, entry in projects.items():
        if os.path.realpath(key) == str(root):
            return entry
    return {}


def repo_state_dir(root: Path, folder: Path, home: Path | None = None) -> Path:
    """The state directory of ``folder``, named by the repository file of the project at
    ``root``: outside the repository (a state directory the repository shipped is never
    adopted), one per folder — ``~/.sage-mem/projects/<slug>/.sage-mem/folders/<name>-
    <hash8>`` — since the git-root rule's folder owns ``<slug>/.sage-mem``: switching
    rules, or the folder the repository file names, must not meet another's records. A
    folder that owns ``<slug>/.sage-mem`` already (given it before this rule) keeps it."""
    shared = project_home(root, home) / STATE_DIR_NAME
    try:
        owner = owner_of(shared)
    except SagememError:  # unreadable: not this folder's; its own is beside it
        owner = None
    if owner is not None and same_folder(owner, folder):
        return shared
    return shared / FOLDERS_DIR / own_state_dir(folder).name


def read_project_map(path: Path) -> dict[str, dict[str, str]]:
    """The ``projects`` of the user's map (absent file: none); anything malformed is
    ProjectMapError naming the file."""
    data = _read_json(path, ProjectMapError)
    if not data:
        return {}
    projects = data.get("projects", {})
    if data.get("version", MAP_VERSION) != MAP_VERSION or not isinstance(projects, dict):
        raise ProjectMapError(path, f'must be {{"version": {MAP_VERSION}, "projects": {{…}}}}')
    for root, entry in projects.items():
        if not os.path.isabs(root) or _CONTROL.intersection(root):
            raise ProjectMapError(path, f'key {root!r} must be a project root\'s absolute '
                                        'path (no control characters)')
        if not _legal_entry(entry):
            raise ProjectMapError(path, f'{root!r} must map to {{"memory_dir": "<absolute '
                                        'path>"}, {"memory": "off"} or {"memory": "on"}')
    return projects


def _legal_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if "memory_dir" in entry:
        folder = entry["memory_dir"]
        return (isinstance(folder, str) and os.path.isabs(folder)
                and not _CONTROL.intersection(folder))
    return entry.get("memory") in ("off", "on")


def read_repo_file(root: Path) -> dict[str, object]:
    """A repository's ``.sagemem.json`` (absent: empty), its keys checked."""
    path = root / REPO_FILE
    data = _read_json(path, RepositoryFileError)
    if "memory" in data and data["memory"] not in ("off", "on"):
        raise RepositoryFileError(path, '"memory" may only be "off" or "on"')
    if "memory_dir" in data and not (isinstance(data["memory_dir"], str)
                                     and data["memory_dir"].strip()):
        raise RepositoryFileError(path, '"memory_dir" must be a folder inside the repository')
    return data


def inside(root: Path, relative: str) -> Path:
    """``root/relative``, if it stays inside the repository once every symlink on the way
    is followed, and out of its ``.git``; otherwise RepositoryFileError (a cloned
    repository must not point sagemem at ``~/.ssh``, another project's memories, or
    ``.git/hooks``, whose files git runs)."""
    path = root / REPO_FILE
    if _CONTROL.intersection(relative):
        raise RepositoryFileError(path, f'"memory_dir" {relative!r} holds a control '
                                        'character')
    given = Path(relative)
    if given.is_absolute() or ".." in given.parts:
        raise RepositoryFileError(path, f'"memory_dir" {relative!r} must be a relative path '
                                        'inside the repository (no "..", not absolute)')
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(root / given))
    if real != real_root and real_root not in real.parents:
        raise RepositoryFileError(path, f'"memory_dir" {relative!r} leads out of the '
                                        f'repository (to {real}) through a symlink')
    if real == real_root:
        raise RepositoryFileError(path, '"memory_dir" must be a folder inside the '
                                        'repository, not its root')
    # checked on the real path too: a symlink "docs" -> ".git" is .git all the same
    if any(part.lower() == ".git" for part in (*given.parts,
                                               *real.relative_to(real_root).parts)):
        raise RepositoryFileError(path, f'"memory_dir" {relative!r} is in the repository\'s '
                                        '.git, which sagemem never writes')
    return root / given


def _read_json(path: Path, error: type[SettingsError]) -> dict[str, object]:
    try:
        raw = read_state_file(path)
    except SettingsError as exc:
        raise error(path, exc.problem) from exc
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise error(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise error(path, "must hold a JSON object")
    return data


def use_folder(project_root: Path, memory_dir: Path, *, home: Path | None = None) -> Path:
    """Name ``memory_dir`` as the folder of the project at ``project_root`` in the user's
    map — how an existing folder (the old ``~/.sage-mem/memory``, Claude Code's
    auto-memory folder) is adopted in place. Returns the folder as recorded (absolute)."""
    folder = Path(os.path.abspath(memory_dir.expanduser()))
    if _CONTROL.intersection(str(folder)):
        raise ProjectMapError(projects_file(home), f"{str(folder)!r} holds a control "
                                                   "character; not recorded")
    _set_entry(project_root, {"memory_dir": str(folder)}, home)
    return folder


def set_memory(project_root: Path, on: bool, *, repo: bool = False,
               home: Path | None = None) -> Path:
    """Turn memory on or off for a project, in the user's map (nothing in the repository
    changes) or, with ``repo``, in ``<root>/.sagemem.json``. Returns the file written —
    or removed: a repository file left holding nothing is deleted, never kept as ``{}``."""
    if repo:
        return _set_repo(project_root, on)
    if not on:
        return _set_entry(project_root, {"memory": "off"}, home)
    # "on" must outvote a repository's off; with no such off there is nothing to keep
    repo_off = read_repo_file(project_root).get("memory") == "off"
    return _set_entry(project_root, {"memory": "on"} if repo_off else None, home)


def _set_entry(root: Path, entry: dict[str, str] | None, home: Path | None) -> Path:
    """Write one project's entry (None: drop it), keeping every other project's; a
    malformed map is refused, never overwritten."""
    path = projects_file(home)
    projects = dict(read_project_map(path))
    key = str(Path(os.path.abspath(root)))
    if entry is None:
        projects.pop(key, None)
    else:
        projects[key] = entry
    make_folder(path.parent, follow_link=True)
    _write_json(path, {"version": MAP_VERSION, "projects": projects})
    return path


def _set_repo(root: Path, on: bool) -> Path:
    path = root / REPO_FILE
    data = dict(read_repo_file(root))
    if on:
        data.pop("memory", None)
    else:
        data["memory"] = "off"
    if data:
        _write_json(path, data)
    elif os.path.lexists(path):  # an empty object says nothing: no file to commit
        os.unlink(path)
    return path


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write(path, text.encode("utf-8"), create=False)
