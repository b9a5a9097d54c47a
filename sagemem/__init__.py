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
    MemoryNotFound,
    ReservedName,
    ResolutionRefused,
    SagememError,
    SettingsError,
    StaleRevision,
    UneditableFrontmatter,
    UnreadableFile,
    UnresolvedMerge,
    UnsafeFile,
    WriteFailed,
    WriteRefused,
)
from .memory import TYPES, Memory, Problem, parse, revision_of
from .store import InitReport, ListError, Listing, MemoryStore, init_directory

if TYPE_CHECKING:
    from .edit import render_new, set_fields

__version__ = "0.1.0"
_LAZY = {"render_new": "edit", "set_fields": "edit"}


def __getattr__(name: str) -> Any:
    """The editor pulls in ruamel.yaml; only code that edits should pay for importing it."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "TYPES",
    "ConflictNotFound",
    "DirectoryMissing",
    "FileChangedDuringRead",
    "FileTooLarge",
    "InitReport",
    "InvalidName",
    "ListError",
    "Listing",
    "Memory",
    "MemoryExists",
    "MemoryNotFound",
    "MemoryStore",
    "Problem",
    "ReservedName",
    "ResolutionRefused",
    "SagememError",
    "Settings",
    "SettingsError",
    "StaleRevision",
    "UneditableFrontmatter",
    "UnreadableFile",
    "UnresolvedMerge",
    "UnsafeFile",
    "WriteFailed",
    "WriteRefused",
    "init_directory",
    "load_settings",
    "parse",
    "render_new",
    "revision_of",
    "set_fields",
]
