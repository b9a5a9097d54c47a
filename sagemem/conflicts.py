"""The conflict queue, as far as injection needs it: open contradictions.

Records live in ``<state>/conflicts/<id>.json`` (version 1; readers ignore unknown keys).
A record of kind ``contradiction`` with status ``open`` names two memories that say
opposite things; until the user resolves it, neither is injected as body text. Write
conflicts (``stale_version`` and the like) suppress nothing. The writing side, and
resolution, belong to the guarded-writes work.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import SagememError
from .paths import read_regular

CONFLICTS_DIR = "conflicts"
MAX_RECORDS = 10_000


def open_contradictions(state_dir: Path) -> list[tuple[str, str]]:
    """Pairs of memory files in open contradiction records; unreadable records are skipped."""
    folder = state_dir / CONFLICTS_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    pairs = []
    for path in sorted(folder.glob("*.json"))[:MAX_RECORDS]:
        pair = _contradiction(path)
        if pair is not None:
            pairs.append(pair)
    return pairs


def _contradiction(path: Path) -> tuple[str, str] | None:
    try:
        record = json.loads(read_regular(path).data.decode("utf-8"))
    except (SagememError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != "contradiction":
        return None
    if record.get("status", "open") != "open":
        return None
    names = record.get("memories") or record.get("files")
    if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names):
        return names[0], names[1]
    return None
