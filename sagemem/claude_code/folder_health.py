"""Doctor's look at the memory folder the hooks use: it exists, its search index is up to
date, and search can rank by meaning (the embedder is set up and the memories embedded).

Everything here reads a copy of the state directory (``sandbox.py``), made before the hook
probe runs: the probe builds the index as any prompt does, and an index doctor's own run
just built said "up to date" of a folder that was never indexed. Without the embedder,
search and the prompt hook rank by words alone — a paraphrase, or the same question in
another language, finds nothing — so that is a problem, not a footnote.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

from ..config import load_settings
from ..errors import SagememError
from ..files.folder import MemoryFolder
from ..files.plural import counted
from .findings import Finding

INDEX_FIX = "sagemem index"


def memory_findings(memory_dir: Path, real_state: Path, copy: Path,
                    env: Mapping[str, str]) -> list[Finding]:
    """The folder, its index and its embeddings; ``copy`` is the state directory's copy,
    ``env`` the hooks' environment (``SAGE_MEM_SEMANTIC``, ``SAGE_MEM_EMBEDDER``)."""
    if not memory_dir.is_dir():
        return [Finding("problem", "memory", f"memory directory {memory_dir} does not exist",
                        f"sagemem init {memory_dir}")]
    folder = MemoryFolder(memory_dir, copy)
    found = [Finding("ok", "memory", f"memory directory {memory_dir} (state {real_state})")]
    return [*found, _index(folder), *_embeddings(folder, env)]


def _index(folder: MemoryFolder) -> Finding:
    stale = _unindexed(folder)
    if stale is None:
        return Finding("problem", "index", "the search index was never built", INDEX_FIX)
    if stale:
        unindexed = counted(stale, "memory file")
        return Finding("note", "index", f"{unindexed} not indexed yet (the hook indexes "
                       "within its budget)", INDEX_FIX)
    return Finding("ok", "index", "the search index is up to date")


def _unindexed(folder: MemoryFolder) -> int | None:
    """How many memory files differ from the index; None: no index yet."""
    from ..search.index import index_path
    from ..search.sync import stat_pass

    path = index_path(folder)
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            rows = conn.execute("SELECT name, mtime_ns, size, inode FROM files").fetchall()
    except sqlite3.Error:
        return None
    indexed = {name: (mtime, size, inode) for name, mtime, size, inode in rows}
    listing = stat_pass(folder, archived=False)
    return sum(1 for name, stats in listing.items() if indexed.get(name) != stats)


def _embeddings(folder: MemoryFolder, env: Mapping[str, str]) -> list[Finding]:
    """Whether search can rank by meaning: the setting, the embedder, its vectors."""
    from ..embed.embedder import get_embedder
    from ..search.index import index_path
    from ..search.sync import stat_pass
    from ..search.vectors import vectors_path

    try:
        settings = load_settings(env, folder.directory, folder.state_dir)
    except SagememError as exc:
        return [Finding("problem", "embeddings", str(exc))]
    if not settings.semantic:
        return [Finding("note", "embeddings", "semantic search is off (semantic = off): "
                        "search and the prompt hook rank by words alone")]
    try:
        embedder = get_embedder(settings.embedder, folder.state_dir / "embedder")
    except SagememError as exc:
        return [Finding("problem", "embeddings", f"{exc}; until then search ranks by "
                        "words alone")]
    ready = getattr(embedder, "ready", None)
    if ready is not None and not ready():
        return [Finding("problem", "embeddings", f"the embedder {embedder.name} is not set "
                        "up: search and the prompt hook rank by words alone (a paraphrase, "
                        "or a question in another language, finds nothing)", INDEX_FIX)]
    wanted = len(stat_pass(folder, archived=False))
    embedded = _embedded(vectors_path(index_path(folder)), embedder.name)
    if wanted and not embedded:
        return [Finding("problem", "embeddings", f"no memory of {_memories(wanted)} is "
                        f"embedded ({embedder.name}): search ranks by words alone", INDEX_FIX)]
    if embedded < wanted:
        return [Finding("note", "embeddings", f"{wanted - embedded} of {_memories(wanted)} not "
                        "embedded yet: they are ranked by words until they are", INDEX_FIX)]
    return [Finding("ok", "embeddings", f"{embedder.name}: {_memories(embedded)} embedded")]


def _memories(count: int) -> str:
    return counted(count, "memory", "memories")


def _embedded(path: Path, name: str) -> int:
    """How many memories have vectors of embedder ``name`` (0: none, or another's)."""
    if not path.is_file():
        return 0
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("embedder") != name:
                return 0
            return int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
    except (sqlite3.Error, ValueError):
        return 0
