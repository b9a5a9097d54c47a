"""What ``sagemem doctor`` found: one finding per thing checked, each problem with the
command or the edit that fixes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["ok", "note", "problem"]


@dataclass(frozen=True)
class Finding:
    level: Level
    topic: str
    message: str
    fix: str = ""


def healthy(findings: list[Finding]) -> bool:
    return not any(f.level == "problem" for f in findings)
