"""Which git working tree a folder is in, and its main tree, read from its files.

git is never run: it would execute the repository's hooks and config. Every walk up to
``.git`` goes through here (``scopes``, ``gitignore``, ``history/githead``,
``importers/claude_project``), by these rules in order:

1. ``find_dot_git``: the nearest ``.git`` at or above a folder, a directory or a file,
   at most ``MAX_PARENTS`` folders up.
2. ``git_dir``: the git directory a ``.git`` stands for — itself, or a ``.git`` file's
   ``gitdir:`` target; ``common_dir``: the shared one its ``commondir`` names.
3. ``main_tree``: a ``.git`` directory's tree is its own. A ``.git`` file is a linked
   worktree of the main tree only when git's own back-link holds: its git directory is
   ``<commondir>/worktrees/<name>`` and that directory's ``gitdir`` file names this very
   ``.git`` file. Anything else — a submodule's ``.git/modules/…`` (no ``commondir``), a
   bare repository's worktree, or a ``.git`` file unpacked from an archive that claims
   another repository's ``commondir`` — makes the folder holding it a project of its
   own: a forged file must not point sagemem at another project's memory.

``claude_project_key`` is Claude Code's name for a project (``~/.claude/projects/<key>/``),
kept beside the walk that finds the root it names; sagemem's own is ``scopes.slug``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import SagememError
from .paths import read_regular

MAX_PARENTS = 64  # a walk from a deep (or looping) folder must end
MAX_GIT_FILE_BYTES = 64 * 1024  # a .git file, commondir or gitdir holds one path
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def find_dot_git(directory: Path) -> Path | None:
    """The nearest ``.git`` (directory or file) at or above ``directory``, or None
    outside any working tree (or past ``MAX_PARENTS`` folders up)."""
    directory = Path(os.path.abspath(directory))
    for folder in [directory, *directory.parents][:MAX_PARENTS]:
        candidate = folder / ".git"
        if candidate.is_dir() or candidate.is_file():
            return candidate
    return None


def git_dir(dot_git: Path) -> Path | None:
    """The git directory ``dot_git`` stands for: itself when a directory, else the
    ``gitdir:`` its file names, when that is a directory; None otherwise."""
    if dot_git.is_dir():
        return dot_git
    text = _read_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = _joined(dot_git.parent, text[len("gitdir:"):].strip())
    return target if target.is_dir() else None


def common_dir(directory: Path) -> Path | None:
    """The shared git directory a worktree's git directory names in ``commondir``
    (relative to it, as git writes it, or absolute), or None when it has none."""
    common = _read_text(directory / "commondir")
    return None if common is None else _joined(directory, common)


def main_tree(dot_git: Path) -> Path:
    """The main working tree of the tree holding ``dot_git``: that tree itself, unless
    ``dot_git`` is a linked worktree's file that passes git's back-link check."""
    here = dot_git.parent
    linked = None if dot_git.is_dir() else git_dir(dot_git)
    common = None if linked is None else common_dir(linked)
    if linked is None or common is None or not _links_back(dot_git, linked, common):
        return here
    return common.parent if common.name == ".git" and common.is_dir() else here


def _links_back(dot_git: Path, linked: Path, common: Path) -> bool:
    """git's check of a linked worktree: its git directory is ``<common>/worktrees/<name>``
    and that directory's ``gitdir`` names ``dot_git`` (absolute, as ``git worktree add``
    writes it, or relative to the git directory with ``worktree.useRelativePaths``)."""
    if Path(os.path.realpath(linked)).parent != Path(os.path.realpath(common)) / "worktrees":
        return False
    back = _read_text(linked / "gitdir")
    return back is not None and os.path.realpath(_joined(linked, back)) == os.path.realpath(
        dot_git)


def claude_project_key(root: Path) -> str:
    """Claude Code's folder name for a project root, every character outside
    ``[A-Za-z0-9]`` made ``-``: ``/home/u/src/my_app`` → ``-home-u-src-my-app``."""
    return _NOT_ALNUM.sub("-", str(root))


def _joined(base: Path, written: str) -> Path:
    """A path as git writes it in these files: absolute, or relative to ``base``."""
    return Path(os.path.abspath(base / written))


def _read_text(path: Path) -> str | None:
    try:
        return read_regular(path, MAX_GIT_FILE_BYTES).data.decode("utf-8").strip()
    except (SagememError, UnicodeDecodeError):
        return None
