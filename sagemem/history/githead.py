"""Which commit a git working tree is at, read from its files — git is never run.

A snapshot records ``HEAD`` so a person can line it up with their history. Running
``git`` against the memory directory would execute whatever hooks or config it holds,
so ``.git/HEAD``, the ref file and ``packed-refs`` are read as plain files instead. A
``.git`` *file* (a linked worktree or submodule) points at the real git directory with
``gitdir:``; shared refs then live in the directory its ``commondir`` names. Anything
unexpected gives None: the commit is information, never a reason to fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SagememError
from ..files.paths import read_regular

MAX_GIT_FILE_BYTES = 16 * 1024 * 1024  # packed-refs of a large repository
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
MAX_PARENTS = 64


@dataclass(frozen=True)
class GitHead:
    """The commit checked out (None when it cannot be read: an unborn branch, a
    damaged repository), and the branch ref (None when HEAD is detached)."""

    commit: str | None
    ref: str | None


def git_head(directory: Path) -> GitHead | None:
    """HEAD of the working tree holding ``directory``, or None when there is none."""
    git = _find_dot_git(directory)
    if git is None:
        return None
    git_dir = _git_dir(git)
    if git_dir is None:
        return GitHead(None, None)
    head = _read_text(git_dir / "HEAD")
    if head is None:
        return GitHead(None, None)
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return GitHead(_resolve(ref, git_dir), ref)
    return GitHead(head if _SHA.fullmatch(head) else None, None)


def _find_dot_git(directory: Path) -> Path | None:
    """The nearest ``.git`` at or above ``directory``."""
    for folder in [directory, *directory.parents][:MAX_PARENTS]:
        candidate = folder / ".git"
        if candidate.is_dir() or candidate.is_file():
            return candidate
    return None


def _git_dir(git: Path) -> Path | None:
    if git.is_dir():
        return git
    text = _read_text(git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    target = target if target.is_absolute() else git.parent / target
    return target if target.is_dir() else None


def _resolve(ref: str, git_dir: Path) -> str | None:
    """The commit a ref names: a loose ref file, else a line of ``packed-refs``; in a
    linked worktree both live in the common git directory."""
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return None
    for folder in _ref_folders(git_dir):
        loose = _read_text(folder / ref)
        if loose is not None:
            return loose if _SHA.fullmatch(loose) else None
    for folder in _ref_folders(git_dir):
        packed = _read_text(folder / "packed-refs")
        for line in (packed or "").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.fullmatch(sha):
                return sha
    return None


def _ref_folders(git_dir: Path) -> list[Path]:
    common = _read_text(git_dir / "commondir")
    if common is None:
        return [git_dir]
    shared = Path(common)
    return [git_dir, shared if shared.is_absolute() else git_dir / shared]


def _read_text(path: Path) -> str | None:
    try:
        return read_regular(path, MAX_GIT_FILE_BYTES).data.decode("utf-8").strip()
    except (SagememError, UnicodeDecodeError):
        return None
