"""Which planner makes a run's plan: ``tidy`` (deterministic), ``llm`` (an
OpenAI-compatible endpoint) or a plan file someone — an agent, a person — wrote.

Every surface (CLI, MCP, library) picks a planner through ``make_plan``, so a plan is
the same whoever asked for it, and a planner that cannot plan fails here, before a run
begins: never a silent fallback to another one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ..audit.report import AuditReport
from ..config import DREAM_LLM_KEY_ENV, Settings
from ..errors import InvalidPlan
from ..files.paths import read_regular
from ..store import MemoryStore
from .plan import MAX_PLAN_BYTES, Plan, loads

PLANNERS = ("tidy", "llm")


@dataclass(frozen=True)
class Planned:
    """A plan, and why it is incomplete when it is (``cut_short``: a truncated model)."""

    plan: Plan
    cut_short: str | None = None
    audit: AuditReport | None = None
    """The audit the planner ran on the folder as it planned (tidy does), so the run
    need not run it again."""


def make_plan(store: MemoryStore, settings: Settings, planner: str, *, apply: bool,
              today: date, env: Mapping[str, str] | None = None) -> Planned:
    """The plan of ``planner``: ``tidy``, ``llm``, or the path of a plan file."""
    if planner == "tidy":
        from .findings import find
        from .tidy import plan as tidy_plan

        found = find(store, settings, today)
        return Planned(tidy_plan(store, settings, today, found), audit=found.report)
    if planner == "llm":
        return _llm_plan(store, settings, apply=apply, today=today, env=env)
    return Planned(read_plan_file(Path(planner)))


def read_plan_file(path: Path) -> Plan:
    """A plan file, through the safe read path (no link followed, its size bounded)."""
    from ..errors import SagememError

    if not os.path.lexists(path):
        raise InvalidPlan(f"there is no plan file {path}")
    try:
        data = read_regular(path, MAX_PLAN_BYTES).data
    except SagememError as exc:
        raise InvalidPlan(f"{path} cannot be read ({exc})") from None
    return loads(data, planner=path.name)


def without_key(plan: Plan, key: str | None) -> Plan:
    """The plan with the endpoint's key taken out of every text a model wrote: a model
    (or a server) that echoes it must not put it in a memory, a manifest or a report."""
    if not key:
        return plan

    def clean(text: str) -> str:
        return text.replace(key, "<REDACTED:llm_key>")

    from dataclasses import replace

    return Plan(tuple(replace(o, reason=clean(o.reason),
                              text=None if o.text is None else clean(o.text))
                      for o in plan.operations), plan.planner,
                tuple(clean(n) for n in plan.notes))


def _llm_plan(store: MemoryStore, settings: Settings, *, apply: bool, today: date,
              env: Mapping[str, str] | None) -> Planned:
    from .brief import build_brief
    from .llm import plan_with_llm

    brief = build_brief(store, settings, today).as_text()
    answer = plan_with_llm(store, settings, apply=apply, brief=brief, env=env)
    plan = without_key(Plan(answer.plan.operations, answer.plan.planner,
                            (*answer.plan.notes, *answer.notes)),
                       (env or os.environ).get(DREAM_LLM_KEY_ENV))
    cut = None
    if answer.truncated:
        cut = ("the model's answer was cut off at its length limit three times; the plan "
               "holds only the operations it completed")
    return Planned(plan, cut)
