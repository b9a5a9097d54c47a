"""The vector side of the agent commands: the ``--mode`` option and ``sagemem index``'s
embedding pass, reporting to the command's progress bar."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal, cast

import click
import typer

from ..errors import VectorsUnavailable
from ..files.plural import counted
from .base import echo

if TYPE_CHECKING:
    from ..search.hybrid import Mode
    from ..search.progress import Progress
    from ..search.vector_sync import VectorReport
    from ..search.vectors import VectorStore
    from ..store import MemoryStore

MODE_NAMES = ("lexical", "semantic", "hybrid")  # search/hybrid.py's MODES (numpy-free here)
ModeOption = Annotated[str | None, typer.Option(
    "--mode", click_type=click.Choice(MODE_NAMES),
    help="lexical, semantic or hybrid (default: hybrid, lexical with SAGE_MEM_SEMANTIC=off).")]
EvalModeOption = Annotated[str | None, typer.Option(
    "--mode", click_type=click.Choice(MODE_NAMES),
    help="One mode alone (default: hybrid, semantic and lexical side by side; lexical "
         "alone with SAGE_MEM_SEMANTIC=off).")]


def mode_of(option: str | None) -> Mode | None:
    return cast("Literal['lexical', 'semantic', 'hybrid'] | None", option)


def semantic_off(store: MemoryStore, option: str | None) -> None:
    """``--mode semantic|hybrid`` with ``SAGE_MEM_SEMANTIC=off`` is a usage error: the
    setting promises no embedder runs (no 80 MB cache, no model), and ``sagemem index``
    embeds nothing then, so a semantic answer could never be brought in step."""
    if option in ("semantic", "hybrid") and not store.semantic:
        raise typer.BadParameter(
            f"--mode {option} needs the embedder, which the semantic setting "
            "(SAGE_MEM_SEMANTIC, settings.json) turns off; "
            "use --mode lexical, or set SAGE_MEM_SEMANTIC=on", param_hint="--mode")


def _embed(vectors: VectorStore, store: MemoryStore, progress: Progress | None
           ) -> VectorReport:
    """Sync every vector, rebuilding once a store found damaged; refused (an error, as
    for the lexical index) where the store cannot be written."""
    import sqlite3

    from ..search.background import background_for
    from ..search.vector_sync import sync_vectors

    index, embedder = store.search_index(), store.embedder()
    background_for(embedder, index.path.parent, vectors.notices, embed=True)  # the gate's
    try:
        vectors.rows()  # opens it: read-only where it cannot be written
        if vectors.unsaved is not None:
            raise VectorsUnavailable(vectors.path, vectors.unsaved)
        return sync_vectors(vectors, index, embedder, progress=progress)
    except sqlite3.DatabaseError as exc:
        if not vectors.recover(exc):
            raise
        return sync_vectors(vectors, index, embedder, progress=progress)


def embed_all(store: MemoryStore, rebuild: bool, progress: Progress | None = None) -> str:
    """Embed every memory whose vectors are not in step, reporting to ``progress``; the
    one-line summary."""
    vectors = store.vector_store()
    if rebuild:
        vectors.drop()
    started = time.monotonic()
    embedder = store.embedder()
    verify = getattr(embedder, "verify", None)
    if verify is not None:
        verify()  # a full pass: hash the embedder's cache first, whatever the size
    report = _embed(vectors, store, progress)
    told = getattr(embedder, "notices", None)  # use-m3's: its cache rebuilt, or in memory
    notices = [f"notice: {n}" for n in (*(told or ()), *vectors.notices)]
    vectors.notices.clear()
    if told:
        told.clear()
    for notice in notices:
        echo(notice, err=True)
    seconds = time.monotonic() - started
    return (f"{counted(report.files_done, 'file')} embedded ({report.embedded} new texts, "
            f"{seconds:.1f} s) into {vectors.path}")
