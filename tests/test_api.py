"""The public API is small, explicit and importable without the CLI's dependencies."""

from __future__ import annotations

import subprocess
import sys

import sagemem


def test_public_names_are_exactly_these() -> None:
    assert sagemem.__all__ == sorted(sagemem.__all__, key=lambda n: (not n.isupper(), n))
    assert set(sagemem.__all__) == {
        "TYPES", "ArchiveEvent", "ArchiveResult", "Candidate", "CandidateReport",
        "ConflictNotFound", "DirectoryMissing", "FileChangedDuringRead", "FileTooLarge",
        "InitReport", "InvalidName", "ListError", "Listing", "Lock", "LockChange",
        "Memory", "MemoryExists", "MemoryLocked", "MemoryNotFound", "MemoryStore",
        "MoveIncomplete", "NameCollision", "NotArchived", "Problem", "ReservedName",
        "ResolutionRefused", "RollbackPlan", "RollbackReport", "SagememError",
        "Settings", "SettingsError", "Snapshot", "SnapshotDamaged", "SnapshotNotFound",
        "StaleRevision", "UneditableFrontmatter", "UnreadableFile", "UnresolvedMerge",
        "UnsafeFile", "WriteFailed", "WriteRefused", "apply_rollback",
        "archive_candidates", "archive_memory", "create_snapshot", "idle_thresholds",
        "init_directory", "list_locks", "list_snapshots", "load_settings",
        "load_snapshot", "lock_memory", "parse", "plan_rollback", "purge_memory",
        "read_log", "render_new", "restore_memory", "revision_of", "rollback",
        "rollback_history", "set_fields", "snapshot_diff", "unlock_memory",
        "verify_snapshot",
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
