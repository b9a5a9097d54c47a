"""The matrix file of the vector store: the embedded rows themselves.

``vectors-<…>.<generation>.i8`` beside the store's SQLite file holds rows of ``dim`` int8
components, each closed by the float32 scale that restores it (``x ≈ q * scale``). int8,
not float32: at 10,000 memories (~50,000 texts of 512 dimensions) float32 alone is
100 MB, int8 a quarter of it, and scoring converts it on the fly in chunks (18 ms for
50k × 512 on 2 cores, measured in the issue).

Which rows count, and which generation is current, is the store's to say (its ``meta``
table, committed in the same transaction as the text rows); this module only reads and
writes the files it is told to. It knows nothing of SQLite.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

SCALE_BYTES = 4  # the float32 scale closing each row
SCORE_CHUNK_ROWS = 8192  # 8192 × 512 float32 is 16 MB of scratch per chunk, not 100 MB


class Matrix:
    """The matrix files of one store (``<store stem>.<generation>.i8``), and the float32
    copy of the rows a long-lived process keeps scoring."""

    def __init__(self, store_path: Path, dim: int) -> None:
        self.store_path = store_path
        self.dim = dim
        self.width = dim + SCALE_BYTES
        self._scored_shape: tuple[int, int] | None = None
        self._dense: tuple[tuple[int, int], np.ndarray] | None = None

    @property
    def scored_generation(self) -> int | None:
        """The generation the last ``scores`` read (its row numbers), or None."""
        return None if self._scored_shape is None else self._scored_shape[0]

    def forget(self) -> None:
        """Drop what the last ``scores`` kept: the files are checked again."""
        self._dense = self._scored_shape = None

    def path(self, generation: int) -> Path:
        return self.store_path.with_name(f"{self.store_path.stem}.{generation}.i8")

    def holds(self, generation: int, rows: int) -> bool:
        """Whether that generation's file has all ``rows`` committed rows."""
        return _size(self.path(generation)) >= rows * self.width

    def remove(self, generation: int) -> None:
        _unlink(self.path(generation))

    def remove_all(self) -> None:
        """Every generation's file, strays of a crash included."""
        for stray in self.store_path.parent.glob(f"{self.store_path.stem}.*.i8"):
            _unlink(stray)

    def append(self, generation: int, rows: int, vectors: list[np.ndarray]) -> None:
        """Write rows past the committed ones (overwriting a torn tail), durably."""
        fd = os.open(self.path(generation), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.ftruncate(fd, rows * self.width)
            os.lseek(fd, rows * self.width, os.SEEK_SET)
            data = quantise(vectors, self.dim)
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def keep(self, generation: int, rows: int, live: list[int]) -> None:
        """Write the ``live`` rows of a generation, in that order, durably as the next
        generation's file (``compact``); the old file stays until the store drops it."""
        import numpy as np

        old = self.read(generation, rows)
        kept = np.asarray(old[live] if live else old[:0])
        with open(self.path(generation + 1), "wb") as out:
            out.write(kept.tobytes())
            out.flush()
            os.fsync(out.fileno())

    def read(self, generation: int, rows: int) -> np.ndarray:
        """The committed rows, memory-mapped (int8, scale bytes included)."""
        import numpy as np

        if rows == 0:
            return np.zeros((0, self.width), dtype=np.int8)
        return np.memmap(self.path(generation), dtype=np.int8, mode="r",
                         shape=(rows, self.width))

    def scores(self, shape: tuple[int, int], query: np.ndarray) -> np.ndarray:
        """The cosine of ``query`` (a normalised float32 row) with every row of ``shape``
        (generation, rows). The first query of a process reads the int8 rows chunk by
        chunk; from the second on (a long-lived process) a float32 copy is kept — 2 KiB a
        row, ~100 MB at 10,000 memories — since converting int8 to float32 was two thirds
        of a 22 ms hybrid query there (one product over the copy: ~4 ms)."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if self._dense is not None and self._dense[0] == shape:
            return np.asarray(self._dense[1] @ q)
        matrix = self.read(*shape)
        keep = self._scored_shape == shape
        dense = np.empty((len(matrix), self.dim), dtype=np.float32) if keep else None
        out = np.empty(len(matrix), dtype=np.float32)
        for start in range(0, len(matrix), SCORE_CHUNK_ROWS):
            block = matrix[start:start + SCORE_CHUNK_ROWS]
            scale = np.ascontiguousarray(block[:, self.dim:]).view(np.float32).reshape(-1)
            rows = block[:, :self.dim].astype(np.float32) * scale[:, None]
            out[start:start + len(block)] = rows @ q
            if dense is not None:
                dense[start:start + len(block)] = rows
        self._scored_shape = shape
        self._dense = (shape, dense) if dense is not None else None
        return out


def quantise(vectors: list[Any], dim: int) -> bytes:
    """Rows of int8 components, each followed by the float32 scale that restores it."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), dim)
    peak = np.abs(matrix).max(axis=1, keepdims=True)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
    return np.hstack([q, scale.view(np.int8)]).tobytes()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _unlink(path: Path) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)
