"""Embed sagemem's background questions with the default embedder and write the vectors
the package ships (``sagemem/search/background-<digest>.f16``), removing older ones.

Run after editing ``sagemem/search/background.txt`` or updating the embedder:

    python tools/background_vectors.py

``tests/test_gate.py`` fails while the shipped vectors do not match the text.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from sagemem.embed.embedder import DEFAULT_EMBEDDER, get_embedder
from sagemem.search.background import BACKGROUND_FILE, questions, shipped_path
from sagemem.search.vector_sync import clip


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        embedder = get_embedder(DEFAULT_EMBEDDER, Path(cache))
        vectors = embedder.encode([clip(q) for q in questions()]).astype(np.float16)
        target = shipped_path(embedder)
    for old in BACKGROUND_FILE.parent.glob("background-*.f16"):
        if old != target:
            old.unlink()
    target.write_bytes(vectors.tobytes())
    print(f"{target.name}: {len(vectors)} questions × {vectors.shape[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
