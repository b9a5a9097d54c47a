"""State never travels: before a sync commits, the state directory is checked to be
ignored in the working tree (``git check-ignore``), the ``.gitignore`` line is added
when it is not (``files/gitignore.py``, the same rule ``init`` follows), and a commit
that would still carry a path inside it is refused; so is a pull whose commits carry
one (another clone committed its own state, before the state directory ignored itself):
checked out, it would overwrite this clone's snapshots and journal.

Snapshots, locks, the change journal and the index are this clone's; pushed, they would
arrive in every other clone and be merged there like memories.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StateIncoming, StateWouldTravel
from ..files.controls import visible
from ..files.gitignore import ignore_for, ignore_state_dir
from .git import Repo


def relative_in(repo: Repo, path: Path) -> str | None:
    """``path`` relative to the working tree's top (posix), or None when outside it."""
    top = Path(os.path.realpath(repo.top))
    real = Path(os.path.realpath(path))
    if real != top and top not in real.parents:
        return None
    return real.relative_to(top).as_posix() if real != top else "."


def keep_state_out(repo: Repo, memory_dir: Path, state_dir: Path, *,
                   dry_run: bool = False) -> str | None:
    """Make sure git ignores ``state_dir``; a notice for the user when a ``.gitignore``
    line was added (or, on a dry run, would be), None when nothing was needed."""
    relative = relative_in(repo, state_dir)
    if relative is None or relative == "." or _ignored(repo, relative):
        return None
    planned = ignore_for(memory_dir, state_dir)
    if planned is None:
        return None
    said = (f"{visible(planned.line)} to {visible(str(planned.gitignore))} so the state "
            "directory stays out of git")
    if dry_run:
        return f"would add {said}"
    ignore_state_dir(memory_dir, state_dir)
    return f"added {said}"


def refuse_staged_state(repo: Repo, state_dir: Path) -> None:
    """StateWouldTravel (and the paths unstaged again) when the index holds a change
    inside the state directory — a negated pattern, a forced add, a committed copy."""
    relative = relative_in(repo, state_dir)
    if relative is None or relative == ".":
        return
    staged = repo.lines("diff", "--cached", "--name-only", "-z", paths=[relative])
    if staged:
        repo.run("reset", "-q", paths=[relative])
        raise StateWouldTravel([visible(name) for name in staged],
                               ignored=_ignored(repo, relative), state=visible(relative))


def refuse_incoming_state(repo: Repo, state_dir: Path, upstream: str, *, unborn: bool,
                          kept: str | None) -> None:
    """StateIncoming when a commit of the upstream's that HEAD lacks (``HEAD..<upstream>``;
    on an unborn branch, every one) changes a path inside the state directory."""
    relative = relative_in(repo, state_dir)
    if relative is None or relative == ".":
        return
    found = repo.lines("log", "--format=", "--name-only", "-z", "--no-renames",
                       upstream if unborn else f"HEAD..{upstream}", paths=[relative])
    if found:
        raise StateIncoming([visible(name) for name in dict.fromkeys(found)],
                            visible(relative), kept)


def _ignored(repo: Repo, relative: str) -> bool:
    # The trailing slash: a `/x/` pattern matches directories only, and check-ignore
    # only knows a path names one when it is spelt as one. check-ignore takes no pathspec
    # magic (not even `:(literal)`) and reads no pattern in its paths, but a leading `:`
    # would still be read as magic: `./` keeps the name whole.
    # The state directory's own `.gitignore` of `*` matches it too, but that is the
    # first of the two guards, not the working tree's line this check is about.
    ran = repo.run("check-ignore", "-v", "--", f"./{relative}/", check=False)
    source = ran.out.split(":", 1)[0]
    return ran.code == 0 and source != f"{relative}/.gitignore"
