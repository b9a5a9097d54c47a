"""Near-duplicate memories, found without comparing all pairs.

Each memory is reduced to its name, description and the start of its body. Candidates
are blocked first. A memory's keys are its ``BLOCK_TOKENS`` rarest words (rarity counted
over the folder; they find copies in a folder with a varied vocabulary) and ``BANDS``
MinHash-style band keys, each the ``BAND_WIDTH`` first words of the text in a fixed
pseudo-random order (they find copies made only of common words: a near-copy shares
most of its words, so most of its bands). A block holding more than ``MAX_BLOCK``
memories is not a block of near-copies, so it is skipped. Each memory sits in at most
``BLOCK_TOKENS + BANDS`` blocks of at most ``MAX_BLOCK``: the work grows linearly with
the folder, never with its square. A pair must share ``MIN_SHARED_KEYS`` keys (near-copies
share most of theirs; two memories that merely mention one rare word share one).
Candidates are scored with rapidfuzz's ``fuzz.ratio`` (0-100) and kept at ``THRESHOLD``.

Identical fingerprints are grouped first, whatever their words: a group of n copies
gives n - 1 results, each naming the group's first file, and only that first file
takes part in the blocking — 2,000 copies of one memory are 1,999 results, not
the 1,999,000 pairs comparing all of them would give.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from ..files.memory import Memory

THRESHOLD = 90.0
BODY_CHARS = 300
BLOCK_TOKENS = 4
MAX_BLOCK = 20
MIN_SHARED_KEYS = 2
BANDS = 6
BAND_WIDTH = 3
KEY_CHARS = 200  # blocking keys come from the fingerprint's start: near-copies share it
MAX_KEYS = 64
# Blocking keys only need to be shared by near-copies: ASCII words and CJK runs (cut into
# two-character units below), without the search tokeniser's folding, which costs 5x more.
_KEYS = re.compile(r"[a-z0-9]+(?:[._\-/:@#+][a-z0-9]+)*"
                   r"|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")


@dataclass(frozen=True)
class NearDuplicate:
    """Two memories that read almost the same; ``file`` sorts before ``other`` — except
    for an exact copy: ``file`` is the copy, ``other`` the first (in file order) of the
    ``copies`` identical memories (0 for a pair that is not an exact copy)."""

    file: str
    other: str
    score: float
    copies: int = 0


def fingerprint(memory: Memory) -> str:
    """What is compared: name, description and the start of the body, case-folded."""
    return f"{memory.title}\n{memory.description}\n{memory.body.strip()[:BODY_CHARS]}".casefold()


def near_duplicates(memories: Sequence[Memory], threshold: float = THRESHOLD
                    ) -> list[NearDuplicate]:
    """Every exact copy once, then every other pair scoring at least ``threshold``, each
    once, sorted by file."""
    from rapidfuzz.fuzz import ratio

    every = [fingerprint(m) for m in memories]
    groups = _identical(every, [m.file for m in memories])
    found = [NearDuplicate(memories[i].file, memories[group[0]].file, 100.0, len(group))
             for group in groups for i in group[1:]]
    firsts = [group[0] for group in groups]
    texts = [every[i] for i in firsts]
    for i, j in sorted(candidate_pairs(texts)):
        score = ratio(texts[i], texts[j], score_cutoff=threshold)
        if score:
            a, b = sorted((memories[firsts[i]].file, memories[firsts[j]].file))
            found.append(NearDuplicate(a, b, score))
    return sorted(found, key=lambda d: (d.file, d.other))


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories linked by near-duplicate pairs (a connected component), in file order;
    ``score`` is the lowest score of the pairs that link them."""

    files: tuple[str, ...]
    score: float


def duplicate_groups(pairs: Sequence[NearDuplicate]) -> list[DuplicateGroup]:
    """The pairs joined into groups: 20 near-identical notes are one group, not 190 pairs."""
    parent: dict[str, str] = {}

    def root(file: str) -> str:
        while parent.setdefault(file, file) != file:
            parent[file] = parent[parent[file]]
            file = parent[file]
        return file

    for pair in pairs:
        a, b = root(pair.file), root(pair.other)
        parent[max(a, b)] = min(a, b)
    members: defaultdict[str, list[str]] = defaultdict(list)
    scores: defaultdict[str, list[float]] = defaultdict(list)
    for file in sorted(parent):
        members[root(file)].append(file)
    for pair in pairs:
        scores[root(pair.file)].append(pair.score)
    return [DuplicateGroup(tuple(files), min(scores[top])) for top, files in members.items()]


def _identical(texts: Sequence[str], files: Sequence[str]) -> list[list[int]]:
    """Indexes grouped by identical text, each group in file order (most hold one)."""
    same: defaultdict[str, list[int]] = defaultdict(list)
    for i in sorted(range(len(texts)), key=files.__getitem__):
        same[texts[i]].append(i)
    return list(same.values())


def candidate_pairs(texts: Sequence[str]) -> set[tuple[int, int]]:
    """Index pairs sharing ``MIN_SHARED_KEYS`` blocking keys (see the module docstring);
    the texts are expected to be distinct (``near_duplicates`` groups copies first)."""
    token_sets = [block_keys(text[:KEY_CHARS]) for text in texts]
    frequency = Counter(token for found in token_sets for token in found)
    orders = [{t: n for n, t in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}]
    orders += [_shuffled(frequency, band) for band in range(BANDS)]
    blocks: defaultdict[tuple[int, ...], list[int]] = defaultdict(list)
    for i, found in enumerate(token_sets):
        rarest = sorted(map(orders[0].__getitem__, found))[:BLOCK_TOKENS]
        keys: list[tuple[int, ...]] = [(-1, token) for token in rarest]
        keys += [(band, *sorted(map(order.__getitem__, found))[:BAND_WIDTH])
                 for band, order in enumerate(orders[1:])]
        for key in keys:
            blocks[key].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for members in blocks.values():
        if 1 < len(members) <= MAX_BLOCK:
            shared.update(combinations(members, 2))
    return {pair for pair, count in shared.items() if count >= MIN_SHARED_KEYS}


def _shuffled(vocabulary: Iterable[str], band: int) -> dict[str, int]:
    """A fixed pseudo-random order of the words (crc32: the same in every process, unlike
    ``hash``): the first few words of a text in that order are a MinHash-style band key."""
    return {t: zlib.crc32(f"{band}\x00{t}".encode()) for t in vocabulary}


def block_keys(text: str) -> list[str]:
    """The first ``MAX_KEYS`` distinct words of a fingerprint, in text order; a CJK run
    gives its two-character units (near-copies share their start, so their first words)."""
    keys: dict[str, None] = {}
    for run in _KEYS.findall(text):
        if run[0] < "\u3040" or len(run) < 3:
            keys[run] = None
        else:
            keys.update(dict.fromkeys(run[i:i + 2] for i in range(len(run) - 1)))
        if len(keys) >= MAX_KEYS:
            break
    return list(keys)[:MAX_KEYS]
