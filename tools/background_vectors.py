"""Embed sagemem's background questions with the default embedder and write the vectors
the package ships (``sagemem/search/background-<digest>.f16``), removing older ones, and
the questions' term counts the vocabulary evidence reads (``background-terms.json``).

Run after editing ``sagemem/search/background.txt`` or updating the embedder:

    python tools/background_vectors.py

``tests/test_gate.py`` fails while the shipped vectors or terms do not match the text.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from sagemem.embed.embedder import DEFAULT_EMBEDDER, get_embedder
from sagemem.search.background import BACKGROUND_FILE, questions, shipped_path
from sagemem.search.vector_sync import clip
from sagemem.search.vocabulary import TERMS_FILE, count_terms, terms_table, text_digest


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
    counts = count_terms(questions())
    TERMS_FILE.write_text(terms_table(counts, text_digest(questions())), encoding="utf-8")
    print(f"{TERMS_FILE.name}: {len(counts.df)} terms, {counts.length:.2f} tokens a question")
    return 0


if __name__ == "__main__":
    sys.exit(main())
