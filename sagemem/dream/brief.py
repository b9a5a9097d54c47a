"""The brief ``sagemem dream plan`` prints for an agent that plans: what to tidy, and how
to write the plan.

It is the findings (``findings.py``) with what an agent needs to act on each — the
files, the revisions a plan must name, the memory texts a merge or a rewrite starts
from — then the plan format with one example of each operation, and the command that
applies a plan. Its input is the memory files alone (and the audit, locks and conflict
records about them): never the injection ledger's texts, session state or search
results, so text a model was once shown can never come back as a planner's input.

``to_json`` is for programs, ``as_text`` for a terminal or a model's prompt; in the
text, control characters in memory text are written out (``files/controls.py``) so a
memory cannot move a cursor or hide a line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..config import Settings
from ..files.controls import visible
from ..files.memory import Memory
from ..files.plural import counted
from ..store import MemoryStore
from .findings import Findings, find
from .plan import FORMAT, KINDS, SAFE_KINDS, VERSION
from .tidy import keeper_of

BRIEF_VERSION = 1
SECTIONS = ("duplicates", "stale_dates", "contradictions", "expired", "idle", "links_index",
            "skipped")
REVIEW = "sagemem dream run --planner PLAN.json"
APPLY = "sagemem dream run --planner PLAN.json --apply"
SHORT_REVISION = 12  # what the text shows; a plan accepts any prefix of 8+ hex digits

PLAN_RULES = (
    "A plan is one JSON object: {\"format\", \"version\", \"planner\", \"notes\", "
    "\"operations\"}.",
    "op \"create\": a new file; \"text\" is the whole file (frontmatter included); no "
    "\"revision\".",
    "op \"rewrite\": \"text\" replaces the whole file (frontmatter included); "
    "\"revision\" is the one this brief gives (8+ hex digits); MEMORY.md may be rewritten.",
    "op \"archive\": moves the file to archive/ (sagemem restore brings it back); "
    "\"revision\" required, no \"text\", \"reason\" required.",
    "At most one operation per file. Nothing is deleted. Keep every fact: a merge carries "
    "every line of the memories it archives.",
    f"\"kind\" is one of {', '.join(KINDS)}; dream auto applies only "
    f"{', '.join(SAFE_KINDS)}.",
    "\"reason\" says what and why; \"source\" lists the files a merge draws on.",
)
EXAMPLE = {
    "format": FORMAT, "version": VERSION, "planner": "agent", "notes": [],
    "operations": [
        {"op": "rewrite", "file": "project_deploy.md", "kind": "duplicate",
         "revision": "22f08a70340b", "source": ["project_deploy_old.md"],
         "text": "---\nname: Deploy\ndescription: How to deploy\nmetadata:\n  type: project\n"
                 "---\nRun the tests.\nTag the release.\nRoll back if errors double.\n",
         "reason": "merged 1 line from project_deploy_old.md"},
        {"op": "archive", "file": "project_deploy_old.md", "kind": "duplicate",
         "revision": "a2748039b44d", "reason": "merged into project_deploy.md"},
        {"op": "create", "file": "reference_release_notes.md", "kind": "other",
         "text": "---\nname: Release notes\ndescription: Where release notes live\n"
                 "metadata:\n  type: reference\n---\nDrafted in the wiki first.\n",
         "reason": "split out of project_deploy.md"},
    ],
}


@dataclass(frozen=True)
class Brief:
    """The folder's findings as an agent reads them: ``sections`` maps each of
    ``SECTIONS`` to its items (JSON-ready mappings, in file order)."""

    directory: str
    today: date
    memories: int
    sections: Mapping[str, tuple[Mapping[str, Any], ...]]

    def to_json(self) -> dict[str, Any]:
        return {"version": BRIEF_VERSION, "directory": self.directory,
                "today": self.today.isoformat(), "memories": self.memories,
                **{name: [dict(item) for item in self.sections[name]] for name in SECTIONS},
                "plan_format": plan_format(), "review": REVIEW, "apply": APPLY}

    def as_text(self) -> str:
        parts = [f"sagemem dream brief: {visible(self.directory)}, "
                 f"{self.today.isoformat()}, {counted(self.memories, 'memory', 'memories')}"]
        for name in SECTIONS:
            parts.append(_section_text(name, self.sections[name]))
        parts.append(_format_text())
        return "\n\n".join(parts) + "\n"


def build_brief(store: MemoryStore, settings: Settings, today: date,
                findings: Findings | None = None) -> Brief:
    """What ``dream plan`` shows an agent planner, from the folder as it reads now."""
    found = findings or find(store, settings, today)
    sections = {
        "duplicates": tuple(_duplicate(found, g.files, g.exact, g.score)
                            for g in found.duplicates),
        "stale_dates": tuple(_stale(found, s.file) for s in found.stale_dates),
        "contradictions": tuple({"id": c.id, "files": list(c.files), "reason": c.reason,
                                 "memories": [_memory(found.memories[f]) for f in c.files]}
                                for c in found.contradictions),
        "expired": tuple({"file": e.file, "revision": found.revisions[e.file],
                          "invalid_at": e.invalid_at.isoformat(), "days_since": e.days}
                         for e in found.expired),
        "idle": tuple({"file": c.file, "revision": found.revisions[c.file], "type": c.type,
                       "idle_days": c.idle_days, "threshold": c.threshold,
                       "last_active": c.last_active, "why": c.why} for c in found.idle),
        "links_index": tuple(_links_index(found)),
        "skipped": tuple({"file": s.file, "why": s.why} for s in found.skipped),
    }
    return Brief(str(store.directory), today, len(found.memories), sections)


def plan_format() -> dict[str, Any]:
    """The plan JSON in brief: its rules and one example of each operation."""
    return {"format": FORMAT, "version": VERSION, "rules": list(PLAN_RULES),
            "kinds": list(KINDS), "example": EXAMPLE}


# -- the items ----------------------------------------------------------------------------

def _memory(memory: Memory) -> dict[str, Any]:
    """A memory as a planner needs it: enough to rewrite it whole."""
    return {"file": memory.file, "revision": memory.revision, "title": memory.title,
            "type": memory.type,
            "updated": memory.updated.isoformat() if memory.updated else None,
            "text": memory.text}


def _duplicate(found: Findings, files: Sequence[str], exact: bool, score: float
               ) -> dict[str, Any]:
    members = [found.memories[f] for f in files if f in found.memories]
    return {"files": list(files), "revisions": {m.file: m.revision for m in members},
            "exact": exact, "score": score,
            "suggested_keeper": keeper_of(members, found).file if members else None,
            "locked": [m.file for m in members if found.is_locked(m.file)],
            "memories": [_memory(m) for m in members]}


def _stale(found: Findings, file: str) -> dict[str, Any]:
    stale = next(s for s in found.stale_dates if s.file == file)
    memory = found.memories[file]
    return {"file": file, "revision": memory.revision,
            "anchor": stale.anchor.isoformat() if stale.anchor else None,
            "dates": [{"line": d.line, "phrase": d.phrase,
                       "replacement": d.replacement or None} for d in stale.dates],
            "text": memory.text}


def _links_index(found: Findings) -> list[dict[str, Any]]:
    """The audit's repairs (with the text ``audit --fix`` would write), then the broken
    links nothing repairs by itself (an agent may know where they should point)."""
    items: list[dict[str, Any]] = [
        {"file": r.file, "revision": found.revisions.get(r.file), "kind": r.kind,
         "fixable": True, "problems": list(r.problems), "text": r.text}
        for r in found.repairs]
    items += [{"file": f.file, "revision": found.revisions.get(f.file), "kind": "links",
               "fixable": False, "line": f.line, "problems": [f.message]}
              for f in found.report.findings if f.category == "broken_link"]
    return items


# -- the text -----------------------------------------------------------------------------

TITLES = {"duplicates": "Duplicates", "stale_dates": "Stale relative dates",
          "contradictions": "Open contradictions", "expired": "Expired",
          "idle": "Idle", "links_index": "Links and index", "skipped": "Skipped"}


def _section_text(name: str, items: Sequence[Mapping[str, Any]]) -> str:
    head = f"## {TITLES[name]} ({len(items)})"
    if not items:
        return f"{head}\nnone"
    return "\n".join([head, *(_ITEM_TEXT[name](item) for item in items)])


def _rev(revision: object) -> str:
    return f"@{str(revision)[:SHORT_REVISION]}" if revision else "(no revision)"


def _duplicate_text(item: Mapping[str, Any]) -> str:
    likeness = "identical" if item["exact"] else f"near-duplicate, score {item['score']:.0f}"
    head = f"- {likeness}; suggested keeper {visible(str(item['suggested_keeper']))}"
    return "\n".join([head, *(_memory_text(m) for m in item["memories"])])


def _stale_text(item: Mapping[str, Any]) -> str:
    anchor = (f"updated {item['anchor']}" if item["anchor"] else
              "no updated: no anchor, leave these as written")
    lines = [f"- {visible(item['file'])} {_rev(item['revision'])}, {anchor}"]
    lines += [f"  line {d['line']}: {visible(d['phrase'])!r}"
              + (f" → {visible(d['replacement'])!r}" if d["replacement"] else "")
              for d in item["dates"]]
    return "\n".join(lines)


def _contradiction_text(item: Mapping[str, Any]) -> str:
    head = f"- {item['id']}: {', '.join(map(visible, item['files']))} — {visible(item['reason'])}"
    return "\n".join([head, *(_memory_text(m) for m in item["memories"])])


def _expired_text(item: Mapping[str, Any]) -> str:
    return (f"- {visible(item['file'])} {_rev(item['revision'])}: invalid_at "
            f"{item['invalid_at']}, {counted(item['days_since'], 'day')} ago")


def _idle_text(item: Mapping[str, Any]) -> str:
    return f"- {visible(item['file'])} {_rev(item['revision'])}: {visible(item['why'])}"


def _links_text(item: Mapping[str, Any]) -> str:
    fix = "audit --fix repairs it" if item["fixable"] else "no automatic repair"
    problems = "; ".join(visible(p) for p in item["problems"])
    return f"- {visible(item['file'])} {_rev(item['revision'])}: {problems} ({fix})"


def _skipped_text(item: Mapping[str, Any]) -> str:
    return f"- {visible(item['file'])}: {visible(item['why'])}"


_ITEM_TEXT: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "duplicates": _duplicate_text, "stale_dates": _stale_text,
    "contradictions": _contradiction_text, "expired": _expired_text, "idle": _idle_text,
    "links_index": _links_text, "skipped": _skipped_text}


def _memory_text(memory: Mapping[str, Any]) -> str:
    updated = f", updated {memory['updated']}" if memory["updated"] else ", no updated"
    body = "\n".join(f"    | {visible(line)}" for line in str(memory["text"]).splitlines())
    return f"  {visible(memory['file'])} {_rev(memory['revision'])}{updated}:\n{body}"


def _format_text() -> str:
    rules = "\n".join(f"- {rule}" for rule in PLAN_RULES)
    example = json.dumps(EXAMPLE, ensure_ascii=False, indent=2)
    return (f"## Plan format ({FORMAT}, version {VERSION})\n{rules}\n\nExample:\n{example}"
            f"\n\nReview a plan first (nothing changes, the report lists every line it "
            f"would leave behind): {REVIEW}\nThen apply that same plan: {APPLY}")
