"""The public API is small, explicit and importable without the CLI's dependencies."""

from __future__ import annotations

import subprocess
import sys

import sagemem


def test_public_names_are_exactly_these() -> None:
    assert sagemem.__all__ == sorted(sagemem.__all__, key=lambda n: (not n.isupper(), n))
    assert set(sagemem.__all__) == {
        "TYPES", "AmbiguousName", "ArchiveEvent", "ArchiveResult", "AuditDiff", "AuditReport",
        "Candidate", "CandidateReport", "ConflictNotFound", "CreateManyReport", "DirectoryMissing",
        "FieldTooLong", "FileChangedDuringRead", "FileTooLarge", "Finding", "FixReport",
        "FrontmatterDropped", "IndexTooLarge", "InitReport", "NearDuplicate",
        "InvalidName", "ListError", "Listing", "LiveAudit", "Lock", "LockChange",
        "Memory", "MemoryExists", "MemoryLocked", "MemoryNotFound", "MemoryStore",
        "MemoryToolHandler",
        "MoveIncomplete", "NameCollision", "NotArchived", "Problem", "ReservedName",
        "ResolutionRefused", "RollbackPlan", "RollbackReport", "SagememError",
        "Settings", "SettingsError", "Snapshot", "SnapshotDamaged", "SnapshotNotFound",
        "StaleRevision", "UneditableFrontmatter", "UnreadableFile", "UnresolvedMerge",
        "UnsafeFile", "WriteFailed", "WriteRefused", "apply_rollback",
        "archive_candidates", "archive_memory", "create_many", "create_snapshot", "diff_snapshot",
        "fix_audit", "follow_audit", "idle_thresholds", "init_directory", "list_locks",
        "list_snapshots", "load_settings", "load_snapshot", "lock_memory", "parse",
        "plan_rollback", "purge_memory", "read_log", "render_new", "restore_memory",
        "revision_of", "roll_back", "rollback_history", "run_audit", "set_fields",
        "unlock_memory", "verify_snapshot",
        # consolidation (docs/consolidation.md)
        "InvalidPlan", "Operation", "Plan", "PlannerFailed", "RunInProgress", "RunNotFound",
        "RunNotUndoable", "RunReport", "dream_auto", "dream_run", "dream_undo",
        "finish_interrupted_runs", "load_plan", "make_plan",
        # moving memories (docs/moving.md)
        "Batch", "ExportTargetRefused", "ImportReport", "Incoming", "NotAnExport", "Skipped",
        "apply_batch", "export_folder", "read_export", "write_export",
        "ImportSourceError",
    }


def test_every_error_derives_from_the_one_root() -> None:
    errors = [getattr(sagemem, n) for n in sagemem.__all__
              if isinstance(getattr(sagemem, n), type) and issubclass(getattr(sagemem, n),
                                                                     Exception)]
    assert errors and all(issubclass(e, sagemem.SagememError) for e in errors)


def test_importing_the_library_does_not_import_typer() -> None:
    code = "import sys, sagemem; print('typer' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_public_name_resolves_including_the_lazy_ones() -> None:
    missing = [name for name in sagemem.__all__ if getattr(sagemem, name, None) is None]
    assert missing == []


def test_no_public_name_is_shadowed_by_a_submodule_of_the_same_name() -> None:
    import importlib
    import pkgutil
    import types

    for module in pkgutil.iter_modules(sagemem.__path__):
        if not module.name.startswith("cli") and module.name != "__main__":
            importlib.import_module(f"sagemem.{module.name}")
    modules = [n for n in sagemem.__all__ if isinstance(getattr(sagemem, n), types.ModuleType)]
    assert modules == []
