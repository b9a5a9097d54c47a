"""The consolidation tools: ``dream_plan`` (what to tidy, and the plan format) and
``dream_apply`` (a plan the model wrote, applied as guarded writes with a manifest).

The model is the planner here; sagemem calls no model. Its plan meets every guard a
person's does — a rollback point first, each operation a guarded write, a memory edited
since planning refused as a conflict — and the loss ceiling, which a model cannot lift:
``--allow-loss`` is the user's, on the command line.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import Field

from ..config import Settings, load_settings
from ..store import MemoryStore
from .hints import hints
from .outputs import DreamBrief, DreamOutcome


class ConsolidationTools:
    """Mixed into ``MemoryTools``: the same store, thread and error handling."""

    store: MemoryStore

    def _settings(self) -> Settings:
        return load_settings(memory_dir=self.store.directory, state_dir=self.store.state_dir)

    @hints(read_only=True, idempotent=True)
    def dream_plan(self) -> DreamBrief:
        """Before tidying the memory folder: duplicates, relative dates that rot
        ("last week", 上周), contradictions, expired and idle memories, broken links and
        index lines — each with the files and revisions a plan needs — and the plan
        format. Write a plan of create/rewrite/archive operations (each with the
        revision it read and a reason) and send it to dream_apply."""
        from ..dream.brief import build_brief

        brief = build_brief(self.store, self._settings(), date.today())
        return DreamBrief(brief.to_json(), brief.as_text())

    @hints(read_only=False, destructive=True)
    def dream_apply(
        self,
        plan: Annotated[dict[str, Any] | list[Any], Field(
            description="The plan: {\"operations\": [...]} in dream_plan's plan_format "
                        "(or the bare list of operations).")],
        dry_run: Annotated[bool, Field(
            description="true: only report what would change (nothing is written).")
        ] = False,
    ) -> DreamOutcome:
        """Apply a consolidation plan: a rollback point first, then each operation as a
        guarded write (a memory changed since you read it is refused and kept as a
        conflict). The result lists what was applied and refused, every line no active
        memory holds any more (deleted_facts — check that none is a fact still true),
        and the run id; `sagemem dream undo RUN` takes the folder back. A plan dropping
        more than the loss ceiling of its rewritten lines is refused whole."""
        from ..dream.plan import from_json
        from ..dream.run import dream_run

        parsed = from_json(plan, planner="mcp")
        report = dream_run(self.store, self._settings(), parsed, apply=not dry_run)
        m = report.manifest
        return DreamOutcome(m["run_id"], m["status"], m["applied"], m["planned"],
                            m["refused"], m["deleted_facts"], m["loss_share"],
                            m.get("undo"), report.text)
