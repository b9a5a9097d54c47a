"""Where a sync pulls from and pushes to: the branch's upstream, read from git's own
config (``branch.<name>.remote``/``.merge``) — the setting ``git push -u`` writes.

Read from the config rather than ``@{u}`` because a clone of an empty repository has an
upstream configured whose remote branch does not exist yet: its first sync pushes and
creates it, with nothing to pull.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import DetachedHead, NoUpstream, RebaseInProgress, SyncStopped
from ..files.controls import visible
from .git import Repo

HEADS = "refs/heads/"


@dataclass(frozen=True)
class Upstream:
    """``remote`` and its branch (``refs/heads/main``); ``tracking``: the local copy of
    it (``refs/remotes/origin/main``)."""

    branch: str
    remote: str
    merge: str

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.merge.removeprefix(HEADS)}"

    @property
    def name(self) -> str:
        return f"{self.remote}/{self.merge.removeprefix(HEADS)}"


def upstream_of(repo: Repo) -> Upstream:
    """The checked-out branch's upstream; NoUpstream naming the command that sets one."""
    ran = repo.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
    branch = ran.out.strip() if ran.code == 0 else _rebased_branch(repo)
    if branch is None:
        raise DetachedHead()
    remote = _config(repo, f"branch.{branch}.remote")
    merge = _config(repo, f"branch.{branch}.merge")
    if remote is None or merge is None or remote == ".":
        remotes = repo.run("remote").out.split()
        raise NoUpstream(visible(branch), visible(remotes[0]) if remotes else None)
    return Upstream(branch, remote, merge)


def head(repo: Repo) -> str | None:
    """The commit checked out; None on an unborn branch (a new repository)."""
    ran = repo.run("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    return ran.out.strip() if ran.code == 0 else None


def exists(repo: Repo, ref: str) -> bool:
    return repo.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False).code == 0


def count(repo: Repo, revisions: str) -> int:
    """How many commits ``A..B`` holds."""
    return int(repo.run("rev-list", "--count", revisions).out.strip() or 0)


def rebasing(repo: Repo) -> bool:
    """Whether a rebase is stopped half-way in this working tree."""
    for name in ("rebase-merge", "rebase-apply"):
        path = repo.run("rev-parse", "--git-path", name).out.strip()
        if os.path.isdir(path if os.path.isabs(path) else repo.top / path):
            return True
    return False


def require_not_rebasing(repo: Repo, started_from: str | None) -> None:
    """SyncStopped when a sync's rebase is stopped (a new sync would stack on it),
    RebaseInProgress when someone else's is."""
    if rebasing(repo):
        require_own_rebase(repo, started_from)
        raise SyncStopped(unmerged(repo), in_progress=True)


def require_own_rebase(repo: Repo, started_from: str | None) -> None:
    """RebaseInProgress unless the rebase stopped here is the one a sync started from
    ``started_from`` (the commit the branch was at: git's ``orig-head``). A user's own
    rebase is theirs to continue or abort, with their own resolution."""
    if started_from is None or _rebase_file(repo, "orig-head") != started_from:
        raise RebaseInProgress()


def unmerged(repo: Repo) -> list[str]:
    """The files a stopped rebase left conflicting, as git names them (from the top):
    those with an unmerged entry in the index, markers or not, until ``git add``."""
    names = repo.lines("diff", "--name-only", "--diff-filter=U", "-z")
    return [visible(name) for name in dict.fromkeys(names)]


def _rebased_branch(repo: Repo) -> str | None:
    """The branch a stopped rebase is replaying (HEAD is detached meanwhile)."""
    ref = _rebase_file(repo, "head-name")
    return ref.removeprefix(HEADS) if ref is not None and ref.startswith(HEADS) else None


def _rebase_file(repo: Repo, name: str) -> str | None:
    """A stopped rebase's own record (``head-name``, ``orig-head``), stripped; None when
    no rebase is stopped."""
    for where in ("rebase-merge", "rebase-apply"):
        path = Path(repo.run("rev-parse", "--git-path", f"{where}/{name}").out.strip())
        try:
            return (path if path.is_absolute() else repo.top / path).read_text().strip()
        except OSError:
            continue
    return None


def _config(repo: Repo, key: str) -> str | None:
    ran = repo.run("config", "--get", key, check=False)
    return ran.out.strip() or None if ran.code == 0 else None
