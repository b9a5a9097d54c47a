"""What ``sagemem doctor`` found: one finding per thing checked, each problem with the
command or the edit that fixes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["ok", "note", "problem"]


@dataclass(frozen=True)
class Finding:
    """One thing doctor checked: ``topic`` (hooks, index, embeddings…), what it found,
    and for a problem the ``fix`` that fixes it (a command or the edit to make)."""

    level: Level
    topic: str
    message: str
    fix: str = ""


def healthy(findings: list[Finding]) -> bool:
    """Whether doctor exits 0: notes are information, only a problem fails it."""
    return not any(f.level == "problem" for f in findings)
