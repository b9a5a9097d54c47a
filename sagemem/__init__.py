"""sagemem: an agent's long-term memory as plain Markdown files.

The library stands on its own (``import sagemem`` never imports typer)::

    from sagemem import MemoryStore
    store = MemoryStore("sample_memory")
    for memory in store.list().memories:
        print(memory.file, memory.description)
"""

from typing import TYPE_CHECKING, Any

from .errors import (
    AmbiguousName,
    ConflictNotFound,
    DirectoryMissing,
    ExportTargetRefused,
    FieldTooLong,
    FileChangedDuringRead,
    FileTooLarge,
    FrontmatterDropped,
    ImportSourceError,
    IndexTooLarge,
    InvalidName,
    InvalidPlan,
    MemoryExists,
    MemoryLocked,
    MemoryNotFound,
    MoveIncomplete,
    NameCollision,
    NearDuplicate,
    NotAnExport,
    NotArchived,
    PlannerFailed,
    ReservedName,
    ResolutionRefused,
    RunInProgress,
    RunNotFound,
    RunNotUndoable,
    SagememError,
    SettingsError,
    SnapshotDamaged,
    SnapshotNotFound,
    StaleRevision,
    UneditableFrontmatter,
    UnreadableFile,
    UnresolvedMerge,
    UnsafeFile,
    WriteFailed,
    WriteRefused,
)

if TYPE_CHECKING:
    from .audit.fix import FixReport
    from .audit.fix import fix as fix_audit
    from .audit.report import AuditReport
    from .audit.report import audit as run_audit
    from .audit.scan import Finding
    from .audit.watch import AuditDiff, LiveAudit
    from .audit.watch import follow as follow_audit
    from .config import Settings, load_settings
    from .dream.auto import dream_auto
    from .dream.plan import Operation, Plan
    from .dream.plan import loads as load_plan
    from .dream.planners import make_plan
    from .dream.recover import finish_interrupted as finish_interrupted_runs
    from .dream.run import RunReport, dream_run
    from .dream.undo import undo_run as dream_undo
    from .files.edit import render_new, set_fields
    from .files.fields import TYPES, Problem
    from .files.init import InitReport, init_directory
    from .files.memory import Memory, parse
    from .files.revision import revision_of
    from .history.archive import ArchiveResult, archive_memory, purge_memory, restore_memory
    from .history.archive_log import ArchiveEvent, read_log
    from .history.candidates import Candidate, CandidateReport, archive_candidates, idle_thresholds
    from .history.create_batch import CreateManyReport, create_many
    from .history.locks import Lock, LockChange, list_locks, lock_memory, unlock_memory
    from .history.rollback import (
        RollbackPlan,
        RollbackReport,
        apply_rollback,
        plan_rollback,
        rollback_history,
    )
    from .history.rollback import (
        rollback as roll_back,
    )
    from .history.snapshot_diff import snapshot_diff as diff_snapshot
    from .history.snapshots import (
        Snapshot,
        create_snapshot,
        list_snapshots,
        load_snapshot,
        verify_snapshot,
    )
    from .memory_tool.handler import MemoryToolHandler
    from .store import ListError, Listing, MemoryStore
    from .transfer.apply import apply_batch
    from .transfer.export import export_folder, write_export
    from .transfer.incoming import Batch, Incoming, Skipped
    from .transfer.read_export import read_export
    from .transfer.report import ImportReport

__version__ = "0.1.0"
_LAZY = {  # public name: module, or module:attribute where the name differs
    "TYPES": "files.fields",
    "ArchiveEvent": "history.archive_log",
    "ArchiveResult": "history.archive",
    "AuditDiff": "audit.watch",
    "AuditReport": "audit.report",
    "Candidate": "history.candidates",
    "CandidateReport": "history.candidates",
    "CreateManyReport": "history.create_batch",
    "Finding": "audit.scan",
    "FixReport": "audit.fix",
    "InitReport": "files.init",
    "ListError": "store",
    "Listing": "store",
    "LiveAudit": "audit.watch",
    "Lock": "history.locks",
    "LockChange": "history.locks",
    "Memory": "files.memory",
    "MemoryStore": "store",
    "MemoryToolHandler": "memory_tool.handler",
    "Operation": "dream.plan",
    "Plan": "dream.plan",
    "Problem": "files.fields",
    "RollbackPlan": "history.rollback",
    "RollbackReport": "history.rollback",
    "RunReport": "dream.run",
    "Settings": "config",
    "Snapshot": "history.snapshots",
    "apply_rollback": "history.rollback",
    "archive_candidates": "history.candidates",
    "archive_memory": "history.archive",
    "create_many": "history.create_batch",
    "create_snapshot": "history.snapshots",
    "diff_snapshot": "history.snapshot_diff:snapshot_diff",
    "dream_auto": "dream.auto",
    "dream_run": "dream.run",
    "dream_undo": "dream.undo:undo_run",
    "finish_interrupted_runs": "dream.recover:finish_interrupted",
    "fix_audit": "audit.fix:fix",
    "follow_audit": "audit.watch:follow",
    "idle_thresholds": "history.candidates",
    "init_directory": "files.init",
    "list_locks": "history.locks",
    "list_snapshots": "history.snapshots",
    "load_plan": "dream.plan:loads",
    "load_settings": "config",
    "load_snapshot": "history.snapshots",
    "lock_memory": "history.locks",
    "make_plan": "dream.planners",
    "parse": "files.memory",
    "plan_rollback": "history.rollback",
    "purge_memory": "history.archive",
    "read_log": "history.archive_log",
    "render_new": "files.edit",
    "restore_memory": "history.archive",
    "revision_of": "files.revision",
    "roll_back": "history.rollback:rollback",
    "rollback_history": "history.rollback",
    "run_audit": "audit.report:audit",
    "set_fields": "files.edit",
    "unlock_memory": "history.locks",
    "verify_snapshot": "history.snapshots",
    # moving memories (docs/moving.md)
    "Batch": "transfer.incoming",
    "ImportReport": "transfer.report",
    "Incoming": "transfer.incoming",
    "Skipped": "transfer.incoming",
    "apply_batch": "transfer.apply",
    "export_folder": "transfer.export",
    "read_export": "transfer.read_export",
    "write_export": "transfer.export",
}


def __getattr__(name: str) -> Any:
    """Imported on first use: the editor pulls in ruamel.yaml, snapshots, rollback and
    the archive are not needed by the hook and inject, which run on every prompt, and
    `sagemem config` needs neither the store nor the parser (yaml)."""
    if name in _LAZY:
        from importlib import import_module

        module, _, attribute = _LAZY[name].partition(":")
        return getattr(import_module(f"{__name__}.{module}"), attribute or name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "TYPES",
    "AmbiguousName",
    "ArchiveEvent",
    "ArchiveResult",
    "AuditDiff",
    "AuditReport",
    "Batch",
    "Candidate",
    "CandidateReport",
    "ConflictNotFound",
    "CreateManyReport",
    "DirectoryMissing",
    "ExportTargetRefused",
    "FieldTooLong",
    "FileChangedDuringRead",
    "FileTooLarge",
    "Finding",
    "FixReport",
    "FrontmatterDropped",
    "ImportReport",
    "ImportSourceError",
    "Incoming",
    "IndexTooLarge",
    "InitReport",
    "InvalidName",
    "InvalidPlan",
    "ListError",
    "Listing",
    "LiveAudit",
    "Lock",
    "LockChange",
    "Memory",
    "MemoryExists",
    "MemoryLocked",
    "MemoryNotFound",
    "MemoryStore",
    "MemoryToolHandler",
    "MoveIncomplete",
    "NameCollision",
    "NearDuplicate",
    "NotAnExport",
    "NotArchived",
    "Operation",
    "Plan",
    "PlannerFailed",
    "Problem",
    "ReservedName",
    "ResolutionRefused",
    "RollbackPlan",
    "RollbackReport",
    "RunInProgress",
    "RunNotFound",
    "RunNotUndoable",
    "RunReport",
    "SagememError",
    "Settings",
    "SettingsError",
    "Skipped",
    "Snapshot",
    "SnapshotDamaged",
    "SnapshotNotFound",
    "StaleRevision",
    "UneditableFrontmatter",
    "UnreadableFile",
    "UnresolvedMerge",
    "UnsafeFile",
    "WriteFailed",
    "WriteRefused",
    "apply_batch",
    "apply_rollback",
    "archive_candidates",
    "archive_memory",
    "create_many",
    "create_snapshot",
    "diff_snapshot",
    "dream_auto",
    "dream_run",
    "dream_undo",
    "export_folder",
    "finish_interrupted_runs",
    "fix_audit",
    "follow_audit",
    "idle_thresholds",
    "init_directory",
    "list_locks",
    "list_snapshots",
    "load_plan",
    "load_settings",
    "load_snapshot",
    "lock_memory",
    "make_plan",
    "parse",
    "plan_rollback",
    "purge_memory",
    "read_export",
    "read_log",
    "render_new",
    "restore_memory",
    "revision_of",
    "roll_back",
    "rollback_history",
    "run_audit",
    "set_fields",
    "unlock_memory",
    "verify_snapshot",
    "write_export",
]
