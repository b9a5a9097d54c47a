"""What an import did (or, with ``--dry-run``, would do): the report every import
prints, as text for a person and as JSON (``report_json``, version ``JSON_VERSION``).

Every name, origin and reason in it comes from outside — another tool's file names, an
export someone sent — so the text form shows control characters as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import JSON_VERSION
from ..files.controls import visible
from ..files.plural import counted
from .incoming import Skipped


@dataclass(frozen=True)
class Placed:
    """One memory the import took (or met unchanged): its file here, where it came from,
    whether it went to archive/ and was locked, and the conflict record made for it."""

    file: str
    origin: str
    archived: bool = False
    locked: bool = False
    conflict_id: str | None = None


@dataclass(frozen=True)
class ImportReport:
    """``created``, ``unchanged``, ``conflicted`` (a record each, nothing overwritten),
    ``replaced`` (replace mode: overwritten), ``archived`` (replace mode: live memories
    the import did not name), ``skipped`` with reasons, ``notes``, and the snapshot taken
    before the first write (None when nothing was written)."""

    source: str
    mode: str
    dry_run: bool
    created: tuple[Placed, ...] = ()
    unchanged: tuple[Placed, ...] = ()
    conflicted: tuple[Placed, ...] = ()
    replaced: tuple[Placed, ...] = ()
    archived: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()
    snapshot: str | None = None


def report_json(report: ImportReport) -> dict[str, Any]:
    """The report as ``import --json`` prints it."""
    return {"version": JSON_VERSION, "source": report.source, "mode": report.mode,
            "dry_run": report.dry_run,
            **{key: [vars(p) for p in getattr(report, key)]
               for key in ("created", "unchanged", "conflicted", "replaced")},
            "archived": list(report.archived),
            "skipped": [vars(s) for s in report.skipped], "notes": list(report.notes),
            "snapshot": report.snapshot}


UNDO = "sagemem rollback {snapshot} --scope all --yes"
"""The undo line's command: ``--yes``, since a pasted line runs off a terminal too (a
script, an agent's shell), where rollback asks nothing and refuses without it."""


def report_text(report: ImportReport, undo: str = UNDO) -> list[str]:
    """One line per memory, grouped by outcome, then a summary line; ``undo`` is the
    rollback command as this terminal must type it (its ``--dir``/``--state-dir``),
    with ``{snapshot}`` where the id goes."""
    would = "would be " if report.dry_run else ""
    lines = [f"{word:<10} {p.file}{_marks(p)}  ({p.origin})" for word, placed in (
        (f"{would}created", report.created), ("unchanged", report.unchanged),
        (f"{would}replaced", report.replaced)) for p in placed]
    lines += [f"conflict   {p.file}  ({p.origin})" + (f": record {p.conflict_id}" if
              p.conflict_id else ": another text is here; nothing overwritten")
              for p in report.conflicted]
    lines += [f"{would}archived {file}  (not in the import)" for file in report.archived]
    lines += [f"skipped    {s.origin}: {s.reason}" for s in report.skipped]
    lines += [f"note: {note}" for note in report.notes]
    lines.append(_summary(report))
    if report.snapshot:
        lines.append("undo: " + undo.replace("{snapshot}", report.snapshot))
    return [visible(line) for line in lines]


def _marks(placed: Placed) -> str:
    marks = [word for word, on in (("archived", placed.archived), ("locked", placed.locked))
             if on]
    return f" [{', '.join(marks)}]" if marks else ""


def _summary(report: ImportReport) -> str:
    parts = [f"{len(report.created)} created", f"{len(report.unchanged)} unchanged",
             counted(len(report.conflicted), "conflict")]
    if report.mode == "replace":
        parts += [f"{len(report.replaced)} replaced", f"{len(report.archived)} archived"]
    parts.append(f"{len(report.skipped)} skipped")
    head = "dry run, nothing written: " if report.dry_run else ""
    return f"{head}import from {report.source}: {', '.join(parts)}"
