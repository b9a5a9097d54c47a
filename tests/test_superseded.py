"""A memory that names its replacement (``superseded_by``) ranks directly after it, in
every search mode, scored no higher; the order of everything else is left alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_embedder import FakeEmbedder

from sagemem.search.superseded import after_replacements
from sagemem.search.vector_sync import sync_vectors
from sagemem.store import MemoryStore

OLD = """---
name: Deploy process (old)
description: how we deploy the web app with the deploy script, deploy by deploy
invalid_at: 2026-03-01
superseded_by: project_deploy.md
---
To deploy: run the deploy script, deploy to staging, then deploy to production.
"""
NEW = """---
name: Deploy process
description: how we deploy the web app now
---
We deploy through CI: merge to main and the pipeline ships it.
"""
OTHER = """---
name: Tea
description: the user's tea
---
Green tea, no sugar.
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    for file, text in (("project_deploy_v1.md", OLD), ("project_deploy.md", NEW),
                       ("user_tea.md", OTHER)):
        (directory / file).write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def semantic_store(folder: Path, tmp_path: Path, fake: FakeEmbedder) -> Iterator[MemoryStore]:
    with MemoryStore(folder, tmp_path / "state", semantic=True, embedder="fake") as opened:
        sync_vectors(opened.vector_store(), opened.search_index(), opened.embedder())
        yield opened


def names(items: list[tuple[str, str | None]]) -> list[str]:
    return [n for n, _ in after_replacements(items, lambda i: i[0], lambda i: i[1])]


def test_a_replaced_item_moves_directly_after_its_replacement() -> None:
    assert names([("v1", "v2"), ("x", None), ("v2", None), ("y", None)]) == ["x", "v2", "v1", "y"]


def test_a_chain_ends_in_replacement_order() -> None:
    assert names([("v1", "v2"), ("v2", "v3"), ("v3", None)]) == ["v3", "v2", "v1"]


def test_an_item_already_below_its_replacement_or_with_none_found_stays() -> None:
    assert names([("v2", None), ("x", None), ("v1", "v2")]) == ["v2", "x", "v1"]
    assert names([("v1", "gone"), ("x", None)]) == ["v1", "x"]
    assert names([("a", "b"), ("b", "a")]) in (["b", "a"], ["a", "b"])  # a cycle ends


def test_lexical_search_ranks_the_replacement_first(folder: Path, tmp_path: Path) -> None:
    with MemoryStore(folder, tmp_path / "state") as store:
        results = store.search("how we deploy the web app").results
    files = [r.file for r in results]
    assert files.index("project_deploy.md") < files.index("project_deploy_v1.md")
    by_file = {r.file: r for r in results}
    assert by_file["project_deploy_v1.md"].score <= by_file["project_deploy.md"].score


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_meaning_search_ranks_the_replacement_first(semantic_store: MemoryStore,
                                                    mode: str) -> None:
    results = semantic_store.search("how we deploy the web app", mode=mode).results
    files = [r.file for r in results]
    assert files.index("project_deploy.md") < files.index("project_deploy_v1.md")
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)


def test_a_chain_is_capped_all_the_way_down() -> None:
    from sagemem.search.superseded import capped_scores

    scores = {"v1": 0.9, "v2": 0.8, "v3": 0.5}
    items = [("v1", "v2"), ("v2", "v3"), ("v3", None)]
    order = after_replacements(items, lambda i: i[0], lambda i: i[1])
    capped = capped_scores(order, lambda i: i[0], lambda i: i[1], lambda i: scores[i[0]])
    assert [n for n, _ in order] == ["v3", "v2", "v1"]
    assert capped == {"v3": 0.5, "v2": 0.5, "v1": 0.5}
