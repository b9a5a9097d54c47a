"""What the library's answers become for the model: a refused write as a result it can
act on, the warnings a remember, a cap or the redactor leave, and the entries of the
listings. Kept apart from ``tools.py``, which keeps the tools and their docstrings (what
the model reads), so each tool stays a thin call.
"""

from __future__ import annotations

from typing import Any

from ..errors import MemoryExists, StaleRevision, UnresolvedMerge, WriteRefused
from ..files.memory import Memory
from ..history.caps import CapReport
from ..layers.titles import PROJECT
from ..writes.remember import RememberResult
from .outputs import ConflictEntry, MemoryEntry, Refusal, WriteOutcome


def same_title(result: RememberResult) -> str:
    """When several memories hold the identical title, the way forward: distinct=true
    and the exact title would both answer ``similar`` again (review 4)."""
    if not result.also:
        return ""
    files = ", ".join((result.file, *result.also))
    return (f"{files} all have the title {result.memory.title!r}, so saving by it would "
            "be a guess. Update the one you mean (read_memory, then write_memory), or give "
            "the others another title (set_memory_fields with name).")


def former_title(result: RememberResult, name: str) -> list[str]:
    """Say so when ``name`` matched a title the memory had before a rename, as the CLI
    does: the model asked for one title and updated a memory that now has another."""
    if result.kind != "former_title":
        return []
    return [f"matched its former title {name!r}; its name stays {result.memory.title!r}"]


def refused(name: str, exc: WriteRefused, expected: str | None,
            layer: str = PROJECT) -> WriteOutcome:
    """A refusal as a result the model can act on (never a protocol error)."""
    current = exc.actual if isinstance(exc, StaleRevision) else None
    return WriteOutcome("refused", getattr(exc, "name", name), conflict_id=exc.conflict_id,
                        expected_revision=getattr(exc, "expected", expected),
                        current_revision=current, message=str(exc), refusal=_refusal(exc),
                        layer=layer)


def _refusal(exc: WriteRefused) -> Refusal:
    if isinstance(exc, MemoryExists):
        return "exists"
    return "merge_marker" if isinstance(exc, UnresolvedMerge) else "changed"


def memory_entry(memory: Memory, layer: str = PROJECT) -> MemoryEntry:
    return MemoryEntry(memory.file, memory.name, memory.description, memory.type,
                       memory.tags, memory.revision, memory.archived, memory.baseline, layer)


def conflict_entry(record: Any, layer: str = PROJECT) -> ConflictEntry:
    disk, mine = record.side("disk"), record.side("mine")
    return ConflictEntry(record.id, record.kind, record.status, record.created, record.file,
                         record.writer, record.reason, record.memories,
                         _str(disk.get("revision")), _str(mine.get("based_on")), layer)


def room_made(caps: CapReport) -> list[str]:
    """The memories the layer's hard cap archived to make room (never deleted)."""
    return [*caps.warnings, *(f"archived {file} to make room: the layer is at its hard cap "
                              "(hard_cap_memories); sagemem restore brings it back"
                              for file in caps.archived_files)]


def redaction_warnings(*texts: str) -> list[str]:
    """The notice for secrets a write replaced (the model should know the file differs)."""
    from ..writes.redact import redaction_notice

    notice = redaction_notice(*texts)
    return [notice] if notice else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
