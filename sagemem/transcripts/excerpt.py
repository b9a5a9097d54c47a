"""What a transcript hit shows: a few hundred characters around its best sentence,
redacted and made safe, and the lines the injected block quotes it in.

A transcript holds whatever was pasted into a session — a token in a command, a
database URL with its password — so an excerpt passes through the redaction every
memory write passes through (``writes/redact``) before it is cut, and a secret cut in
half is still found whole. Control characters are then written out as text
(``files/controls.visible``): a transcript is not ours, and an escape sequence in it must
not drive the terminal that shows it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..files.controls import visible
from ..search.text import tokens
from ..writes.redact import redact

MAX_EXCERPT_CHARS = 320
"""An excerpt's length: the sentence that matched and a little around it. Two of them,
marked, stay a small part of the block's budget."""
CONTEXT_BEFORE = 80  # characters kept before the best sentence, when there is room
ELLIPSIS = "…"
_SENTENCE = re.compile(r"[^\n.!?。！？]+[.!?。！？]*")


def excerpt_of(text: str, weights: Mapping[str, float]) -> str:
    """The redacted window of ``text`` around the sentence holding most of the query's
    weighted terms (``weights``: term → weight), on one line."""
    clean = redact(text).text
    start, end = _best_sentence(clean, weights)
    if end - start < MAX_EXCERPT_CHARS:
        start = max(0, start - CONTEXT_BEFORE)
    end = min(len(clean), start + MAX_EXCERPT_CHARS)
    start = max(0, min(start, end - MAX_EXCERPT_CHARS))
    shown = " ".join(clean[start:end].split())
    return visible((ELLIPSIS if start > 0 else "") + shown
                   + (ELLIPSIS if end < len(clean) else ""))


def _best_sentence(text: str, weights: Mapping[str, float]) -> tuple[int, int]:
    best, span = -1.0, (0, min(len(text), MAX_EXCERPT_CHARS))
    for match in _SENTENCE.finditer(text):
        score = sum(weights.get(t, 0.0) for t in set(tokens(match.group())))
        if score > best:
            best, span = score, match.span()
    return span


def quoted(citation: str, date: str, role: str, excerpt: str) -> list[str]:
    """The injected lines for one hit: a header that says it is a transcript and not a
    saved memory, then the excerpt, indented and quoted."""
    said = "the user" if role == "user" else "the assistant"
    when = f", {date}" if date else ""
    return [f"From a past session ({citation}{when}), not a saved memory; {said} said:",
            f'    "{excerpt}"']
