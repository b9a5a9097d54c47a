"""The Injection screen: what a session was handed for its recent questions and what was
kept out and why (the session's saved attempts, as ``sagemem session show`` and
``inject --explain`` print them), a question tried without spending any session's
budget, the access ledger, and the settings in effect with where each came from.

The settings are read here, at the edge, as ``sagemem config`` reads them: from the
environment and ``settings.json`` of the folder the panel serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..config import Settings, describe_settings, load_settings
from ..history.ledger import MemoryAccess
from ..history.ledger import load as load_ledger
from ..inject.block import Injection, inject
from ..inject.session import DEFAULT_SESSION, SESSIONS_DIR, SessionState, load_session
from ..layers import Layers
from .health import HealthCache

if TYPE_CHECKING:
    from pathlib import Path

    from .app import Panel

SESSIONS_SHOWN = 50
LEDGER_SHOWN = 50
MAX_QUESTION = 2000
REASONS = {
    "injected": "in the block",
    "below_gate": "found, but the relevance gate judged the match too weak",
    "expired_source": "no longer holds (its invalid_at has passed)",
    "not_yet_valid": "does not hold yet (its valid_at is still ahead)",
    "conflict_pending": "one side of an open contradiction (resolve it on Health)",
    "budget": "the session's byte pool for memory bodies is spent",
    "text_cap": "the block's text cap was reached",
    "max_results": "more matches than max_results",
    "candidate": "considered, not placed",
}
"""Each outcome of a candidate (``inject/block.py``) in words."""


@dataclass(frozen=True)
class Attempt:
    """One question of a session: what went in, and what stayed out with its reason."""

    step: object
    at: str
    question: str
    repeat: bool
    injected: tuple[dict[str, Any], ...]
    kept_out: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class SettingRow:
    key: str
    value: str
    source: str
    env: str


@dataclass(frozen=True)
class InjectionPage:
    sessions: tuple[str, ...]
    session: str
    state: SessionState | None
    attempts: tuple[Attempt, ...]
    question: str
    tried: Injection | None
    tried_attempt: Attempt | None
    ledger: tuple[tuple[str, MemoryAccess], ...]
    ledger_warnings: tuple[str, ...]
    settings: tuple[SettingRow, ...]
    settings_warnings: tuple[str, ...]
    problems: int
    conflicts: int


def routes(panel: Panel) -> list[Route]:
    cache = panel.health  # one audit per folder change for every screen

    async def injection(request: Request) -> HTMLResponse:
        session = request.query_params.get("session", "")[:200]
        question = request.query_params.get("q", "")[:MAX_QUESTION]
        page = await panel.run(injection_page, panel, cache, session, question)
        return panel.page(request, "injection.html", page=page, screen="injection",
                          reasons=REASONS, problems=page.problems, conflicts=page.conflicts)

    return [Route("/injection", injection)]


def settings_of(layers: Layers) -> Settings:
    """The settings in effect for the folder the panel serves: as the environment names
    them, or — when ``sagemem ui`` was given its folder by an option — for that folder."""
    project = layers.project
    settings = load_settings()
    if settings.memory_dir != project.directory or settings.state_dir != project.state_dir:
        settings = load_settings(memory_dir=project.directory, state_dir=project.state_dir)
    return settings


def injection_page(panel: Panel, cache: HealthCache, session: str,
                   question: str) -> InjectionPage:
    store = panel.layers.project
    settings = settings_of(panel.layers)
    known = session_ids(store.state_dir)
    chosen = session or (known[0] if known else "")
    state = load_session(store.state_dir, chosen) if chosen in known else None
    attempts = tuple(attempt_of(a) for a in reversed(state.attempts)) if state else ()
    tried = None
    if question.strip():  # persist=False: a trial spends no session's budget, counts nothing
        tried = inject(panel.layers, question, chosen or DEFAULT_SESSION, settings,
                       persist=False)
    entries, ledger_warnings = load_ledger(store.state_dir)
    healths = [cache.health(s) for _, s in panel.layers.stores()]
    return InjectionPage(
        known, chosen, state, attempts, question, tried,
        attempt_of(tried.explain[-1]) if tried and tried.explain else None,
        _busiest(entries), tuple(ledger_warnings), settings_rows(settings),
        settings.warnings, sum(h.problems for h in healths),
        sum(h.open_conflicts for h in healths))


def session_ids(state_dir: Path) -> tuple[str, ...]:
    """The sessions with saved state, the most recently used first."""
    folder = state_dir / SESSIONS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return ()
    files = [p for p in folder.glob("*.json") if p.is_file() and not p.is_symlink()]
    files.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
    return tuple(p.stem for p in files[:SESSIONS_SHOWN])


def attempt_of(attempt: dict[str, Any]) -> Attempt:
    """A saved attempt split into what went in and what stayed out."""
    candidates = [c for c in attempt.get("candidates", []) if isinstance(c, dict)]
    return Attempt(attempt.get("step"), str(attempt.get("at", "")),
                   str(attempt.get("question", "")), bool(attempt.get("repeat")),
                   tuple(c for c in candidates if c.get("outcome") == "injected"),
                   tuple(c for c in candidates if c.get("outcome") != "injected"))


def settings_rows(settings: Settings) -> tuple[SettingRow, ...]:
    """``describe_settings`` as the table shows it: key, value, source, env variable."""
    return tuple(SettingRow(key, str(value), source, env)
                 for key, value, source, env in describe_settings(settings))


def _busiest(entries: dict[str, MemoryAccess]) -> tuple[tuple[str, MemoryAccess], ...]:
    ranked = sorted(entries.items(), key=lambda e: (-e[1].injected.count, e[0]))
    return tuple(ranked[:LEDGER_SHOWN])
