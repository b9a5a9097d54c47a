"""Near-duplicate memories, found without comparing all pairs.

Each memory is reduced to its name, description and the start of its body. Candidates
are blocked first: two memories are compared only if they share one of their
``BLOCK_TOKENS`` rarest tokens (rarity counted over the folder) or the pair of their two
rarest ones, and a block holding more than ``MAX_BLOCK`` memories is not a block of rare
things, so it is skipped. Each memory then sits in at most ``BLOCK_TOKENS + 1`` blocks of
at most ``MAX_BLOCK``: the work grows linearly with the folder, never with its square.
Candidates are scored with rapidfuzz's ``fuzz.ratio`` (0-100) and kept at ``THRESHOLD``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from .memory import Memory
from .text import tokens

THRESHOLD = 90.0
BODY_CHARS = 300
BLOCK_TOKENS = 4
MAX_BLOCK = 50


@dataclass(frozen=True)
class NearDuplicate:
    """Two memories that read almost the same; ``file`` sorts before ``other``."""

    file: str
    other: str
    score: float


def fingerprint(memory: Memory) -> str:
    """What is compared: name, description and the start of the body, case-folded."""
    return f"{memory.title}\n{memory.description}\n{memory.body.strip()[:BODY_CHARS]}".casefold()


def near_duplicates(memories: Sequence[Memory], threshold: float = THRESHOLD
                    ) -> list[NearDuplicate]:
    """Every pair scoring at least ``threshold``, each once, sorted by file."""
    from rapidfuzz.fuzz import ratio

    texts = [fingerprint(m) for m in memories]
    found = []
    for i, j in sorted(candidate_pairs(texts)):
        score = ratio(texts[i], texts[j], score_cutoff=threshold)
        if score:
            a, b = sorted((memories[i].file, memories[j].file))
            found.append(NearDuplicate(a, b, score))
    return sorted(found, key=lambda d: (d.file, d.other))


def candidate_pairs(texts: Sequence[str]) -> set[tuple[int, int]]:
    """Index pairs sharing a blocking key (see the module docstring)."""
    token_sets = [set(tokens(text)) for text in texts]
    frequency = Counter(token for found in token_sets for token in found)
    blocks: defaultdict[object, list[int]] = defaultdict(list)
    for i, found in enumerate(token_sets):
        rarest = sorted(found, key=lambda t: (frequency[t], t))[:BLOCK_TOKENS]
        for token in rarest:
            blocks[token].append(i)
        blocks[tuple(rarest[:2])].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        if 1 < len(members) <= MAX_BLOCK:
            pairs.update(combinations(members, 2))
    return pairs
