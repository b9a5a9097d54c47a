"""A memory that says it was replaced (``superseded_by``) never ranks above the memory
that replaced it.

The old version of a note usually shares most of its words with the new one, and often
more of the question's (it is longer, or worded the way the question is): a re-read found
``project_deploy_process_v1.md`` (superseded, invalid) at 1.198 above its replacement at
1.043. Dropping it would hide what search is asked on purpose ("how did we deploy
before?"), so it stays in the results, directly after its replacement and scored no
higher than it. No constant: the order comes from the memory's own field, as dsh-engram
demotes a superseded memory below the one that replaced it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def after_replacements(ranked: Sequence[T], name: Callable[[T], str],
                       replaced_by: Callable[[T], str | None]) -> list[T]:
    """``ranked`` with each item whose replacement ranks below it moved to directly after
    that replacement; an item is never moved up, and everything else keeps its order. A
    chain (v1 → v2 → v3) ends in replacement order; a cycle moves nothing."""
    position = {name(item): i for i, item in enumerate(ranked)}
    by_name = {name(item): item for item in ranked}

    def key(i: int, item: T) -> tuple[int, int, int]:
        root, depth = _newest(name(item), by_name, name, replaced_by)
        return max(i, position[root]), depth, i

    return [item for _, item in sorted(enumerate(ranked), key=lambda pair: key(*pair))]


def capped_scores(ranked: Sequence[T], name: Callable[[T], str],
                  replaced_by: Callable[[T], str | None],
                  score: Callable[[T], float]) -> dict[str, float]:
    """Each item's score, no higher than that of the replacement ranked above it, once
    ``after_replacements`` put it there; a chain is capped all the way down (v1 never
    above v3), so the printed scores still fall down the page."""
    capped: dict[str, float] = {}
    for item in ranked:
        target = replaced_by(item)
        own = score(item)
        capped[name(item)] = min(own, capped[target]) if target in capped else own
    return capped


def _newest(start: str, by_name: dict[str, T], name: Callable[[T], str],
            replaced_by: Callable[[T], str | None]) -> tuple[str, int]:
    """The last memory of ``start``'s replacement chain among ``by_name``, and how many
    steps away it is; ``(start, 0)`` for a cycle."""
    seen, current = [start], start
    while (target := replaced_by(by_name[current])) and target in by_name:
        if target in seen:
            return start, 0
        seen.append(target)
        current = target
    return current, len(seen) - 1
