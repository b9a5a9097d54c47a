"""``sagemem audit`` (report, ``--strict`` for CI, ``--fix`` for the safe repairs) and
``sagemem watch`` (follow the folder, print what the audit says differently).

They register on the one ``app`` of ``base.py``; ``main.py`` imports
this module.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import JSON_VERSION
from . import base as cli
from .base import JsonOption, app, echo, echo_json, echo_lines, json_text
from .output import wrap

if TYPE_CHECKING:  # the audit is imported by its commands only: every command, the hook
    # included, would otherwise pay for loading it
    from ..audit.fix import FixReport
    from ..audit.report import AuditReport, Finding
    from ..audit.watch import AuditDiff
    from ..store import MemoryStore

STRICT_FAILURE = 1


def where(f: Finding) -> str:
    """``file:line``; a name with a tab or a bidi override is shown escaped, so the line
    reads as it is (an override would reorder the terminal's text)."""
    file = f.file if f.file.isprintable() else ascii(f.file)
    return f"{file}:{f.line}" if f.line else file


def report_text(report: AuditReport) -> list[str]:
    """Findings grouped by severity, then category, each with file:line and message."""
    lines: list[str] = []
    for severity, title in (("problem", "problems"), ("hint", "hints")):  # Finding.severity
        groups: defaultdict[str, list[Finding]] = defaultdict(list)
        for f in report.findings:
            if f.severity == severity:
                groups[f.category].append(f)
        if groups:
            lines.append(title)
        for category, found in groups.items():
            lines.append(f"  {category} ({len(found)})")
            lines += [part for f in found for part in wrap(f"    {where(f)}  {f.message}",
                                                           indent="      ")]
    lines.append(f"{_count(len(report.problems), 'problem')}, "
                 f"{_count(len(report.hints), 'hint')} in {_count(report.memories, 'memory')}")
    return lines


def _count(n: int, noun: str) -> str:
    plural = "memories" if noun == "memory" else noun + "s"
    return f"{n} {noun if n == 1 else plural}"


def fix_json(result: FixReport, report: AuditReport) -> dict[str, Any]:
    return {"version": JSON_VERSION, "dry_run": result.dry_run, "snapshot": result.snapshot,
            "rotated": list(result.rotated),
            "changes": [{"category": c.category, "file": c.file, "line": c.line,
                         "detail": c.detail} for c in result.changes],
            "skipped": [{"file": s.file, "reason": s.reason} for s in result.skipped],
            "audit": (result.after or report).to_json()}


def fix_text(result: FixReport, sagemem: str = "sagemem") -> list[str]:
    verb = "would" if result.dry_run else "fixed"
    lines = [f"{verb}  {c.file}{f':{c.line}' if c.line else ''}  {c.detail}"
             for c in result.changes] or ["nothing to fix safely"]
    lines += [f"skipped  {s.file}  {s.reason}" for s in result.skipped]
    if result.snapshot:
        lines.append(f"snapshot {result.snapshot} taken first; undo: "
                     f"{sagemem} rollback {result.snapshot}")
    if result.rotated:  # rotation deletes snapshots: never silently
        lines.append(f"rotated away {len(result.rotated)} older snapshot(s): "
                     + ", ".join(result.rotated))
    return lines


StrictOption = Annotated[bool, typer.Option(
    "--strict", help="Exit 1 when any problem (not hint) exists: for CI and git hooks.")]
FixOption = Annotated[bool, typer.Option(
    "--fix", help="Make the safe repairs (index lines, CRLF, ' #' quoting), then re-audit.")]
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="With --fix: show the repairs, change nothing.")]
YesOption = Annotated[bool, typer.Option("--yes", help="With --fix: do not ask.")]  # its own help


@app.command("audit")
def audit_command(ctx: typer.Context, strict: StrictOption = False,
                  apply_fixes: FixOption = False, dry_run: DryRunOption = False,
                  yes: YesOption = False, as_json: JsonOption = False) -> None:
    """Check the memory folder: index vs files, frontmatter, links, leftovers, duplicates.

    Reports only (exit 0) unless --fix; --strict exits 1 on any problem.
    """
    for given, option in ((dry_run, "--dry-run"), (yes, "--yes")):
        if given and not apply_fixes:
            raise typer.BadParameter("goes with --fix", param_hint=option)
    from ..audit.report import audit

    # a refused snapshot_keep stops --fix before anything (its auto snapshot rotates)
    keep = ctx.obj.settings().snapshot_keep if apply_fixes else 0
    store = ctx.obj.store()
    report = audit(store)
    if apply_fixes:
        report = _fix(store, report, dry_run=dry_run, yes=yes, as_json=as_json, keep=keep,
                      sagemem=ctx.obj.command())
    elif as_json:
        echo_json(report.to_json())
    else:
        echo_lines(report_text(report))
    if strict and report.problems:
        raise typer.Exit(STRICT_FAILURE)


def _fix(store: MemoryStore, report: AuditReport, *, dry_run: bool, yes: bool, as_json: bool,
         keep: int, sagemem: str) -> AuditReport:
    """Preview (and ask, unless --yes), repair, show; returns the audit afterwards."""
    from ..audit.fix import fix, fix_confirmed

    if dry_run:
        result = fix(store, report, dry_run=True)
    else:
        result = fix_confirmed(store, report, keep=keep, writer="cli",
                               confirm=lambda plan: yes or _confirmed(plan))
    if as_json:
        echo_json(fix_json(result, report))
    else:
        heading = "now:" if result.dry_run else "after fixing:"
        echo_lines([*fix_text(result, sagemem), "", heading,
                    *report_text(result.after or report)])
    return result.after or report


def _confirmed(plan: FixReport) -> bool:
    """Ask on a terminal (the plan and the question on stderr, so stdout stays data even
    then); off one, --yes is required: a piped "n" must not be read as yes."""
    cli.confirm(f"make these {len(plan.changes)} changes?", yes=False,
                required="to repair (`audit --fix --dry-run` shows the repairs)",
                preview=lambda: fix_text(plan))
    return True


def ready_line(store: MemoryStore, report: AuditReport) -> str:
    return (f"watching {store.directory}: {_count(len(report.problems), 'problem')}, "
            f"{_count(len(report.hints), 'hint')}; Ctrl-C to stop")


def diff_line(sign: str, f: Finding) -> str:
    label = f.severity if sign == "+" else "fixed"
    return f"{sign} {label:<8} {f.category}  {where(f)}  {f.message}"


def diff_json(diff: AuditDiff) -> dict[str, Any]:
    return {"version": JSON_VERSION, "added": [f.to_json() for f in diff.added],
            "fixed": [f.to_json() for f in diff.fixed],
            "problems": len(diff.report.problems), "hints": len(diff.report.hints),
            "index": {"reindexed": diff.reindexed, "removed": diff.removed,
                      "error": diff.index_error}}


@app.command()
def watch(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Follow the memory folder: refresh the search index on each change and print what
    the audit now says differently (+ new, - fixed). Ctrl-C stops it (exit 0)."""
    with suppress(KeyboardInterrupt):  # Ctrl-C is how a watch ends, even during startup
        _watch(ctx.obj.store(), as_json)


def _watch(store: MemoryStore, as_json: bool) -> None:
    from ..audit.watch import follow

    def changed(diff: AuditDiff) -> None:
        if as_json:
            echo(json_text(diff_json(diff)))
        elif diff.added or diff.fixed:
            echo_lines([diff_line("+", f) for f in diff.added]
                       + [diff_line("-", f) for f in diff.fixed])
        if diff.index_error:
            echo(f"warning: index not refreshed: {diff.index_error}", err=True)
        sys.stdout.flush()

    def ready(report: AuditReport) -> None:
        echo(ready_line(store, report), err=True)

    follow(store, changed, on_ready=ready)
