"""``install git`` and its ``--undo``: the merge driver wired into the repository that
holds a memory folder.

Two things change, and ``--undo`` takes out exactly those:

- the folder's own ``.gitattributes`` (so the driver applies only inside the folder)
  gets ``ATTRIBUTE`` under the ``MARK`` comment line — a file install created is removed
  again, one it appended to loses exactly those lines (and the line break install had to
  add before them, which the comment then says: ``MARK_JOINED``), so it is byte for byte
  what it was;
- the repository's local git config gets ``merge.sagemem.name`` and
  ``merge.sagemem.driver``, set and unset with ``git config``.

One driver serves every file: it tells MEMORY.md by the path git gives it, and the
memory folder by the ``.gitattributes`` holding ``MARK`` above that path — so the driver
command names no folder, and the repository may move or hold several memory folders.
The command is the running interpreter's absolute path (``sys.executable -m sagemem``):
git runs it without the user's shell, where a venv's ``sagemem`` is not on PATH.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import UnsafeFile
from ..files.atomic import atomic_write
from ..files.paths import read_regular
from .repo import Repository, find_repository, git

ATTRIBUTES_FILE = ".gitattributes"
DRIVER = "sagemem"
MARK = "# sagemem merge driver: memories field by field (sagemem install git --undo)"
MARK_JOINED = f"{MARK} (and the line break before this line)"
ATTRIBUTE = f"*.md merge={DRIVER}"
NAME = "sagemem: memories field by field, MEMORY.md line by line"


@dataclass(frozen=True)
class GitChange:
    """One change install (or undo) makes: a file's text before and after (None: absent),
    or a git config key's value before and after (None: unset)."""

    what: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class GitPlan:
    """Everything ``install git`` (or ``--undo``) would change in one repository."""

    repository: Repository
    attributes: GitChange | None
    config: tuple[GitChange, ...]

    @property
    def changes(self) -> tuple[GitChange, ...]:
        return (*((self.attributes,) if self.attributes else ()), *self.config)


def driver_command(python: str | None = None) -> str:
    """What git runs: this interpreter's ``-m sagemem merge-driver`` over git's four
    placeholders, quoted for the shell git runs it with; after ``--``, so a memory named
    ``-x.md`` is a path, not an option."""
    return f"{shlex.quote(python or sys.executable)} -m sagemem merge-driver -- %O %A %B %P"


def plan_install(folder: Path, command: str | None = None) -> GitPlan:
    """The changes that wire the driver in for ``folder``; none when it is wired already."""
    repository = find_repository(folder)
    path = repository.folder / ATTRIBUTES_FILE
    before = _read(path)
    after = before if before is not None and _installed(before) else _with_ours(before)
    wanted = {f"merge.{DRIVER}.name": NAME, f"merge.{DRIVER}.driver": command or driver_command()}
    config = tuple(GitChange(key, now, value) for key, value in wanted.items()
                   if (now := _config(repository, key)) != value)
    attributes = GitChange(path.as_posix(), before, after) if after != before else None
    return GitPlan(repository, attributes, config)


def plan_undo(folder: Path) -> GitPlan:
    """The changes that take exactly install's entries out again; none when none are in."""
    repository = find_repository(folder)
    path = repository.folder / ATTRIBUTES_FILE
    before = _read(path)
    after = _without_ours(before) if before is not None else None
    keys = (f"merge.{DRIVER}.name", f"merge.{DRIVER}.driver")
    config = tuple(GitChange(key, now, None) for key in keys
                   if (now := _config(repository, key)) is not None)
    attributes = GitChange(path.as_posix(), before, after) if after != before else None
    return GitPlan(repository, attributes, config)


def apply(plan: GitPlan) -> None:
    """Make the plan's changes: the attributes file atomically, then each config key."""
    change = plan.attributes
    if change is not None:
        path = Path(change.what)
        if change.after is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, change.after.encode("utf-8"), create=change.before is None)
    for setting in plan.config:
        if setting.after is None:
            git(["config", "--local", "--unset-all", setting.what], plan.repository.top)
        else:
            git(["config", "--local", setting.what, setting.after], plan.repository.top)


def _read(path: Path) -> str | None:
    """The attributes file's text, None when absent; a symlink is refused (never edit
    what it points at, maybe outside the folder)."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink():
        raise UnsafeFile(path, "it is a symlink; sagemem edits only regular files")
    return read_regular(path).data.decode("utf-8")


def _installed(text: str) -> bool:
    lines = text.splitlines()
    return any(line in (MARK, MARK_JOINED) for line in lines) and ATTRIBUTE in lines


def _with_ours(text: str | None) -> str:
    """``text`` with our two lines appended (a file of its own when there is none)."""
    if text is None:
        return f"{MARK}\n{ATTRIBUTE}\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    if text.endswith("\n"):
        return f"{text}{MARK}{newline}{ATTRIBUTE}{newline}"
    return f"{text}{newline}{MARK_JOINED}{newline}{ATTRIBUTE}{newline}"


def _without_ours(text: str) -> str | None:
    """``text`` with our lines taken out; None when it is exactly the file install
    creates (so undo removes it). Lines a person changed are not ours and stay."""
    if text == f"{MARK}\n{ATTRIBUTE}\n":
        return None
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    joined_at: int | None = None  # where install added a line break of its own
    skip_attribute = False
    for line in lines:
        bare = line.rstrip("\r\n")
        if bare in (MARK, MARK_JOINED):
            if bare == MARK_JOINED:
                joined_at = len(kept)
            skip_attribute = True
            continue
        if skip_attribute and bare == ATTRIBUTE:
            skip_attribute = False
            continue
        skip_attribute = False
        kept.append(line)
    # that line break goes only if nothing was added after our lines: a line added since
    # would otherwise join the last line before them (a rule turned into a comment)
    if joined_at is not None and joined_at == len(kept) and kept:
        kept[-1] = kept[-1].rstrip("\r\n")
    return "".join(kept)


def _config(repository: Repository, key: str) -> str | None:
    done = git(["config", "--local", "--get", key], repository.top, check=False)
    return done.stdout.rstrip("\n") if done.returncode == 0 else None
