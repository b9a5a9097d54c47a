"""The embedder contract: what turns texts into vectors, and the registry that the
``embedder`` setting picks from.

Minimal version (the Protocol and the registry): the default Universal Sentence Encoder
comes with its own module. Importing this module never imports numpy: the lexical path
must not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..errors import UnknownEmbedder

DEFAULT_EMBEDDER = "use-m3"


class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row of ``dim`` numbers per text out."""

    name: str  # identifies model AND version: vectors of two names are never mixed
    dim: int

    def encode(self, texts: Sequence[str]) -> Any: ...  # numpy (len(texts), dim) float32


_REGISTRY: dict[str, Callable[[Path], Embedder]] = {}


def register_embedder(key: str, factory: Callable[[Path], Embedder]) -> None:
    """Make ``key`` a legal value of the ``embedder`` setting; ``factory(cache_dir)``."""
    _REGISTRY[key] = factory


def get_embedder(key: str, cache_dir: Path) -> Embedder:
    """The embedder registered under ``key``, keeping its caches in ``cache_dir``."""
    factory = _REGISTRY.get(key)
    if factory is None:
        raise UnknownEmbedder(key, sorted(_REGISTRY))
    return factory(cache_dir)
