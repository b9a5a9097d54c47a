"""Running the user's ``git``: one subprocess per call, never a git library.

``sync`` uses the git a person would: their config, credentials, hooks and merge
drivers apply, exactly as if they had typed the commands. Every call runs in the
working tree's top level with ``-c core.quotePath=false`` (names come back as UTF-8, not
octal escapes) and ``GIT_TERMINAL_PROMPT=0`` (a missing credential fails instead of
hanging a sync waiting for a password nobody will type). Output names are read with
``-z`` wherever git offers it, so a file name with a newline stays one name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import GitFailed, GitMissing
from ..files.controls import visible
from .repo import find_repository

TIMEOUT_SECONDS = 600
"""A push or fetch over a slow network; past this, the sync stops with git's command
named rather than hanging an agent's session."""


@dataclass(frozen=True)
class Ran:
    """One git command's exit code and output."""

    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Repo:
    """A git working tree: its top level, where every command runs."""

    top: Path

    def run(self, *args: str, check: bool = True, editor: bool = False) -> Ran:
        """``git ARGS`` in the top level; GitFailed on a non-zero exit when ``check``.
        ``editor``: a ``rebase --continue`` that must not open one (``GIT_EDITOR=true``)."""
        return run_git(self.top, *args, check=check, editor=editor)

    def lines(self, *args: str) -> list[str]:
        """The NUL-separated names a ``-z`` command prints."""
        return [name for name in self.run(*args).out.split("\0") if name]

    def path(self, relative: str) -> Path:
        return self.top / relative


def run_git(cwd: Path, *args: str, check: bool = True, editor: bool = False) -> Ran:
    """Run git; GitMissing when there is none, GitFailed (git's last line) when it fails."""
    program = shutil.which("git")
    if program is None:
        raise GitMissing()
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    if editor:
        env["GIT_EDITOR"] = "true"
    try:
        done = subprocess.run([program, "-c", "core.quotePath=false", *args], cwd=cwd,
                              env=env, capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise GitFailed(" ".join(args), f"no answer in {TIMEOUT_SECONDS} s") from None
    except OSError as exc:
        raise GitFailed(" ".join(args), exc.strerror or str(exc)) from None
    ran = Ran(done.returncode, _text(done.stdout), _text(done.stderr))
    if check and ran.code != 0:
        raise GitFailed(" ".join(args[:2]), last_line(ran.err or ran.out))
    return ran


def open_repo(folder: Path) -> Repo:
    """The working tree holding ``folder`` (``repo.find_repository``, which the merge
    driver and ``install git`` share); NotInGitRepository when there is none."""
    if shutil.which("git") is None:
        raise GitMissing()
    return Repo(find_repository(folder).top)


def last_line(text: str) -> str:
    """git's last non-empty line, control characters made visible: the one that says
    why (the lines before are progress and hints)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return visible(lines[-1]) if lines else ""


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
