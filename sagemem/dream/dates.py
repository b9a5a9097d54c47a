"""A stand-in for dream-dates2's relative dates: "yesterday", "last week", 昨天 only.

The real module (``find_relative_dates``, ``absolute_dates``) replaces this file when the
branches meet; only its names and fields are relied on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

_PHRASES = re.compile(r"\b(?:yesterday|last week)\b|昨天", re.IGNORECASE)


@dataclass(frozen=True)
class RelativeDate:
    """One relative phrase in a text: where it is, and what it becomes from the anchor."""

    start: int
    end: int
    phrase: str
    replacement: str
    first_day: date


def find_relative_dates(text: str, anchor: date) -> list[RelativeDate]:
    """Every relative phrase of the three known, in text order."""
    return [_resolved(m, anchor) for m in _PHRASES.finditer(text)]


def absolute_dates(text: str, anchor: date) -> str:
    """``text`` with every phrase ``find_relative_dates`` finds replaced."""
    for found in reversed(find_relative_dates(text, anchor)):
        text = text[:found.start] + found.replacement + text[found.end:]
    return text


def _resolved(match: re.Match[str], anchor: date) -> RelativeDate:
    phrase = match.group(0)
    if phrase == "昨天":
        day = anchor - timedelta(days=1)
        return RelativeDate(match.start(), match.end(), phrase, day.isoformat(), day)
    if phrase.lower() == "yesterday":
        day = anchor - timedelta(days=1)
        return RelativeDate(match.start(), match.end(), phrase, f"on {day.isoformat()}", day)
    monday = anchor - timedelta(days=anchor.weekday() + 7)
    return RelativeDate(match.start(), match.end(), phrase,
                        f"the week of {monday.isoformat()}", monday)
