"""``sagemem sync``: commit what changed in the memory folder, pull with rebase, push.

In order, each step stopping the sync with one clear error when it cannot go on:

1. refuse while an operation is pending (``history/journal.py``, as ``recover`` reads
   it) or a sync is stopped half-way (``--continue`` or ``--abort`` it first), while a
   rebase sagemem did not start is stopped (``RebaseInProgress``: git's to finish), and
   when git, the repository, a checked-out branch or the upstream is missing (the error
   names the command);
2. keep the state directory out of git (``keepout.py``);
3. commit the folder's paths only — ``git add -A -- <folder>`` and ``git commit --
   <folder>``, every path literal (``git.py``): whatever else the user has staged in the
   repository stays staged and uncommitted (``--only`` semantics), and other uncommitted
   work is set aside and put back by git's ``--autostash`` around the rebase. A file
   still holding merge markers is refused before anything is staged
   (``MarkersInFolder``). The message comes from the change journal since the last sync
   (``message.py``); the journal position moves once the commit is made, so a commit a
   hook refuses leaves its lines to the next message;
4. fetch; refuse to go on when the push would carry commits changing files outside the
   folder, or a needed rebase would flatten a local merge (``outgoing.py``); when the
   upstream has new commits, take a rollback snapshot (kind ``auto``, label ``before
   sync``) so ``sagemem rollback`` undoes a bad merge, then rebase onto the upstream,
   through the merge driver when it is installed. A conflict stops here
   (``SyncStopped``, naming the files and ``sagemem sync --continue``);
5. tell the index the files changed, report any left with merge markers;
6. push — memory commits only (checked again: a ``--continue`` may follow a
   ``--no-push``), never forced: a rejection (the remote moved on) is ``PushRejected``;
7. journal a ``sync`` line with the commit reached, and remember the journal position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import (
    ForeignCommits,
    GitFailed,
    LocalMerges,
    MarkersInFolder,
    NotResolved,
    PushRejected,
    SagememError,
    SyncStopped,
)
from ..files.controls import visible
from ..files.paths import INDEX_FILE, read_chunks
from ..history import journal
from ..history.snapshots import create_snapshot
from ..store import MemoryStore
from ..writes.changelog import Entry
from ..writes.guard import merge_marker_line
from . import record
from .git import Repo, last_line, open_repo
from .keepout import keep_state_out, refuse_staged_state, relative_in
from .message import commit_message
from .outgoing import Outgoing, outgoing
from .upstream import (
    Upstream,
    count,
    exists,
    head,
    rebasing,
    require_not_rebasing,
    require_own_rebase,
    unmerged,
    upstream_of,
)

DRIVER_HINT = ("the sagemem merge driver is not installed in this repository, so git's "
               "default merge is used; `sagemem install git` installs it")


@dataclass(frozen=True)
class SyncReport:
    """What a sync did (or, ``dry_run``, would do). ``committed``: the commit made
    (None: nothing to commit); ``files``: the folder's paths it carried; ``incoming``:
    the folder's files the pull changed; ``commit``: HEAD at the end; ``snapshot``: the
    rollback snapshot taken before the pull; ``markers``: files left with merge markers
    (a dry run: those it would refuse to commit). A dry run's ``held``: the commits it
    would refuse to push, ``merges``: the local merges it would refuse to rebase."""

    upstream: str
    committed: str | None = None
    message: str | None = None
    files: tuple[str, ...] = ()
    incoming: tuple[str, ...] = ()
    pulled: int = 0
    pushed: int = 0
    commit: str | None = None
    snapshot: str | None = None
    markers: tuple[str, ...] = ()
    notices: tuple[str, ...] = field(default=())
    dry_run: bool = False
    held: tuple[str, ...] = ()
    merges: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Sync:
    store: MemoryStore
    repo: Repo
    upstream: Upstream
    folder: str  # the memory folder relative to the top, the pathspec of every command


def sync(store: MemoryStore, *, message: str | None = None, push: bool = True,
         dry_run: bool = False, keep: int = 20, writer: str = "library") -> SyncReport:
    """Commit, pull with rebase and push the memory folder (see the module doc).
    ``keep``: the snapshot rotation (``snapshot_keep``). SyncStopped on a conflict."""
    run, notices = _begin(store, dry_run=dry_run)
    if dry_run:
        return _dry_run(run, notices, message, push=push)
    files, committed, text = _commit(run, message)
    before = head(run.repo)
    pulled = _fetch(run)
    _require_pushable(run, outgoing(run.repo, run.upstream, run.folder), push=push,
                      pulled=pulled, kept=committed)
    snapshot = None
    if pulled:
        snapshot = create_snapshot(store, label="before sync", kind="auto", keep=keep,
                                   reason=f"before sagemem sync pulled {run.upstream.name}").id
        _rebase(run, before, snapshot)
    return _finish(run, before, snapshot, push=push, writer=writer, notices=notices,
                   files=files, committed=committed, message=text, pulled=pulled)


def continue_sync(store: MemoryStore, *, push: bool = True,
                  writer: str = "library") -> SyncReport:
    """Carry on a sync stopped on a conflict, once its files are resolved — staged with
    ``git add``, no merge marker left (NotResolved until then); then ``git rebase
    --continue`` and the rest of the sync (index, push, journal line)."""
    run = _open(store, stopped=("rebase --continue", "run `sagemem sync`"))
    _require_resolved(run)
    saved = record.load(store.state_dir)
    _continue_rebase(run)
    return _finish(run, saved.stopped_from, saved.snapshot, push=push, writer=writer,
                   notices=(), files=(), committed=None, message=None,
                   pulled=_pulled_since(run, saved.stopped_from))


def abort_sync(store: MemoryStore) -> str | None:
    """Go back to where a stopped sync began (``git rebase --abort``): the commit of
    the folder's own changes stays, nothing pulled remains. The commit now checked out."""
    run = _open(store, stopped=("rebase --abort", "nothing to abort"))
    run.repo.run("rebase", "--abort")
    record.update(store.state_dir, stopped_from=None, snapshot=None)
    store.notice_change()
    return head(run.repo)


# -- the steps -----------------------------------------------------------------------------

def _open(store: MemoryStore, *, stopped: tuple[str, str] | None = None) -> _Sync:
    """The repository, the folder in it and the upstream, once the rebase state fits:
    none stopped for a sync, else (``stopped``: the git command and what to do when
    none is) the one a sync started. Checked before the branch: a rebase detaches HEAD."""
    store.require_directory()
    repo = open_repo(store.directory)
    started = record.load(store.state_dir).stopped_from
    if stopped is None:
        require_not_rebasing(repo, started)
    elif not rebasing(repo):
        raise GitFailed(stopped[0], f"no sync is stopped here; {stopped[1]}")
    else:
        require_own_rebase(repo, started)
    folder = relative_in(repo, store.directory)
    if folder is None:  # the top resolved through a link the folder's path does not take
        raise GitFailed("rev-parse", f"{visible(str(store.directory))} is not inside "
                                     f"{visible(str(repo.top))}")
    return _Sync(store, repo, upstream_of(repo), folder)


def _begin(store: MemoryStore, *, dry_run: bool) -> tuple[_Sync, tuple[str, ...]]:
    """The checks of step 1 and the state directory of step 2."""
    with store.locked(dry_run=dry_run):
        journal.require_none_pending(store.state_dir)
    run = _open(store)
    notices = [keep_state_out(run.repo, store.directory, store.state_dir, dry_run=dry_run),
               None if dry_run else _driver_hint(run)]
    return run, tuple(n for n in notices if n)


def _commit(run: _Sync, subject: str | None) -> tuple[tuple[str, ...], str | None, str | None]:
    """Stage and commit the folder's changes: (files, commit, message); no commit when
    nothing changed. The journal position moves only past lines a commit carried (or,
    nothing to commit, that need none): a hook that refuses the commit keeps them."""
    marked = _marked(run, _status_names(_status(run)))
    if marked:
        raise MarkersInFolder(marked)
    run.repo.run("add", "-A", paths=[run.folder])
    refuse_staged_state(run.repo, run.store.state_dir)
    files = tuple(run.repo.lines("diff", "--cached", "--name-only", "-z", paths=[run.folder]))
    entries = record.new_entries(run.store.state_dir, record.load(run.store.state_dir).covered)
    text = commit_message(entries, _by_hand(run, files, entries), subject=subject
                          ) if files else None
    if text is not None:
        run.repo.run("commit", "-q", "-m", text, paths=[run.folder])
    if entries:
        record.update(run.store.state_dir, covered=entries[-1].time)
    if text is None:
        return (), None, None
    return tuple(visible(f) for f in files), head(run.repo), text


def _by_hand(run: _Sync, files: Sequence[str], entries: list[Entry]) -> list[str]:
    """The committed files no journal line names: edits made outside sagemem. MEMORY.md
    counts only when no line does: a create or an archive changes its index line too."""
    known = {n.casefold() for e in entries for n in (e.file, e.to) if n}
    if entries:
        known.add(INDEX_FILE.casefold())
    names = [_in_folder(run, f) for f in files]
    return [n for n in names if n.casefold() not in known]


def _fetch(run: _Sync) -> int:
    """Fetch the upstream; how many of its commits HEAD lacks."""
    run.repo.run("fetch", "-q", run.upstream.remote)
    if not exists(run.repo, run.upstream.tracking) or head(run.repo) is None:
        return 0
    return count(run.repo, f"HEAD..{run.upstream.tracking}")


def _require_pushable(run: _Sync, out: Outgoing, *, push: bool, pulled: int,
                      kept: str | None) -> None:
    """The rules of ``outgoing.py``: ForeignCommits when the push would carry the user's
    other work, LocalMerges when the rebase the pull needs would flatten a merge."""
    if push and out.foreign:
        raise ForeignCommits(list(out.foreign), kept)
    if pulled and out.merges:
        raise LocalMerges(list(out.merges), kept)


def _rebase(run: _Sync, before: str | None, snapshot: str | None) -> None:
    record.update(run.store.state_dir, stopped_from=before, snapshot=snapshot)
    ran = run.repo.run("rebase", "-q", "--autostash", run.upstream.tracking, check=False)
    run.store.notice_change()
    if ran.code != 0:
        _stopped(run, ran.err or ran.out)


def _continue_rebase(run: _Sync) -> None:
    ran = run.repo.run("rebase", "--continue", check=False, editor=True)
    run.store.notice_change()
    if ran.code != 0:
        _stopped(run, ran.err or ran.out)


def _stopped(run: _Sync, said: str) -> None:
    """A rebase that did not finish: SyncStopped naming its files, else git's reason."""
    files = unmerged(run.repo)
    if files or rebasing(run.repo):
        raise SyncStopped([_in_folder(run, f) for f in files])
    raise GitFailed("rebase", last_line(said))


def _require_resolved(run: _Sync) -> None:
    """NotResolved while git lists a file as unmerged — resolved means staged: a driver
    that failed can leave one side and no marker in a conflicted file — or a staged file
    of the folder holds markers. The folder's other edits are staged for the commit."""
    held = unmerged(run.repo)
    if held:
        raise NotResolved([_in_folder(run, f) for f in held])
    run.repo.run("add", "-A", paths=[run.folder])
    marked = _marked(run, run.repo.lines("diff", "--cached", "--name-only", "-z",
                                         paths=[run.folder]))
    if marked:
        raise NotResolved(marked, markers=True)


def _finish(run: _Sync, before: str | None, snapshot: str | None, *, push: bool, writer: str,
            notices: tuple[str, ...], files: tuple[str, ...], committed: str | None,
            message: str | None, pulled: int) -> SyncReport:
    """Steps 5 to 7, shared by a sync and its ``--continue``."""
    state_dir = run.store.state_dir
    record.update(state_dir, stopped_from=None, snapshot=None)
    incoming = _changed_since(run, before) if pulled else ()
    markers = tuple(f for f in incoming if _has_markers(run.store.directory / f))
    pushed = _push(run, pulled=bool(pulled)) if push else 0
    reached = head(run.repo)
    warned = record.log_sync(state_dir, reached, incoming, writer=writer,
                             pushed=bool(pushed)) if reached else None
    return SyncReport(visible(run.upstream.name), committed, message, files, incoming, pulled,
                      pushed, reached, snapshot, markers,
                      notices + ((warned,) if warned else ()))


def _push(run: _Sync, *, pulled: bool) -> int:
    """Push what the upstream lacks (never forced), memory commits only; how many went."""
    up = run.upstream
    out = outgoing(run.repo, up, run.folder)
    if out.foreign:
        raise ForeignCommits(list(out.foreign), None, pulled=pulled)
    ahead = out.count
    if not ahead:
        return 0
    ran = run.repo.run("push", "-q", up.remote, f"HEAD:{up.merge}", check=False)
    if ran.code == 0:
        return ahead
    run.repo.run("fetch", "-q", up.remote, check=False)
    if exists(run.repo, up.tracking) and count(run.repo, f"HEAD..{up.tracking}"):
        raise PushRejected(visible(up.name))
    raise GitFailed("push", last_line(ran.err or ran.out))


def _dry_run(run: _Sync, notices: tuple[str, ...], subject: str | None, *,
             push: bool) -> SyncReport:
    """What a sync would commit, pull and push, and what it would refuse; only the fetch
    runs (it moves no branch and no file — the remote's commits must be fetched to be
    counted). A refusal reports nothing pulled or pushed: the sync would stop first."""
    names = _status_names(_status(run))
    files = tuple(visible(name) for name in names)
    marked = tuple(_marked(run, names))
    entries = record.new_entries(run.store.state_dir, record.load(run.store.state_dir).covered)
    text = commit_message(entries, _by_hand(run, names, entries), subject=subject
                          ) if files and not marked else None
    pulled = _fetch(run)
    out = outgoing(run.repo, run.upstream, run.folder)
    held = out.foreign if push else ()
    merges = out.merges if pulled else ()
    if marked or held or merges:
        pulled, pushed = 0, 0
    else:
        pushed = out.count + (1 if files else 0) if push else 0
    return SyncReport(visible(run.upstream.name), None, text, files, (), pulled, pushed,
                      head(run.repo), None, marked, notices, dry_run=True, held=held,
                      merges=merges)


# -- small readers -------------------------------------------------------------------------

def _status(run: _Sync) -> str:
    """``git status --porcelain -z`` of the folder, every untracked file named."""
    return run.repo.run("status", "--porcelain", "-z", "--untracked-files=all",
                        paths=[run.folder]).out


def _marked(run: _Sync, names: Sequence[str]) -> list[str]:
    """The files of ``names`` (from the top) holding merge markers, made visible."""
    return [visible(_in_folder(run, n)) for n in names if _has_markers(run.repo.path(n))]


def _changed_since(run: _Sync, before: str | None) -> tuple[str, ...]:
    if before is None:
        return ()
    names = run.repo.lines("diff", "--name-only", "-z", before, "HEAD", paths=[run.folder])
    return tuple(visible(_in_folder(run, n)) for n in names)


def _pulled_since(run: _Sync, before: str | None) -> int:
    return count(run.repo, f"{before}..HEAD") if before else 0


def _in_folder(run: _Sync, name: str) -> str:
    """A name git gives from the top, relative to the memory folder when inside it."""
    prefix = "" if run.folder == "." else run.folder + "/"
    return name[len(prefix):] if prefix and name.startswith(prefix) else name


def _status_names(porcelain: str) -> list[str]:
    """The paths of ``status --porcelain -z`` (a rename's old path follows its entry)."""
    fields, names, skip = porcelain.split("\0"), [], False
    for item in fields:
        if skip or len(item) < 4:
            skip = False
            continue
        names.append(item[3:])
        skip = item[0] in "RC"
    return names


def _has_markers(path: Path) -> bool:
    """Whether a file holds ``<<<<<<<``/``>>>>>>>`` lines: read whole, in chunks."""
    try:
        data = b"".join(read_chunks(path))
    except (SagememError, OSError):  # a file gone or unreadable holds no markers to report
        return False
    return merge_marker_line(data.decode("utf-8", errors="replace")) is not None


def _driver_hint(run: _Sync) -> str | None:
    """The hint naming ``sagemem install git``, once per state directory."""
    drivers = run.repo.run("config", "--get-regexp", r"^merge\..*\.driver$", check=False).out
    if "sagemem" in drivers or record.load(run.store.state_dir).hinted:
        return None
    record.update(run.store.state_dir, hinted=True)
    return DRIVER_HINT
