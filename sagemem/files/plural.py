"""Counts in messages: ``1 file``, ``2 files`` — never ``1 candidates``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` with its noun in agreement; ``plural`` for nouns not made with -s."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
