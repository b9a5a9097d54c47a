"""Which commit a git working tree is at, read from its files — git is never run.

A snapshot records ``HEAD`` so a person can line it up with their history. Running
``git`` against the memory directory would execute whatever hooks or config it holds,
so ``.git/HEAD``, the ref file and ``packed-refs`` are read as plain files instead. A
``.git`` *file* (a linked worktree or submodule) points at the real git directory with
``gitdir:``; shared refs then live in the directory its ``commondir`` names. The walk and
those two steps are ``files/gitroot.py``'s. Anything unexpected gives None: the commit is
information, never a reason to fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SagememError
from ..files.gitroot import common_dir, find_dot_git, git_dir
from ..files.paths import read_regular

MAX_GIT_FILE_BYTES = 16 * 1024 * 1024  # packed-refs of a large repository
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True)
class GitHead:
    """The commit checked out (None when it cannot be read: an unborn branch, a
    damaged repository), and the branch ref (None when HEAD is detached)."""

    commit: str | None
    ref: str | None


def git_head(directory: Path) -> GitHead | None:
    """HEAD of the working tree holding ``directory``, or None when there is none."""
    dot_git = find_dot_git(directory)
    if dot_git is None:
        return None
    git_directory = git_dir(dot_git)
    if git_directory is None:
        return GitHead(None, None)
    head = _read_text(git_directory / "HEAD")
    if head is None:
        return GitHead(None, None)
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return GitHead(_resolve(ref, git_directory), ref)
    return GitHead(head if _SHA.fullmatch(head) else None, None)


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


def _ref_folders(git_directory: Path) -> list[Path]:
    common = common_dir(git_directory)
    return [git_directory] if common is None else [git_directory, common]


def _read_text(path: Path) -> str | None:
    try:
        return read_regular(path, MAX_GIT_FILE_BYTES).data.decode("utf-8").strip()
    except (SagememError, UnicodeDecodeError):
        return None
