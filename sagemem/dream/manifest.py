"""A run's manifest: the JSON a program reads and the Markdown a person reviews.

Per operation the file, what was done, why, and the byte and line change; the operations
refused and why; the audit before and after; and "Facts no longer present" — every prior
line no active memory holds after the run, with its file and line number, computed by
the diff (``lines``), never reported by the planner. A run cut short (killed, or a
planner whose answer was truncated) says so on the report's first line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..audit.report import AuditReport
from ..config import JSON_VERSION
from ..files.controls import visible
from ..files.paths import INDEX_FILE
from ..files.plural import counted
from .apply import Outcome
from .lines import LostLine

UNDO = "sagemem dream undo {run}"


def audit_summary(report: AuditReport) -> dict[str, Any]:
    """The audit's counts: problems, hints, and problems by category."""
    by_category: dict[str, int] = {}
    for finding in report.findings:
        by_category[finding.category] = by_category.get(finding.category, 0) + 1
    return {"problems": sum(1 for f in report.findings if f.severity == "problem"),
            "hints": sum(1 for f in report.findings if f.severity != "problem"),
            "by_category": dict(sorted(by_category.items()))}


def build(*, run_id: str, planner: str, mode: str, status: str, started: str,
          finished: str, outcomes: Sequence[Outcome], lost: Iterable[LostLine],
          loss_share: float, ceiling: float, prior_lines: int, snapshot: str | None,
          audit_before: Mapping[str, Any], audit_after: Mapping[str, Any] | None,
          notes: Sequence[str] = (), cut_short: str | None = None,
          changed: Mapping[str, str | None] | None = None,
          worst: Sequence[tuple[int, str, int]] = (), archive_share: float = 0.0,
          folder_lines: int = 0) -> dict[str, Any]:
    """The manifest of one run (``status``: report, refused, applied, interrupted)."""
    items = [o.to_json() for o in outcomes]
    lost_lines = [line.to_json() for line in lost]
    return {
        "version": JSON_VERSION, "run_id": run_id, "planner": planner, "mode": mode,
        "status": status, "cut_short": cut_short, "started": started, "finished": finished,
        "snapshot": snapshot,
        "undo": UNDO.format(run=run_id) if snapshot else None,
        "operations": items,
        "applied": [i for i in items if i["status"] == "applied"],
        "planned": [i for i in items if i["status"] == "planned"],
        "refused": [i for i in items if i["status"] == "refused"],
        "deleted_facts": lost_lines,
        "loss_share": round(loss_share, 4), "loss_ceiling": round(ceiling, 4),
        "prior_lines": prior_lines,
        "archive_share": round(archive_share, 4), "folder_lines": folder_lines,
        "dropped_lines": sum(1 for line in lost_lines if not line["archived"]
                             and not line["reworded"] and line["file"] != INDEX_FILE),
        "worst": [{"number": n, "file": f, "lines": c} for n, f, c in worst],
        "audit": {"before": dict(audit_before),
                  "after": None if audit_after is None else dict(audit_after)},
        "changed": dict(changed or {}),
        "notes": list(notes),
    }


def render(manifest: Mapping[str, Any], *, max_facts: int | None = None,
           whole: str | None = None, undo: str | None = None) -> str:
    """The Markdown report: what a person reviewing the folder in git reads. A terminal
    gets at most ``max_facts`` lost lines per group, then where ``whole`` report lists
    them all; ``undo``: the undo command as this terminal must type it (its options)."""
    out: list[str] = []
    if manifest.get("cut_short"):
        out += [f"> **Cut short:** {visible(manifest['cut_short'])}", ""]
    run = manifest["run_id"]
    out += [f"# Consolidation run {run}", "",
            f"Planner: {visible(manifest['planner'])} · {_mode_line(manifest)}", ""]
    notes = list(manifest.get("notes") or [])
    if manifest["status"] == "refused" and notes and notes[0].startswith("Refused:"):
        out += [f"**{visible(notes.pop(0))}**", ""]
    if manifest.get("snapshot"):
        then = "undone" if manifest["status"] == "undone" else \
            f"undo: `{undo or manifest['undo']}`"
        out += [f"Rollback point: snapshot {manifest['snapshot']} · {then}", ""]
    out += _operations(manifest)
    out += _refused(manifest)
    out += _facts(manifest, max_facts, whole)
    out += _audit(manifest)
    if notes:
        out += ["## Notes", ""] + [f"- {visible(n)}" for n in notes] + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def _mode_line(m: Mapping[str, Any]) -> str:
    counts = (f"{len(m['applied'])} applied, {len(m['planned'])} planned, "
              f"{len(m['refused'])} refused")
    share = (f"{m['dropped_lines']} of {m['prior_lines']} rewritten lines dropped "
             f"({m['loss_share']:.1%}; ceiling {m['loss_ceiling']:.0%})")
    if m.get("archive_share"):
        share += f" · archives {m['archive_share']:.1%} of the folder's lines"
    over = max(m["loss_share"], m.get("archive_share", 0)) > m["loss_ceiling"]
    if m["status"] == "report" and over:
        share += " · over the ceiling: --apply is refused without --allow-loss"
    return f"{_STATUS[m['status']]} · {counts} · {share}"


_STATUS = {"report": "report only: nothing in the folder changed",
           "refused": "refused before any write: nothing in the folder changed",
           "applied": "applied", "interrupted": "interrupted before it finished",
           "undone": "applied, then undone"}


def _operations(m: Mapping[str, Any]) -> list[str]:
    done = m["applied"] or m["planned"]
    if not done:
        return ["No operation " + ("was applied." if m["mode"] == "apply" else "is planned."),
                ""]
    title = "Applied" if m["applied"] else "Planned"
    out = [f"## {title} ({len(done)})", "", "| # | op | file | kind | bytes | lines | reason |",
           "|---|---|---|---|---|---|---|"]
    for item in done:
        reason = item["reason"] or "*not self-described*"
        if item.get("fields_changed"):
            reason += f" (fields changed: {', '.join(item['fields_changed'])})"
        out.append(f"| {item['number']} | {item['op']} | {_cell(item['file'])} | "
                   f"{item['kind']} | {item['bytes']:+d} | {item['lines']:+d} | "
                   f"{_cell(reason)} |")
    return [*out, ""]


def _refused(m: Mapping[str, Any]) -> list[str]:
    if not m["refused"]:
        return []
    out = [f"## Refused ({len(m['refused'])})", ""]
    for item in m["refused"]:
        why = item.get("why") or ""
        record = f" (conflict {item['conflict_id']})" \
            if item.get("conflict_id") and item["conflict_id"] not in why else ""
        out.append(f"- {item['number']}. {item['op']} {visible(item['file'])}: "
                   f"{visible(why)}{record}")
    return [*out, ""]


def _facts(m: Mapping[str, Any], limit: int | None, whole: str | None) -> list[str]:
    """The lost lines in the order a reviewer should read them: gone (or changed in a
    number or a "not"), then reworded, then archived whole, then unlisted index lines."""
    lost = m["deleted_facts"]
    out = [f"## Facts no longer present ({len(lost)})", ""]
    if not lost:
        return [*out, "Every prior line is still held by an active memory.", ""]
    for title, meaning, group in _GROUPS:
        items = [f for f in lost if group_of(f) == group]
        if items:
            out += [f"### {title} ({len(items)}): {meaning}", "", *_fact_lines(items, limit,
                                                                                 whole), ""]
    return out


_GROUPS = (
    ("Gone", "no active memory holds these; read them first", "gone"),
    ("Reworded", "a new line took each one's place: check it says the same", "reworded"),
    ("Archived whole", "still in archive/; `sagemem restore FILE` brings one back",
     "archived"),
    ("Unlisted from MEMORY.md", "the memory is live, but no index line names it now",
     "unlisted"),
)


def group_of(item: Mapping[str, Any]) -> str:
    """Which of the report's groups a lost line is in: gone, reworded, archived, unlisted."""
    if item["file"] == INDEX_FILE:
        return "unlisted"
    if item["archived"]:
        return "archived"
    return "reworded" if item["reworded"] else "gone"


def _fact_lines(items: Sequence[Mapping[str, Any]], limit: int | None, whole: str | None
                ) -> list[str]:
    shown = items if limit is None else items[:limit]
    out = []
    for item in shown:
        now = ""
        if "now" in item:
            changed = "" if item["reworded"] else " (a number or a negation changed)"
            now = f" → now{changed}: {visible(item['now'])}"
        out.append(f"- `{visible(item['file'])}:{item['line']}` — "
                   f"{visible(item['text'])}{now}")
    if len(shown) < len(items):
        out.append(f"- … and {len(items) - len(shown)} more: every one is in {whole}")
    return out


def _audit(m: Mapping[str, Any]) -> list[str]:
    before, after = m["audit"]["before"], m["audit"]["after"]
    def counts(a: Mapping[str, Any]) -> str:
        return f"{counted(a['problems'], 'problem')}, {counted(a['hints'], 'hint')}"

    line = f"Before: {counts(before)}"
    if after is not None:
        line += f" · after: {counts(after)}"
    return ["## Audit", "", line, ""]


def _cell(text: str) -> str:
    return visible(text).replace("|", "\\|")
