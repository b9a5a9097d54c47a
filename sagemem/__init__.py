"""sagemem: an agent's long-term memory as plain Markdown files.

The library stands on its own (``import sagemem`` never imports typer)::

    from sagemem import MemoryStore
    store = MemoryStore("sample_memory")
    for memory in store.list().memories:
        print(memory.file, memory.description)
"""

from typing import TYPE_CHECKING, Any

from .config import Settings, load_settings
from .errors import (
    ConflictNotFound,
    DirectoryMissing,
    FileChangedDuringRead,
    FileTooLarge,
    InvalidName,
    MemoryExists,
    MemoryLocked,
    MemoryNotFound,
    MoveIncomplete,
    NameCollision,
    NotArchived,
    ReservedName,
    ResolutionRefused,
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
from .fields import TYPES, Problem
from .init import InitReport, init_directory
from .memory import Memory, parse, revision_of
from .store import ListError, Listing, MemoryStore

if TYPE_CHECKING:
    from .archive import ArchiveResult, archive_memory, purge_memory, restore_memory
    from .archive_log import ArchiveEvent, read_log
    from .audit import AuditReport
    from .audit import audit as run_audit
    from .audit_fix import FixReport
    from .audit_fix import fix as fix_audit
    from .audit_scan import Finding
    from .audit_watch import AuditDiff, LiveAudit
    from .audit_watch import follow as follow_audit
    from .candidates import Candidate, CandidateReport, archive_candidates, idle_thresholds
    from .edit import render_new, set_fields
    from .locks import Lock, LockChange, list_locks, lock_memory, unlock_memory
    from .rollback import (
        RollbackPlan,
        RollbackReport,
        apply_rollback,
        plan_rollback,
        rollback_history,
    )
    from .rollback import (
        rollback as roll_back,
    )
    from .snapshot_diff import snapshot_diff as diff_snapshot
    from .snapshots import (
        Snapshot,
        create_snapshot,
        list_snapshots,
        load_snapshot,
        verify_snapshot,
    )

__version__ = "0.1.0"
_LAZY = {  # public name: module, or module:attribute where the name differs
    "ArchiveEvent": "archive_log",
    "ArchiveResult": "archive",
    "AuditDiff": "audit_watch",
    "AuditReport": "audit",
    "Candidate": "candidates",
    "CandidateReport": "candidates",
    "Finding": "audit_scan",
    "FixReport": "audit_fix",
    "LiveAudit": "audit_watch",
    "Lock": "locks",
    "LockChange": "locks",
    "RollbackPlan": "rollback",
    "RollbackReport": "rollback",
    "Snapshot": "snapshots",
    "apply_rollback": "rollback",
    "archive_candidates": "candidates",
    "archive_memory": "archive",
    "create_snapshot": "snapshots",
    "diff_snapshot": "snapshot_diff:snapshot_diff",
    "fix_audit": "audit_fix:fix",
    "follow_audit": "audit_watch:follow",
    "idle_thresholds": "candidates",
    "list_locks": "locks",
    "list_snapshots": "snapshots",
    "load_snapshot": "snapshots",
    "lock_memory": "locks",
    "plan_rollback": "rollback",
    "purge_memory": "archive",
    "read_log": "archive_log",
    "render_new": "edit",
    "restore_memory": "archive",
    "roll_back": "rollback:rollback",
    "rollback_history": "rollback",
    "run_audit": "audit:audit",
    "set_fields": "edit",
    "unlock_memory": "locks",
    "verify_snapshot": "snapshots",
}


def __getattr__(name: str) -> Any:
    """Imported on first use: the editor pulls in ruamel.yaml, and snapshots, rollback
    and the archive are not needed by the hook and inject, which run on every prompt."""
    if name in _LAZY:
        from importlib import import_module

        module, _, attribute = _LAZY[name].partition(":")
        return getattr(import_module(f"{__name__}.{module}"), attribute or name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "TYPES",
    "ArchiveEvent",
    "ArchiveResult",
    "AuditDiff",
    "AuditReport",
    "Candidate",
    "CandidateReport",
    "ConflictNotFound",
    "DirectoryMissing",
    "FileChangedDuringRead",
    "FileTooLarge",
    "Finding",
    "FixReport",
    "InitReport",
    "InvalidName",
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
    "MoveIncomplete",
    "NameCollision",
    "NotArchived",
    "Problem",
    "ReservedName",
    "ResolutionRefused",
    "RollbackPlan",
    "RollbackReport",
    "SagememError",
    "Settings",
    "SettingsError",
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
    "apply_rollback",
    "archive_candidates",
    "archive_memory",
    "create_snapshot",
    "diff_snapshot",
    "fix_audit",
    "follow_audit",
    "idle_thresholds",
    "init_directory",
    "list_locks",
    "list_snapshots",
    "load_settings",
    "load_snapshot",
    "lock_memory",
    "parse",
    "plan_rollback",
    "purge_memory",
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
]
