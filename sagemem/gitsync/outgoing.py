"""What a sync's push would carry, and the two rules that keep it to the memory folder.

A push sends the branch, not one commit: every local commit the upstream lacks goes with
the memory commit — a "WIP: do not push" touching ``main.py`` among them. So:

1. a sync pushes **memory commits only**: when any commit to be pushed changes a path
   outside the memory folder, the sync stops before the pull (``ForeignCommits``), its
   own commit kept; the user pushes their work with git, or syncs with ``--no-push``;
2. a plain rebase flattens merge commits, so a sync that must rebase stops when the
   commits to be pushed hold one (``LocalMerges``).

"To be pushed" is what the upstream lacks (``<upstream>..HEAD``); before the upstream
branch exists (a first push), what no branch of that remote holds. A commit changes the
paths git's history simplification shows for ``-- . ':(exclude)<folder>'`` (literal, see
``git.py``): a merge only when its result outside the folder differs from every parent,
so merging the upstream's own code in does not count. ``push_memory`` pushes, under
rule 1 again (a ``--continue`` may follow a ``--no-push``), never forced.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ForeignCommits, GitFailed, PushRejected
from ..files.controls import visible
from .git import Repo, last_line, outside
from .upstream import Upstream, count, exists, head


@dataclass(frozen=True)
class Outgoing:
    """``count``: the commits a push would carry; ``foreign``: those changing paths
    outside the folder and ``merges``: the merge commits, each ``<short hash> <subject>``
    (made visible), newest first."""

    count: int = 0
    foreign: tuple[str, ...] = ()
    merges: tuple[str, ...] = ()


def outgoing(repo: Repo, upstream: Upstream, folder: str) -> Outgoing:
    """The commits HEAD holds and the upstream lacks, and which of them the rules stop."""
    if head(repo) is None:
        return Outgoing()
    span = _span(repo, upstream)
    total = int(repo.run("rev-list", "--count", *span).out.strip() or 0)
    if not total:
        return Outgoing()
    foreign = () if folder == "." else _listed(repo, *span, *outside(folder))
    return Outgoing(total, foreign, _listed(repo, "--merges", *span))


def _span(repo: Repo, upstream: Upstream) -> tuple[str, ...]:
    if exists(repo, upstream.tracking):
        return ("HEAD", "--not", upstream.tracking)
    return ("HEAD", "--not", f"--remotes={upstream.remote}")


def _listed(repo: Repo, *args: str) -> tuple[str, ...]:
    """``git log``'s ``<short hash> <subject>`` lines, one per commit."""
    out = repo.run("log", "-z", "--no-show-signature", "--format=%h %s", *args).out
    return tuple(visible(line) for line in out.split("\0") if line)


def push_memory(repo: Repo, up: Upstream, folder: str, *, pulled: bool) -> int:
    """Push what the upstream lacks (never forced), memory commits only; how many went.
    PushRejected when the remote moved on meanwhile; ``pulled``: said in ForeignCommits."""
    out = outgoing(repo, up, folder)
    if out.foreign:
        raise ForeignCommits(list(out.foreign), None, pulled=pulled)
    if not out.count:
        return 0
    ran = repo.run("push", "-q", up.remote, f"HEAD:{up.merge}", check=False)
    if ran.code == 0:
        return out.count
    repo.run("fetch", "-q", up.remote, check=False)
    if exists(repo, up.tracking) and count(repo, f"HEAD..{up.tracking}"):
        raise PushRejected(visible(up.name))
    raise GitFailed("push", last_line(ran.err or ran.out))
