"""The second half of a sync stopped on a conflict: ``sagemem sync --continue`` and
``--abort``.

``--continue`` refuses while git lists a file as unmerged or a staged file of the folder
holds markers (``NotResolved``), stages the folder's other edits, runs ``git rebase
--continue`` and then the rest of the sync (``sync.finish``: index, push, journal line).
What it reports as pulled is what the stopped sync recorded it was pulling, not the
commits since its start (which count the user's own, replayed). ``--abort`` runs ``git
rebase --abort``. Either closes the merge driver's conflict records queued since the
rebase began (``stops.py``): resolved, or abandoned with the rebase.
"""

from __future__ import annotations

from ..errors import NotResolved
from ..store import MemoryStore
from . import record
from .stops import ABANDONED, RESOLVED, close_records, queued_since, raise_stopped
from .sync import Run, SyncReport, finish, in_folder, marked, open_run
from .upstream import head, unmerged


def continue_sync(store: MemoryStore, *, push: bool = True,
                  writer: str = "library") -> SyncReport:
    """Carry on a sync stopped on a conflict, once its files are resolved — staged with
    ``git add``, no merge marker left (NotResolved until then); then ``git rebase
    --continue`` and the rest of the sync (index, push, journal line)."""
    run = open_run(store, stopped=("rebase --continue", "run `sagemem sync`"))
    _require_resolved(run)
    saved = record.load(store.state_dir)
    queued = queued_since(store, saved.started) if saved.started else []
    ran = run.repo.run("rebase", "--continue", check=False, editor=True)
    store.notice_change()
    still = {in_folder(run, name) for name in unmerged(run.repo)}
    closed = close_records(store, queued, RESOLVED, still=still)
    if ran.code != 0:
        raise_stopped(run.repo, store, ran)
    return finish(run, saved.stopped_from, saved.snapshot, push=push, writer=writer,
                  notices=(), files=(), committed=None, message=None, pulled=saved.pulled,
                  resumed=True, closed=closed)


def abort_sync(store: MemoryStore) -> str | None:
    """Go back to where a stopped sync began (``git rebase --abort``): the commit of
    the folder's own changes stays, nothing pulled remains; the conflict records the
    rebase queued are closed as abandoned. The commit now checked out."""
    run = open_run(store, stopped=("rebase --abort", "nothing to abort"))
    saved = record.load(store.state_dir)
    run.repo.run("rebase", "--abort")
    record.update(store.state_dir, stopped_from=None, snapshot=None, pulled=0, started=None)
    store.notice_change()
    if saved.started:
        close_records(store, queued_since(store, saved.started), ABANDONED)
    return head(run.repo)


def _require_resolved(run: Run) -> None:
    """NotResolved while git lists a file as unmerged — resolved means staged: a driver
    that failed can leave one side and no marker in a conflicted file — or a staged file
    of the folder holds markers. The folder's other edits are staged for the commit."""
    held = unmerged(run.repo)
    if held:
        raise NotResolved(held)
    run.repo.run("add", "-A", paths=[run.folder])
    found = marked(run, run.repo.lines("diff", "--cached", "--name-only", "-z",
                                       paths=[run.folder]))
    if found:
        raise NotResolved(found, markers=True)
