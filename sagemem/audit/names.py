"""The audit's check of file names: two files that are one name to sagemem.

Names are compared as ``paths.name_key`` compares them (case, Unicode form, full-width
letters), so ``USER_PETS.md`` beside ``user_pets.md`` — or the full-width
``ｕｓｅｒ_pets.md`` — is one name with two files: a name that matches neither exactly is
refused as ambiguous, and a clone onto a case-insensitive disk (macOS, Windows) keeps
only one of them. sagemem never makes such a pair (every create refuses it); a person,
a sync tool or an agent host writing files directly can.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..files.paths import name_key
from .scan import Finding, Scan, problem, shown_name


def check_name_collisions(s: Scan) -> Iterable[Finding]:
    """One problem per group of files whose names are one name, naming every file."""
    groups: dict[str, list[str]] = {}
    for name in s.names:
        groups.setdefault(name_key(name), []).append(shown_name(name))
    return [_collision(sorted(files)) for files in groups.values() if len(files) > 1]


def _collision(files: list[str]) -> Finding:
    others = ", ".join(files[1:])
    return problem("name_collision", files[0], None,
                   f"one name with {others}: they differ only in case or Unicode form, so "
                   "sagemem cannot tell them apart and a case-insensitive disk keeps only "
                   "one; merge them or rename all but one", files=files)
