"""Running the user's ``git``: one subprocess per call, never a git library.

``sync`` uses the git a person would: their config, credentials, hooks and merge
drivers apply, exactly as if they had typed the commands. Every call runs in the
working tree's top level with ``-c core.quotePath=false`` (names come back as UTF-8, not
octal escapes) and ``GIT_TERMINAL_PROMPT=0`` (a missing credential fails instead of
hanging a sync waiting for a password nobody will type). Output names are read with
``-z`` wherever git offers it, so a file name with a newline stays one name.

A path given to git is a pathspec, a pattern: a memory folder named ``m*`` also matched
``main.py`` and ``mnotes.txt``, and sync committed and pushed them. So every path goes
through ``paths=``, spelt ``:(literal)<path>``, and the variables that change how git
reads pathspecs (``GIT_GLOB_PATHSPECS``…) are dropped from its environment. Not
``GIT_LITERAL_PATHSPECS=1``: hooks and merge drivers inherit git's environment, so the
user's own ``git diff -- '*.py'`` in a pre-commit hook would quietly match nothing, and
``git check-ignore`` refuses to run under it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import GitFailed, GitMissing
from ..files.controls import visible
from .repo import find_repository

PATHSPEC_SETTINGS = ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
                     "GIT_ICASE_PATHSPECS")
"""The environment that would change what ``:(literal)`` means (or refuse it)."""
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

    def run(self, *args: str, paths: Sequence[str] = (), check: bool = True,
            editor: bool = False) -> Ran:
        """``git ARGS -- PATHS`` in the top level, each path literal; GitFailed on a
        non-zero exit when ``check``. ``editor``: a ``rebase --continue`` that must not
        open one (``GIT_EDITOR=true``)."""
        spec = ("--", *(literal(path) for path in paths)) if paths else ()
        return run_git(self.top, *args, *spec, check=check, editor=editor)

    def lines(self, *args: str, paths: Sequence[str] = ()) -> list[str]:
        """The NUL-separated names a ``-z`` command prints."""
        return [name for name in self.run(*args, paths=paths).out.split("\0") if name]

    def path(self, relative: str) -> Path:
        return self.top / relative


def run_git(cwd: Path, *args: str, check: bool = True, editor: bool = False) -> Ran:
    """Run git; GitMissing when there is none, GitFailed (git's last line) when it fails."""
    program = shutil.which("git")
    if program is None:
        raise GitMissing()
    env = {k: v for k, v in os.environ.items() if k not in PATHSPEC_SETTINGS}
    env["GIT_TERMINAL_PROMPT"] = "0"
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


def literal(path: str) -> str:
    """``path`` as a pathspec that matches that path and what lies under it, nothing else."""
    return f":(literal){path}"


def outside(path: str) -> tuple[str, ...]:
    """The pathspecs of everything in the working tree but ``path`` (after ``--``)."""
    return ("--", ".", f":(exclude,literal){path}")


def open_repo(folder: Path) -> Repo:
    """The working tree holding ``folder`` (``repo.find_repository``, which the merge
    driver and ``install git`` share); NotInGitRepository when there is none."""
    if shutil.which("git") is None:
        raise GitMissing()
    return Repo(find_repository(folder).top)


def last_line(text: str) -> str:
    """git's last ``fatal:``/``error:`` line (else its last non-empty line), control
    characters made visible: the one that says why. The lines after it can be usage
    (``'git <command> [<revision>...] -- [<file>...]'``), the lines before progress."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return visible((said or lines)[-1]) if lines else ""


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
