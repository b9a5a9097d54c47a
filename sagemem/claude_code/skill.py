"""The sagemem skill (``SKILL.md``, shipped in the wheel) and where Claude Code finds it:
``~/.claude/skills/sagemem/SKILL.md`` for the user, ``<project>/.claude/skills/...`` for
a project.

A copy someone edited is theirs: it is replaced only while it is still byte for byte
what sagemem wrote there (its record says so), never on a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Literal

from .changes import read_record, sha256

SKILL_RELATIVE = Path("skills") / "sagemem" / "SKILL.md"
"""Under ``.claude/``, as under the package."""

SkillState = Literal["missing", "current", "outdated", "edited"]


@dataclass(frozen=True)
class SkillStatus:
    """The skill at ``path``: ``current`` (this sagemem's), ``outdated`` (an older one that
    sagemem wrote and nobody changed), ``edited`` (changed by hand, or not ours) or
    ``missing``; ``text`` is what is there now."""

    path: Path
    state: SkillState
    text: bytes | None


def shipped_skill() -> bytes:
    """The SKILL.md of this sagemem, from the package."""
    return files("sagemem").joinpath(*SKILL_RELATIVE.parts).read_bytes()


def skill_status(path: Path, records: Path) -> SkillStatus:
    """How the copy at ``path`` compares with the shipped skill and with what we wrote."""
    try:
        text: bytes | None = path.read_bytes()
    except FileNotFoundError:
        return SkillStatus(path, "missing", None)
    except OSError:
        return SkillStatus(path, "edited", None)  # unreadable: certainly not replaced
    if text == shipped_skill():
        return SkillStatus(path, "current", text)
    record = read_record(path, records)
    if record is not None and record.sha256 == sha256(text):
        return SkillStatus(path, "outdated", text)
    return SkillStatus(path, "edited", text)
