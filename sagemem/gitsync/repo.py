"""The git repository that holds a memory folder, and git run as a subprocess.

Git itself answers where a repository's top is (``git rev-parse --show-toplevel``): a
``.git`` directory, a ``.git`` file of a linked worktree or a submodule, ``GIT_DIR``
— walking up by hand would have to know every one of them.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import GitError, NotInGitRepository

GIT_TIMEOUT = 60  # seconds; a local git query that takes longer is stuck, not slow


@dataclass(frozen=True)
class Repository:
    """A repository's working tree top, and the memory folder's place in it."""

    top: Path
    folder: Path

    @property
    def folder_in_repo(self) -> str:
        """The folder relative to the top, as git spells paths (``.`` at the top)."""
        return self.folder.relative_to(self.top).as_posix() or "."


def find_repository(folder: Path) -> Repository:
    """The repository whose working tree holds ``folder``; ``NotInGitRepository`` when
    none does (or the folder is inside ``.git`` itself)."""
    folder = Path(os.path.realpath(folder))
    done = git(["rev-parse", "--show-toplevel"], folder, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise NotInGitRepository(folder)
    top = Path(os.path.realpath(done.stdout.strip()))
    if not folder.is_relative_to(top):
        raise NotInGitRepository(folder)
    return Repository(top, folder)


def git(args: list[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``git args`` in ``cwd``; ``GitError`` when git cannot be run, or (``check``)
    exits non-zero, with git's first line of complaint."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=False, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git could not be run ({type(exc).__name__}); is git installed?"
                       ) from None
    if check and done.returncode != 0:
        complaint = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise GitError(f"git {args[0]} failed: {complaint}")
    return done
