"""How a sync's rebase stops, and the conflict records it leaves behind.

A rebase stops on a conflict (``SyncStopped``: the files as ``git status`` names them,
from the repository's top, the merge driver's own lines passed on — which field or part
conflicts — and ``sagemem conflicts`` named when the driver queued records), or finishes
with the user's set-aside work not put back (``AutostashConflict``: git exits 0, leaves
the files unmerged and keeps the work in the stash, so a sync must look for itself).

The driver queues an ``unresolved_merge`` record (writer ``git``) per file it could not
merge. A record queued since the sync's rebase began is closed once its file is
resolved (``--continue``), or when the rebase is aborted: the aborted merge is gone from
the working tree, and the next sync that meets it queues a fresh record.
"""

from __future__ import annotations

from collections.abc import Collection

from ..errors import AutostashConflict, GitFailed, SagememError, SyncStopped
from ..files.controls import visible
from ..store import MemoryStore
from ..writes import conflicts
from ..writes.resolve import settle
from . import record
from .driver import WRITER
from .git import Ran, Repo, last_line
from .upstream import rebasing, unmerged

DRIVER_PREFIX = "sagemem: "
"""How the merge driver's own stderr lines begin (``cli/gitsync.py``)."""
MAX_DRIVER_LINES = 10  # a rebase of many commits can conflict in many files: the first say it
RESOLVED = "resolved in git by sync --continue"
ABANDONED = "abandoned: the rebase was aborted"


def raise_stopped(repo: Repo, store: MemoryStore, ran: Ran) -> None:
    """A rebase that did not finish: SyncStopped naming its files and passing the merge
    driver's lines on, else GitFailed with git's reason."""
    files = unmerged(repo)
    if files or rebasing(repo):
        started = record.load(store.state_dir).started
        queued = bool(started and queued_since(store, started))
        raise SyncStopped(files, queued=queued, said=driver_lines(ran.err + "\n" + ran.out))
    raise GitFailed("rebase", last_line(ran.err or ran.out))


def stash_top(repo: Repo) -> str | None:
    """The newest stash entry's commit (None: no stash): one the rebase adds is the
    autostash git kept because it could not apply it."""
    ran = repo.run("rev-parse", "-q", "--verify", "refs/stash", check=False)
    return ran.out.strip() if ran.code == 0 else None


def require_put_back(repo: Repo, store: MemoryStore, stash_before: str | None) -> None:
    """AutostashConflict when a finished rebase left unmerged paths anywhere in the
    working tree, or a new stash entry (the autostash kept): nothing is pushed over
    them. git exits 0 either way, so its exit code cannot tell."""
    files = unmerged(repo)
    if files or stash_top(repo) != stash_before:
        record.update(store.state_dir, stopped_from=None, snapshot=None, pulled=0,
                      started=None)
        raise AutostashConflict(files)


def driver_lines(text: str) -> tuple[str, ...]:
    """The merge driver's own lines in git's output, its prefix dropped, the first
    ``MAX_DRIVER_LINES``, control characters made visible."""
    lines = [visible(line.strip().removeprefix(DRIVER_PREFIX)) for line in text.splitlines()
             if line.strip().startswith(DRIVER_PREFIX)]
    return tuple(dict.fromkeys(lines))[:MAX_DRIVER_LINES]


def queued_since(store: MemoryStore, started: str) -> list[conflicts.Conflict]:
    """The driver's open ``unresolved_merge`` records queued since ``started``."""
    return [item for item in conflicts.list_conflicts(store.state_dir, status="open")
            if item.kind == "unresolved_merge" and item.writer == WRITER
            and item.created >= started]


def close_records(store: MemoryStore, records: list[conflicts.Conflict], decision: str,
                  *, still: Collection[str] = ()) -> tuple[str, ...]:
    """Close ``records`` with ``decision``, but those whose file is in ``still`` (the
    folder's names git still lists unmerged); the ids closed. A record that cannot be
    closed stays open: the sync itself has succeeded."""
    closed = []
    for item in records:
        if item.file in still:
            continue
        try:
            settle(store, item.id, decision)
        except (SagememError, OSError):
            continue
        closed.append(item.id)
    return tuple(closed)
