"""The background: generic questions that concern nobody's memories, the yardstick of
the relevance gate (``gate.py``).

A question is always somewhat similar to some memory: cosines between unrelated texts
are not zero, and questions resemble questions more than they resemble notes. So the
gate does not ask "is the best memory similar enough?" but "is the best memory more
similar than generic questions are?" — world knowledge, coding how-tos, chit-chat,
everyday advice, in Chinese and English, shipped as ``background.txt`` (original text,
written for sagemem; a second round added general advice on personal topics, places,
devices, shopping, hobbies, coding in many languages and "A or B" comparisons). The
question's *background level* is its mean cosine to the ``NEAREST`` closest background
questions. ``vocabulary.py`` reads the same questions for the words generic questions
use.

The default embedder's vectors ship beside the text (``background-<digest>.f16``, made
by ``tools/background_vectors.py``; the digest names the embedder and the text, so a new
model or a new list is never matched with old vectors): the first question pays nothing.
Another embedder embeds the background once (about 3 s for use-m3's speed) and keeps it
beside the index as raw float32 rows (``background-<digest>.f32``); ``sagemem index``
does it ahead. Files are read as bytes of exactly the expected size, never unpickled; a
damaged, foreign or unwritable cache costs one re-embedding, never an error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SagememError
from ..files.atomic import atomic_write, make_folder
from ..files.paths import read_regular

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ..embed.embedder import Embedder

BACKGROUND_FILE = Path(__file__).with_name("background.txt")
NEAREST = 3
"""Background questions averaged into the level: one alone is noisy (a single close
paraphrase decides), many blur it (starter and workbench agree on 1–3; 10 lost AUC).
Again with 4,048 questions and the vocabulary, at starter's inject recall 0.86: 1–3
within a point of each other on generic questions asked of starter's and LoCoMo's
folders, 5 and 8 let 1–5 points more of them pass."""
_MEMO: dict[tuple[str, str], Background] = {}


@lru_cache(maxsize=1)
def questions() -> tuple[str, ...]:
    """The shipped background questions, comments and blank lines left out."""
    text = BACKGROUND_FILE.read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


@dataclass(frozen=True)
class Background:
    """The background questions' unit vectors, (n, dim) float32."""

    vectors: NDArray[np.float32]

    def level(self, query_vector: NDArray[np.float32]) -> float:
        """The query's mean cosine to its NEAREST closest background questions."""
        import numpy as np

        sims = self.vectors @ query_vector
        nearest = min(NEAREST, len(sims))
        if nearest == 0:
            return 0.0
        return float(np.partition(sims, len(sims) - nearest)[-nearest:].mean())


def background_for(embedder: Embedder, cache_dir: Path, notices: list[str], *,
                   embed: bool = False) -> Background | None:
    """The background in ``embedder``'s space: from this process's memo, the package,
    or the cache file in ``cache_dir`` — embedded now only with ``embed`` (``sagemem
    index``, an evaluation): a question under its time budget cannot wait seconds for
    it, and goes ungated (None) with a notice until then."""
    digest = _digest(embedder)
    key = (digest, str(cache_dir))
    if key not in _MEMO:
        found = _stored(embedder, cache_dir / f"background-{digest}.f32")
        if found is None and not embed:
            notices.append(f"the relevance gate waits for its background to be embedded "
                           f"with {embedder.name}; run sagemem index")
            return None
        _MEMO[key] = found or _embedded(embedder, cache_dir / f"background-{digest}.f32",
                                        notices)
    return _MEMO[key]


def _digest(embedder: Embedder) -> str:
    return _digest_of(embedder.name, embedder.dim)


@lru_cache(maxsize=8)
def _digest_of(name: str, dim: int) -> str:
    """Names the embedder and the text: hashed once a process, not once a question."""
    text = "\n".join(questions())
    return hashlib.sha256(f"{name}\0{dim}\0{text}".encode()).hexdigest()[:16]


def shipped_path(embedder: Embedder) -> Path:
    """Where the package keeps ``embedder``'s background vectors, if it ships them."""
    return BACKGROUND_FILE.with_name(f"background-{_digest(embedder)}.f16")


def _stored(embedder: Embedder, cache: Path) -> Background | None:
    """The shipped vectors, else the cached ones, else None."""
    import numpy as np

    shipped = _read(shipped_path(embedder), len(questions()) * embedder.dim * 2)
    if shipped is not None:
        return Background(np.frombuffer(shipped, dtype=np.float16).astype(np.float32)
                          .reshape(-1, embedder.dim))
    cached = _read(cache, len(questions()) * embedder.dim * 4)
    if cached is not None:
        vectors = np.frombuffer(cached, dtype=np.float32).reshape(-1, embedder.dim)
        if np.isfinite(vectors).all():
            return Background(vectors)
    return None


def _embedded(embedder: Embedder, cache: Path, notices: list[str]) -> Background:
    """Embed the background now and keep it in ``cache`` if the directory allows."""
    import numpy as np

    from .vector_sync import clip

    vectors = np.ascontiguousarray(embedder.encode([clip(q) for q in questions()]),
                                   dtype=np.float32)
    try:
        make_folder(cache.parent)
        atomic_write(cache, vectors.tobytes(), create=False)
    except SagememError as exc:
        notices.append(f"the relevance gate's background could not be cached ({exc}); "
                       "it is embedded again by each process")
    return Background(vectors)


def _read(path: Path, expected: int) -> bytes | None:
    """The cache's bytes if the file is exactly the size it must be, else None."""
    try:
        data = read_regular(path, max_bytes=expected).data
    except SagememError:  # missing, too big, a link, unreadable: embed again
        return None
    return data if len(data) == expected else None
