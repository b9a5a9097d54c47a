"""``sagemem sync``: commit what changed in the memory folder, pull with rebase, push.

In order, each step stopping the sync with one clear error when it cannot go on:

1. refuse while an operation is pending (``history/journal.py``, as ``recover`` reads
   it) or a sync is stopped half-way (``--continue`` or ``--abort`` it first), while a
   rebase sagemem did not start is stopped (``RebaseInProgress``: git's to finish), and
   when git, the repository or a checked-out branch is missing (the error names the
   command);
2. keep the state directory out of git (``keepout.py``);
3. commit the folder's paths only — ``git add -A -- <folder>`` and ``git commit --
   <folder>``, every path literal (``git.py``): whatever else the user has staged in the
   repository stays staged and uncommitted (``--only`` semantics), and other uncommitted
   work is set aside and put back by git's ``--autostash`` around the rebase. A file
   still holding merge markers is refused before anything is staged
   (``MarkersInFolder``). The message comes from the change journal since the last sync
   (``message.py``); the journal position moves once the commit is made, so a commit a
   hook refuses leaves its lines to the next message. No remote or upstream stops here,
   after the commit, so the ``git push -u`` the error names has a commit to push;
4. fetch; refuse to go on when the push would carry commits changing files outside the
   folder, or a needed rebase would flatten a local merge (``outgoing.py``); when the
   upstream has new commits, refuse when they carry paths of this clone's state
   directory (``keepout.py``), take a rollback snapshot (kind ``auto``, label ``before
   sync``) so ``sagemem rollback`` undoes a bad merge, then rebase onto the upstream,
   through the merge driver when it is installed (an unborn branch with nothing to
   commit fast-forwards instead). A conflict stops here (``SyncStopped``, naming the
   files and ``sagemem sync --continue``, which ``resume.py`` runs; ``stops.py``); so does a pull
   whose autostash could not be put back (``AutostashConflict``): git keeps it stashed;
5. tell the index the files changed, report any left with merge markers;
6. push — memory commits only (checked again: a ``--continue`` may follow a
   ``--no-push``), never forced: a rejection (the remote moved on) is ``PushRejected``;
7. journal a ``sync`` line with the commit reached — when the sync committed, pulled
   or pushed something; a sync with nothing to do leaves the journal alone.
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
    NoUpstream,
    SagememError,
    UnmergedFiles,
)
from ..files.controls import visible
from ..files.folder import ARCHIVE_DIR
from ..files.indexfile import INDEX_HEADER
from ..files.paths import INDEX_FILE, read_chunks
from ..history import journal
from ..history.snapshots import create_snapshot
from ..store import MemoryStore
from ..writes.changelog import Entry
from ..writes.guard import merge_marker_line
from . import record
from .git import Repo, last_line, open_repo
from .keepout import keep_state_out, refuse_incoming_state, refuse_staged_state, relative_in
from .message import commit_message
from .outgoing import Outgoing, outgoing, push_memory
from .stops import raise_stopped, require_put_back, stash_top
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
    would refuse to push, ``merges``: the local merges it would refuse to rebase.
    ``resumed``: a ``--continue``, which commits nothing of its own; ``closed``: the
    conflict records it closed."""

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
    resumed: bool = False
    closed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Run:
    """One sync's repository, the memory folder in it (``folder``, relative to the top:
    the pathspec of every command) and the upstream; ``missing``: why there is none."""

    store: MemoryStore
    repo: Repo
    upstream: Upstream | None
    folder: str
    missing: NoUpstream | None = None

    @property
    def up(self) -> Upstream:
        if self.upstream is None:
            raise self.missing or NoUpstream("HEAD", None)
        return self.upstream


def sync(store: MemoryStore, *, message: str | None = None, push: bool = True,
         dry_run: bool = False, keep: int = 20, writer: str = "library") -> SyncReport:
    """Commit, pull with rebase and push the memory folder (see the module doc).
    ``keep``: the snapshot rotation (``snapshot_keep``). SyncStopped on a conflict."""
    run, notices = _begin(store, dry_run=dry_run)
    if dry_run:
        if run.missing is not None:  # a dry run commits nothing: no upstream stops it now
            raise run.missing
        return _dry_run(run, notices, message, push=push)
    held = unmerged(run.repo)
    if held:  # the last sync's autostash, say: a commit, a rebase would fail on them
        raise UnmergedFiles(held)
    files, committed, text = _commit(run, message)
    if run.missing is not None:
        raise NoUpstream(run.missing.branch, run.missing.remote, committed or head(run.repo))
    before = head(run.repo)
    pulled = _fetch(run)
    _require_pushable(run, outgoing(run.repo, run.up, run.folder), push=push,
                      pulled=pulled, kept=committed)
    snapshot = None
    if pulled:
        refuse_incoming_state(run.repo, store.state_dir, run.up.tracking,
                              unborn=before is None, kept=committed)
        snapshot = create_snapshot(store, label="before sync", kind="auto", keep=keep,
                                   reason=f"before sagemem sync pulled {run.up.name}").id
        _rebase(run, before, snapshot, pulled)
    return finish(run, before, snapshot, push=push, writer=writer, notices=notices,
                  files=files, committed=committed, message=text, pulled=pulled)


# -- the steps -----------------------------------------------------------------------------

def open_run(store: MemoryStore, *, stopped: tuple[str, str] | None = None) -> Run:
    """The repository, the folder in it and the upstream, once the rebase state fits:
    none stopped for a sync, else (``stopped``: the git command and what to do when
    none is) the one a sync started. Checked before the branch: a rebase detaches HEAD.
    No upstream is kept as ``missing``: a sync commits before it says so."""
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
    try:
        return Run(store, repo, upstream_of(repo), folder)
    except NoUpstream as missing:
        return Run(store, repo, None, folder, missing)


def _begin(store: MemoryStore, *, dry_run: bool) -> tuple[Run, tuple[str, ...]]:
    """The checks of step 1 and the state directory of step 2."""
    with store.locked(dry_run=dry_run):
        journal.require_none_pending(store.state_dir)
    run = open_run(store)
    notices = [keep_state_out(run.repo, store.directory, store.state_dir, dry_run=dry_run),
               None if dry_run or run.upstream is None else _driver_hint(run)]
    return run, tuple(n for n in notices if n)


def _commit(run: Run, subject: str | None) -> tuple[tuple[str, ...], str | None, str | None]:
    """Stage and commit the folder's changes: (files, commit, message); no commit when
    nothing changed. The journal position moves only past lines a commit carried (or,
    nothing to commit, that need none): a hook that refuses the commit keeps them."""
    found = marked(run, _status_names(_status(run)))
    if found:
        raise MarkersInFolder(found)
    run.repo.run("add", "-A", paths=[run.folder])
    refuse_staged_state(run.repo, run.store.state_dir)
    files = tuple(run.repo.lines("diff", "--cached", "--name-only", "-z", paths=[run.folder]))
    entries = record.new_entries(run.store.state_dir, record.load(run.store.state_dir).covered)
    text = _message(run, files, entries, subject) if files else None
    if text is not None:
        run.repo.run("commit", "-q", "-m", text, paths=[run.folder])
    if entries:
        record.update(run.store.state_dir, covered=entries[-1].time)
    if text is None:
        return (), None, None
    return tuple(visible(f) for f in files), head(run.repo), text


def _message(run: Run, files: Sequence[str], entries: list[Entry],
             subject: str | None) -> str:
    hand = _by_hand(run, files, entries)
    initialised = INDEX_FILE in hand and _init_index(run)
    if initialised:
        hand.remove(INDEX_FILE)
    return commit_message(entries, hand, subject=subject,
                          initialised=(INDEX_FILE,) if initialised else ())


def _by_hand(run: Run, files: Sequence[str], entries: list[Entry]) -> list[str]:
    """The committed files no journal line names: edits made outside sagemem. MEMORY.md
    counts only when no line does: a create or an archive changes its index line too.
    An archive, restore or purge line names the file by its name alone, but it moved
    between the folder and ``archive/``: both paths are sagemem's."""
    known = {n.casefold() for e in entries for n in (e.file, e.to) if n}
    known |= {f"{ARCHIVE_DIR}/{e.file}".casefold() for e in entries
              if e.op in ("archive", "restore", "purge")}
    if entries:
        known.add(INDEX_FILE.casefold())
    names = [in_folder(run, f) for f in files]
    return [n for n in names if n.casefold() not in known]


def _init_index(run: Run) -> bool:
    """Whether the folder's MEMORY.md is still exactly what ``sagemem init`` wrote (init
    writes no journal line): then its first commit is sagemem's, not a hand edit."""
    try:
        return run.store.directory.joinpath(INDEX_FILE).read_text("utf-8") == INDEX_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def _fetch(run: Run) -> int:
    """Fetch the upstream; how many of its commits HEAD lacks (all of them on an unborn
    branch)."""
    run.repo.run("fetch", "-q", run.up.remote)
    if not exists(run.repo, run.up.tracking):
        return 0
    if head(run.repo) is None:
        return count(run.repo, run.up.tracking)
    return count(run.repo, f"HEAD..{run.up.tracking}")


def _require_pushable(run: Run, out: Outgoing, *, push: bool, pulled: int,
                      kept: str | None) -> None:
    """The rules of ``outgoing.py``: ForeignCommits when the push would carry the user's
    other work, LocalMerges when the rebase the pull needs would flatten a merge."""
    if push and out.foreign:
        raise ForeignCommits(list(out.foreign), kept)
    if pulled and out.merges:
        raise LocalMerges(list(out.merges), kept)


def _rebase(run: Run, before: str | None, snapshot: str | None, pulled: int) -> None:
    """Rebase onto the upstream (an unborn branch, nothing to replay: fast-forward to
    it); SyncStopped on a conflict, AutostashConflict when the user's set-aside work
    could not be put back."""
    if before is None:
        ran = run.repo.run("merge", "-q", "--ff-only", run.up.tracking, check=False)
        run.store.notice_change()
        if ran.code != 0:
            raise GitFailed("merge --ff-only", last_line(ran.err or ran.out))
        return
    record.update(run.store.state_dir, stopped_from=before, snapshot=snapshot,
                  pulled=pulled, started=record.now())
    stash = stash_top(run.repo)
    ran = run.repo.run("rebase", "-q", "--autostash", run.up.tracking, check=False)
    run.store.notice_change()
    if ran.code != 0:
        raise_stopped(run.repo, run.store, ran)
    require_put_back(run.repo, run.store, stash)


def finish(run: Run, before: str | None, snapshot: str | None, *, push: bool, writer: str,
           notices: tuple[str, ...], files: tuple[str, ...], committed: str | None,
           message: str | None, pulled: int, resumed: bool = False,
           closed: tuple[str, ...] = ()) -> SyncReport:
    """Steps 5 to 7, shared by a sync and its ``--continue``."""
    state_dir = run.store.state_dir
    record.update(state_dir, stopped_from=None, snapshot=None, pulled=0, started=None)
    incoming = _changed_since(run, before) if pulled else ()
    markers = tuple(f for f in incoming if _has_markers(run.store.directory / f))
    pushed = push_memory(run.repo, run.up, run.folder, pulled=bool(pulled)) if push else 0
    reached = head(run.repo)
    did = committed or pulled or pushed or resumed
    warned = record.log_sync(state_dir, reached, incoming, writer=writer,
                             pushed=bool(pushed)) if reached and did else None
    return SyncReport(visible(run.up.name), committed, message, files, incoming, pulled,
                      pushed, reached, snapshot, markers,
                      notices + ((warned,) if warned else ()), resumed=resumed,
                      closed=closed)


def _dry_run(run: Run, notices: tuple[str, ...], subject: str | None, *,
             push: bool) -> SyncReport:
    """What a sync would commit, pull and push, and what it would refuse; only the fetch
    runs (it moves no branch and no file — the remote's commits must be fetched to be
    counted). A refusal reports nothing pulled or pushed: the sync would stop first."""
    names = _status_names(_status(run))
    files = tuple(visible(name) for name in names)
    found = tuple(marked(run, names))
    entries = record.new_entries(run.store.state_dir, record.load(run.store.state_dir).covered)
    text = _message(run, names, entries, subject) if files and not found else None
    pulled = _fetch(run)
    out = outgoing(run.repo, run.up, run.folder)
    held = out.foreign if push else ()
    merges = out.merges if pulled else ()
    if found or held or merges:
        pulled, pushed = 0, 0
    else:
        pushed = out.count + (1 if files else 0) if push else 0
    return SyncReport(visible(run.up.name), None, text, files, (), pulled, pushed,
                      head(run.repo), None, found, notices, dry_run=True, held=held,
                      merges=merges)


# -- small readers -------------------------------------------------------------------------

def _status(run: Run) -> str:
    """``git status --porcelain -z`` of the folder, every untracked file named."""
    return run.repo.run("status", "--porcelain", "-z", "--untracked-files=all",
                        paths=[run.folder]).out


def marked(run: Run, names: Sequence[str]) -> list[str]:
    """The files of ``names`` holding merge markers, named from the top as git names
    them, made visible."""
    return [visible(n) for n in names if _has_markers(run.repo.path(n))]


def _changed_since(run: Run, before: str | None) -> tuple[str, ...]:
    if before is None:
        return ()
    names = run.repo.lines("diff", "--name-only", "-z", before, "HEAD", paths=[run.folder])
    return tuple(visible(in_folder(run, n)) for n in names)


def in_folder(run: Run, name: str) -> str:
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


def _driver_hint(run: Run) -> str | None:
    """The hint naming ``sagemem install git``, once per state directory."""
    drivers = run.repo.run("config", "--get-regexp", r"^merge\..*\.driver$", check=False).out
    if "sagemem" in drivers or record.load(run.store.state_dir).hinted:
        return None
    record.update(run.store.state_dir, hinted=True)
    return DRIVER_HINT
