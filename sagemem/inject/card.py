"""The status card: a few lines at the end of the block, only when something real was
left out — memories cut by the budget, expired or not yet valid, both sides of a pending
contradiction — or, when a search matched nothing for a question about the user's own
past (or with a task checkpoint), that it was not saved. A card is said once a session,
within the card reserve.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ..files.memory import Memory
from .session import SessionState, signature

MAX_CARD_BYTES = 512
_HISTORY = re.compile(
    # Questions about the user's own past: they alone earn "nothing matched, it was not
    # saved". A word every question can hold is no such sign: a bare 我的 ("my": 我的猫叫
    # 什么名字) or "before"/之前 ahead of what it qualifies ("before deploying", 部署之前)
    # once claimed that for ordinary questions. Possessives count with a history noun;
    # before/之前 as "previously": at a clause's end, or opening one.
    r"\b(last time|previously|did (i|we)|have (i|we)|what did (i|we)|remember|"
    r"my .{0,20}(preference|history))\b|\b(before|earlier)\s*([,.;:!?]|$)|"
    r"上次|(^|[\s，,。；;？?！!]|[我你他她]们?)(之前|以前)|我们.{0,6}(讨论|聊|说)过|记得|"
    r"我的.{0,10}(偏好|喜好|习惯|历史)",
    re.IGNORECASE)


class Considered(Protocol):
    """What the card reads of a memory the block considered, and what became of it."""

    file: str
    reason: str  # "match" or "baseline"
    score: float
    start_line: int
    end_line: int
    memory: Memory
    outcome: str  # "injected", or why it stayed out
    layer: str  # "project" or "global" (``layers/``)


def asks_about_history(question: str) -> bool:
    return bool(_HISTORY.search(question))


def status_card(question: str, candidates: Sequence[Considered], state: SessionState,
                card_reserve: int, *, more: int, has_task: bool, unmatched: bool,
                contradictions: int) -> str | None:
    """A few lines when something real was left out; ``None`` when nothing was, or the
    same card was shown this session, or the reserve is spent. ``contradictions`` counts
    the open contradiction records that kept candidates out (each holds two memories)."""
    lines = _gap_lines(question, candidates, more, has_task, unmatched, contradictions)
    if not lines:
        return None
    card = _fit_bytes("[sagemem] " + " ".join(lines), MAX_CARD_BYTES)
    if signature(card) in state.card_signatures:
        return None
    if state.card_used + len(card.encode("utf-8")) > card_reserve:
        return None
    return card
def _gap_lines(question: str, candidates: Sequence[Considered], more: int, has_task: bool,
               unmatched: bool, contradictions: int) -> list[str]:
    cut = [c for c in candidates if c.outcome in ("budget", "text_cap", "max_results")]
    held = sum(c.outcome == "conflict_pending" for c in candidates)
    expired = [c for c in candidates if c.outcome == "expired_source" and c.reason == "match"]
    lines = []
    if cut:
        best = max(cut, key=lambda c: c.score)
        tag, flag = ("[global] ", " --global") if best.layer == "global" else ("", "")
        lines.append(f"{len(cut)} matching memor{'y was' if len(cut) == 1 else 'ies were'} left "
                     f"out (budget). Best clue: {tag}{best.file}:{best.start_line}-"
                     f"{best.end_line}. Read it: sagemem read{flag} {best.file} --start-line "
                     f"{best.start_line}.")
    if expired:
        newer = sorted({c.memory.superseded_by for c in expired if c.memory.superseded_by})
        lines.append(f"{len(expired)} expired memor{'y' if len(expired) == 1 else 'ies'} "
                     "not injected" + (f"; superseded by {', '.join(newer)}." if newer else "."))
    lines += _not_yet_valid_lines(candidates)
    if held:  # each held memory was held by a record ``contradictions`` counts
        plural = "s" if contradictions != 1 else ""
        lines.append(f"{contradictions} contradiction{plural} pending; {held} related "
                     f"memor{'y' if held == 1 else 'ies'} not injected. "
                     "Resolve: sagemem conflicts list.")
    if unmatched and not lines and (has_task or asks_about_history(question)):
        lines.append("No saved memory matches this question; if it came up before, it was not "
                     "saved. Try other words: sagemem search \"...\".")
    return lines


def _not_yet_valid_lines(candidates: Sequence[Considered]) -> list[str]:
    """Matches that take effect later: said once, with the earliest date, so the model
    neither presents them as holding nor believes nothing was saved."""
    dates = sorted(c.memory.valid_at for c in candidates
                   if c.outcome == "not_yet_valid" and c.reason == "match" and c.memory.valid_at)
    if not dates:
        return []
    if len(dates) == 1:
        return [f"1 memory not injected: it takes effect on {dates[0]}."]
    return [f"{len(dates)} memories not injected: the first takes effect on {dates[0]}."]


def _fit_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"
