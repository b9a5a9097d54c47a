"""The search engine's own commands: ``index`` (bring the index and the vectors up to
date) and ``eval`` (measure retrieval on a set of questions).

They register on the one ``app`` of ``base.py``; ``main.py`` imports this module when one
of them is asked for. The retrieval stack is imported inside each command.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..config import JSON_VERSION
from ..errors import IndexUnavailable
from ..files.plural import counted
from ..store import MemoryStore
from .base import JsonOption, app, echo, echo_json, echo_lines
from .embedding import EvalModeOption, embed_all, mode_of
from .progress import progress_bar

if TYPE_CHECKING:
    from ..search.hybrid import Mode


@app.command("eval")
def eval_(
    ctx: typer.Context,
    target: Annotated[Path, typer.Argument(
        help="A set folder (memory/ and queries.jsonl), or a queries.jsonl file written "
             "for the memory folder (--dir).")],
    mode: EvalModeOption = None,
    curve: Annotated[bool, typer.Option(
        "--curve", help="Also print the relevance gate's trade-off: inject recall and "
                        "spurious injections at thresholds around the default.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Run a retrieval evaluation and print its metrics and worst misses: with semantic
    search on, hybrid, semantic and lexical side by side (--mode: one of them).

    The index is built in a temporary state directory unless --state-dir is given.
    """
    from ..search.evaluate import evaluate
    from .output_agent import eval_text

    settings = ctx.obj.settings()
    memory_dir = None if target.is_dir() else settings.memory_dir
    chosen = mode_of(mode)
    modes: tuple[Mode, ...] = (chosen,) if chosen else \
        ("hybrid", "semantic", "lexical") if settings.semantic else ("lexical",)
    embedder = None if modes == ("lexical",) else \
        MemoryStore.from_settings(settings).embedder()
    report = evaluate(target, ctx.obj.state_dir, memory_dir=memory_dir, modes=modes,
                      embedder=embedder, with_curve=curve)
    if as_json:
        echo_json({"version": JSON_VERSION, **report})
    else:
        echo_lines(eval_text(report))


@app.command()
def index(
    ctx: typer.Context,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Throw it away and rebuild.")] = False,
) -> None:
    """Bring the search index up to date (it is a cache under the state directory)."""
    with ctx.obj.store() as store, progress_bar() as progress:
        search_index = store.search_index()
        report = search_index.rebuild(progress) if rebuild else search_index.refresh(progress)
        notices = list(search_index.notices)
        if search_index.unsaved is not None:  # indexing is a write: it refuses, never degrades
            raise IndexUnavailable(search_index.path, search_index.unsaved)
        embedded = embed_all(store, rebuild, progress) if store.semantic else None
    _notices(notices)
    echo(f"{counted(report.scanned, 'file')} scanned, {len(report.updated)} indexed, "
               f"{len(report.removed)} removed ({search_index.path})")
    if embedded:
        echo(embedded)


def _notices(notices: Iterable[str]) -> None:
    for notice in notices:
        echo(f"notice: {notice}", err=True)
