"""Composing the block the model sees before it answers.

``inject(layers, question, session_id, settings)`` decides what goes in: the memories
search finds in the project layer and the global one (``layers/``; each as
``### file.md:40-52``, a global one as ``### [global] file.md:40-52``, its description, how
old it is, and the matching paragraph), the baseline memories at a session's first step,
a task checkpoint handle, and — only when something real was left out — a short status
card saying what and how to look it up (``card.py``). Within budgets the layers share: a
per-memory character cap, a per-session byte pool for bodies and a small reserve for
status cards. The session, the task checkpoint and the block's records are the
project's; each memory's contradictions and access counts are its own layer's. Nothing
is kept out silently: every candidate ends up injected or listed in ``suppressed`` with
its reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import SagememError, UnsafeFile, WriteFailed
from ..files.controls import visible
from ..files.memory import Memory, file_lines
from ..layers import GLOBAL, PROJECT, Layers
from ..layers.titles import shadowed
from ..search.gate import injectable
from ..search.results import SearchResult
from ..search.text import paragraphs
from ..store import MemoryStore
from ..transcripts.locate import transcript_folders
from ..writes.conflicts import unreadable_records
from ..writes.contradictions import disputed_pairs
from .card import MAX_CARD_BYTES, status_card
from .card import asks_about_history as asks_about_history
from .session import Budget, SessionState, load_session, save_session, signature

TRUNCATED = "…(truncated)"
MAX_RECALLED = 2
"""Transcript excerpts a block quotes at most (docs/transcripts.md): a clue to where the
answer was said, not a second memory search; two stay under a tenth of the hook's cap."""
BELOW_GATE = "below_gate"  # found by search, kept out by the relevance gate
OPEN, CLOSE = "<sagemem-memory>", "</sagemem-memory>"
DISCIPLINE = """\
Notes from earlier sessions, found for this question. They can be stale:
- check the current code before acting on a memory; it may have changed since;
- confirm a path exists before you mention it; grep before you name a function;
- cite a memory as file.md:lines; `sagemem read FILE --start-line N` shows more."""
_EXPLICIT = re.compile(
    # Verification, correction, asking for the basis: these get the original text again.
    # Only clear phrasings: when unsure, the question is treated as an ordinary one.
    r"\b(we (settled|agreed|decided|chose) on\b.*\b(right|correct)\b|didn't we (settle|agree|"
    r"decide|choose|pick)|,\s*(right|correct)\s*\?\s*$|(not|aren't|are not) using\b.*\b"
    r"(any ?more|now)|no longer us|stop using|why (did|didn't|did not) we|"
    r"what was the reason)|"
    r"(上次|之前|当时).{0,20}(吧|对不对)\s*[？?]?\s*$|不用.{0,12}了|不再用|改用|换成|"
    r"为什么当初|为什么没(选|用)|为啥没(选|用)",
    re.IGNORECASE)
_INERT = (("{{", "{\u200b{"), ("}}", "}\u200b}"), ("{%", "{\u200b%"), ("%}", "%\u200b}"),
          ("</", "<\u200b/"), ("<!--", "<\u200b!--"), ("<sagemem", "<\u200bsagemem"))


@dataclass(frozen=True)
class InjectedItem:
    file: str
    start_line: int
    end_line: int
    reason: str  # "match" or "baseline"
    chars: int
    layer: str = PROJECT


@dataclass(frozen=True)
class Suppressed:
    file: str
    reason: str  # below_gate, expired_source, not_yet_valid, conflict_pending, budget, text_cap,
    # max_results
    layer: str = PROJECT


@dataclass(frozen=True)
class Injection:
    """What ``inject`` decided: the block, what went in, what was kept out and why."""

    text: str
    items: tuple[InjectedItem, ...]
    suppressed: tuple[Suppressed, ...]
    status_card: str | None
    budget_used: int
    body_pool: int
    card_reserve: int
    explain: tuple[dict[str, Any], ...] = ()
    notices: tuple[str, ...] = ()


@dataclass
class _Candidate:
    file: str
    reason: str
    score: float
    start_line: int
    end_line: int
    text: str
    memory: Memory
    outcome: str = "candidate"
    layer: str = PROJECT


@dataclass
class _Plan:
    """The composition in progress."""

    budget: Budget
    state: SessionState
    per_item_chars: int
    text_cap: int | None
    blocks: list[str] = field(default_factory=list)
    items: list[InjectedItem] = field(default_factory=list)
    suppressed: list[Suppressed] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    contradictions: set[tuple[str, tuple[str, str]]] = field(default_factory=set)
    """The open contradictions (layer, pair) that kept a candidate out: the card counts
    records, not the two memories of each."""
    body_bytes: int = 0


def is_explicit_request(question: str) -> bool:
    """Verification, correction or asking for the basis: never deduplicated away."""
    return bool(_EXPLICIT.search(question))


def inject(layers: Layers | MemoryStore, question: str, session_id: str, settings: Settings,
           *, now: datetime | None = None, max_text_chars: int | None = None,
           persist: bool = True, deadline: float | None = None,
           transcripts: Sequence[Path] | None = None) -> Injection:
    """Compose the block for ``question`` in session ``session_id``, and remember it;
    past ``deadline`` (``time.monotonic()``, the hook's budget) from what is indexed. A
    bare store is the project layer alone. When no memory answers a question about the
    past, the Claude Code transcripts in ``transcripts`` (None: this project's, as the
    settings allow) may be quoted, marked as such — never as an injected memory."""
    layers = layers if isinstance(layers, Layers) else Layers(layers)
    store = layers.project
    now = now or datetime.now(timezone.utc)
    state = load_session(store.state_dir, session_id) if persist else SessionState(session_id)
    step = state.steps + 1
    repeat = state.last_signature == signature(question) and not is_explicit_request(question)
    searched = not repeat and bool(question.strip())
    candidates, below, notices, more = _candidates(layers, question, settings, step, searched,
                                                   deadline)
    notices = [*layers.notices, *notices]
    plan = _Plan(Budget.of(settings.max_session_bytes), state,
                 _item_cap(settings, max_text_chars), max_text_chars)
    plan.suppressed += [Suppressed(r.file, BELOW_GATE, r.layer) for r in below]
    _filter(layers, settings, candidates, now.date(), plan)
    _place(candidates, plan, settings, now)
    handle = _task_handle(store, settings, session_id, state, step)
    # Only a search that ran and found nothing may say "nothing matched": a repeat runs
    # none, and once told the user so right after its memories had been injected.
    unmatched = searched and not any(item.reason == "match" for item in plan.items)
    if unmatched and settings.transcripts and asks_about_history(question):
        _recall(question, session_id, plan, deadline,
                transcript_folders(settings) if transcripts is None else transcripts)
    card = status_card(question, candidates, plan.state, plan.budget.card_reserve, more=more,
                       has_task=handle is not None, unmatched=unmatched,
                       contradictions=len(plan.contradictions))
    text = _render(plan, handle, card)
    new_state = _next_state(state, question, plan, card, handle, candidates, below, now,
                            repeat)
    if persist:
        notices += _save_session(store, new_state) + _record_injected(layers, plan, now)
    return Injection(text, tuple(plan.items), tuple(plan.suppressed), card,
                     plan.body_bytes, plan.budget.body_pool, plan.budget.card_reserve,
                     new_state.attempts[-1:], tuple(notices + plan.notices))


def _item_cap(settings: Settings, max_text_chars: int | None) -> int:
    """Characters per memory: the setting, shortened when the whole block has a cap."""
    if max_text_chars is None:
        return settings.max_chars
    return max(200, min(settings.max_chars, max_text_chars // 5))


def _candidates(layers: Layers, question: str, settings: Settings, step: int,
                search: bool, deadline: float | None
                ) -> tuple[list[_Candidate], list[SearchResult], list[str], int]:
    """What search finds (when it runs: not for a repeat or an empty question) and, at a
    session's first step, the baselines; the results the relevance gate keeps out (never
    read: they are only listed), the notices and how many more there were."""
    found: list[_Candidate] = []
    below: list[SearchResult] = []
    notices: list[str] = []
    more = 0
    if search:  # hybrid when semantic is on: then only what passes the gate goes in
        response = layers.search(question, limit=settings.max_results, deadline=deadline)
        notices += response.notices
        chosen = injectable(response)
        more = max(response.coverage.candidates - len(response.results), 0) if chosen else 0
        found += [c for c in (_matched(layers, r) for r in chosen) if c]
        given = {(r.layer, r.file) for r in chosen}
        below = [r for r in response.results if (r.layer, r.file) not in given]
    if step == 1:
        if not search:  # else the search brought the indexes up to date
            for _, store in layers.stores():
                index = store.search_index()
                index.sync(deadline=deadline)
                notices, index.notices[:] = notices + index.notices, []
        found = _baselines(layers, settings) + found
    return _dedupe(found), below, notices, more


def _matched(layers: Layers, result: SearchResult) -> _Candidate | None:
    try:
        memory = layers.store(result.layer).get(result.file)
    except SagememError:
        return None
    return _Candidate(result.file, "match", result.score, result.start_line, result.end_line,
                      result.paragraph, memory, layer=result.layer)


def _baselines(layers: Layers, settings: Settings) -> list[_Candidate]:
    """Baseline memories of both layers, injected from the start of the body, highest
    priority first (the project's first on a tie), ``max_baseline`` in all; a global one
    the project shadows (same title) stays out, as in search."""
    listed = [(layer, store, indexed) for layer, store in layers.stores()
              for indexed in store.search_index().baselines()]
    if any(layer != PROJECT for layer, _, _ in listed):
        keys = layers.shadowing()
        listed = [(layer, store, f) for layer, store, f in listed if layer == PROJECT
                  or not shadowed(f.name, _text(f.info.get("name")), keys)]
    listed.sort(key=lambda t: -int(t[2].info.get("baselinePriority") or 0))  # stable
    found = []
    for layer, store, indexed in listed[: settings.max_baseline]:
        try:
            memory = store.get(indexed.name)
        except SagememError:
            continue
        blocks = paragraphs(memory.body, memory.body_line)
        if blocks:
            start, end = blocks[0].start_line, blocks[-1].end_line
            text = "\n".join(file_lines(memory.text)[start - 1:end])
            found.append(_Candidate(memory.file, "baseline", 0.0, start, end, text, memory,
                                    layer=layer))
    return found


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dedupe(found: list[_Candidate]) -> list[_Candidate]:
    """A memory both baseline and matched is injected once, as a match (the soft cap)."""
    matched = {(c.layer, c.file) for c in found
               if c.reason == "match" and c.outcome == "candidate"}
    return [c for c in found if not (c.reason == "baseline" and (c.layer, c.file) in matched)]


def _filter(layers: Layers, settings: Settings, candidates: list[_Candidate],
            today: date, plan: _Plan) -> None:
    """Memories that do not hold today (expired, or before their ``valid_at``) and both
    sides of an open contradiction (while both are live memories) stay out, with a reason.
    A layer's contradictions are recorded in its own state directory."""
    if not settings.validity:
        return
    pairs: list[tuple[str, tuple[str, str]]] = []
    for layer, store in layers.stores():
        if layer == PROJECT or any(c.layer == layer for c in candidates):
            pairs += [(layer, pair) for pair in disputed_pairs(store)]
            plan.notices += [f"{path} is not a readable conflict record; a contradiction in "
                             "it is not applied (sagemem conflicts list)"
                             for path in unreadable_records(store.state_dir)]
    for candidate in candidates:
        if candidate.outcome != "candidate":
            continue
        if candidate.memory.is_invalid(today):
            _suppress(candidate, "expired_source", plan)
        elif candidate.memory.is_not_yet_valid(today):
            _suppress(candidate, "not_yet_valid", plan)
        elif held := [p for p in pairs if p[0] == candidate.layer and candidate.file in p[1]]:
            _suppress(candidate, "conflict_pending", plan)
            plan.contradictions.update(held)


def _suppress(candidate: _Candidate, reason: str, plan: _Plan) -> None:
    candidate.outcome = reason
    plan.suppressed.append(Suppressed(candidate.file, reason, candidate.layer))


def _place(candidates: list[_Candidate], plan: _Plan, settings: Settings, now: datetime) -> None:
    """Render and place what fits: the pool, the result count and the block's text cap."""
    placed = 0
    for candidate in candidates:
        if candidate.outcome != "candidate":
            continue
        block = _render_item(candidate, plan.per_item_chars, settings.stale_days, now)
        reason = _why_not(candidate, block, plan, placed, settings)
        if reason:
            _suppress(candidate, reason, plan)
            continue
        candidate.outcome = "injected"
        placed += candidate.reason == "match"
        plan.blocks.append(block)
        plan.body_bytes += len(block.encode("utf-8"))
        plan.items.append(InjectedItem(candidate.file, candidate.start_line,
                                       candidate.end_line, candidate.reason, len(block),
                                       candidate.layer))


def _recall(question: str, session_id: str, plan: _Plan, deadline: float | None,
            folders: Sequence[Path]) -> None:
    """At most ``MAX_RECALLED`` excerpts of past sessions that answer ``question``, each
    marked as a transcript and not a memory, within the pool and the text cap; counted
    as bytes spent, never as an item (no memory was injected)."""
    if not folders:
        return
    from ..transcripts.excerpt import quoted
    from ..transcripts.search import search_transcripts

    try:
        found = search_transcripts(question, folders, limit=MAX_RECALLED, deadline=deadline,
                                   skip_session=session_id)
    except (OSError, ValueError) as exc:  # a quote is a bonus: it never costs the block
        plan.notices.append(f"transcripts not searched ({type(exc).__name__}: {exc})")
        return
    plan.notices += found.notices
    for hit in found.hits:
        block = "\n".join(inert(line) for line in quoted(hit.citation, hit.date, hit.role,
                                                        hit.excerpt))
        size = len(block.encode("utf-8"))
        if plan.state.body_used + plan.body_bytes + size > plan.budget.body_pool or (
                plan.text_cap is not None and len(_render(plan, None, None)) + len(block)
                + MAX_CARD_BYTES + 2 > plan.text_cap):
            return
        plan.blocks.append(block)
        plan.body_bytes += size


def _why_not(candidate: _Candidate, block: str, plan: _Plan, placed: int,
             settings: Settings) -> str | None:
    size = len(block.encode("utf-8"))
    soft = candidate.reason == "match" and candidate.memory.baseline
    if candidate.reason == "match" and placed >= settings.max_results:
        return "max_results"
    if not soft and plan.state.body_used + plan.body_bytes + size > plan.budget.body_pool:
        return "budget"
    if plan.text_cap is not None:
        used = len(_render(plan, None, None)) + len(block) + MAX_CARD_BYTES + 2
        if used > plan.text_cap:
            return "text_cap"
    return None


def _render_item(candidate: _Candidate, max_chars: int, stale_days: int, now: datetime) -> str:
    body = candidate.text if len(candidate.text) <= max_chars else (
        candidate.text[:max_chars].rstrip() + TRUNCATED)
    tag = "[global] " if candidate.layer == GLOBAL else ""
    header = inert(f"### {tag}{candidate.file}:{candidate.start_line}-{candidate.end_line}")
    about = " ".join(candidate.memory.description.split()) or candidate.memory.title
    fresh = _freshness(candidate.memory, stale_days, now)
    lines = [header, inert(about + (f" ({fresh})" if fresh else ""))]
    lines += ["    " + inert(line) for line in body.splitlines()]
    return "\n".join(lines)


def _freshness(memory: Memory, stale_days: int, now: datetime) -> str | None:
    """``saved N days ago`` once older than the stale threshold (0: always)."""
    saved = memory.updated or (datetime.fromtimestamp(memory.mtime, tz=timezone.utc).date()
                               if memory.mtime else None)
    if saved is None:
        return None
    age = (now.date() - saved).days
    if stale_days and age < stale_days:
        return None
    return "saved today" if age <= 0 else f"saved {age} day{'s' if age != 1 else ''} ago"


def inert(text: str) -> str:
    """Memory text that cannot close the block, trigger the host's templating, or carry
    a control character (shown as ``\\x1b``) to wherever the block is displayed."""
    for raw, safe in _INERT:
        text = text.replace(raw, safe)
    return visible(text)


def _task_handle(store: MemoryStore, settings: Settings, session_id: str,
                 state: SessionState, step: int) -> tuple[str, str] | None:
    """(line, revision) of the task checkpoint, at a session's start or when it changed."""
    from .tasks import handle, load_checkpoint

    try:
        checkpoint = load_checkpoint(store.state_dir, settings.task_id or session_id)
    except SagememError:
        return None
    if checkpoint is None or (step > 1 and checkpoint.revision == state.task_revision):
        return None
    return handle(checkpoint), checkpoint.revision


def _render(plan: _Plan, handle: tuple[str, str] | None, card: str | None) -> str:
    parts = [*plan.blocks]
    if handle:
        parts.append(inert(handle[0]))
    if card:
        parts.append(inert(card))
    if not parts:
        return ""
    return "\n\n".join([OPEN, DISCIPLINE, *parts, CLOSE])


def _next_state(state: SessionState, question: str, plan: _Plan, card: str | None,
                handle: tuple[str, str] | None, candidates: list[_Candidate],
                below: list[SearchResult], now: datetime, repeat: bool) -> SessionState:
    listed = [(c.file, c.reason, c.score, c.start_line, c.end_line, c.outcome, c.layer)
              for c in candidates]
    listed += [(r.file, "match", r.score, r.start_line, r.end_line, BELOW_GATE, r.layer)
               for r in below]
    from ..writes.redact import redact  # a prompt may hold a pasted token: kept redacted

    attempt = {"at": now.isoformat(timespec="seconds"), "question": redact(question).text[:200],
               "step": state.steps + 1, "repeat": repeat,
               "candidates": [{"file": file, "reason": reason, "score": round(score, 4),
                               "lines": f"{start}-{end}", "outcome": outcome,
                               **({"layer": layer} if layer != PROJECT else {})}
                              for file, reason, score, start, end, outcome, layer in listed]}
    return replace(
        state.with_attempt(attempt), steps=state.steps + 1,
        body_used=state.body_used + plan.body_bytes,
        card_used=state.card_used + (len(card.encode("utf-8")) if card else 0),
        last_signature=signature(question),
        card_signatures=(*state.card_signatures, signature(card)) if card else
        state.card_signatures,
        task_revision=handle[1] if handle else state.task_revision)


def _save_session(store: MemoryStore, state: SessionState) -> list[str]:
    """Save the session, or say why not (a read-only or full state directory)."""
    try:
        save_session(store.state_dir, state)
    except WriteFailed as exc:
        return [f"session {state.session} was not saved ({exc.path}: {exc.reason}); "
                "the next question may be given the same memories again"]
    except UnsafeFile as exc:  # a link planted at sessions/: never written through
        return [f"session {state.session} was not saved ({exc}); "
                "the next question may be given the same memories again"]
    return []


def _record_injected(layers: Layers, plan: _Plan, now: datetime) -> list[str]:
    """Each layer's access ledger counts its own memories."""
    from ..history.ledger import record_if_possible

    warnings = []
    for layer, store in layers.stores():
        files = [item.file for item in plan.items if item.layer == layer]
        warnings += record_if_possible(store.state_dir, "injected", files, now) if files else []
    return warnings
