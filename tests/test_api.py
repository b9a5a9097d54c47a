"""The public API is small, explicit and importable without the CLI's dependencies."""

from __future__ import annotations

import subprocess
import sys

import sagemem


def test_public_names_are_exactly_these() -> None:
    assert sagemem.__all__ == sorted(sagemem.__all__, key=lambda n: (not n.isupper(), n))
    assert set(sagemem.__all__) == {
        "TYPES", "ConflictNotFound", "DirectoryMissing", "FileChangedDuringRead",
        "FileTooLarge", "InitReport", "InvalidName", "ListError", "Listing", "Memory",
        "MemoryExists", "MemoryNotFound", "MemoryStore", "Problem", "ReservedName",
        "ResolutionRefused", "SagememError", "Settings", "SettingsError", "StaleRevision",
        "UneditableFrontmatter", "UnreadableFile", "UnresolvedMerge", "UnsafeFile",
        "WriteFailed", "WriteRefused", "init_directory", "load_settings", "parse",
        "render_new", "revision_of", "set_fields",
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
