"""The relevance gate and hybrid ranking with the real embedder: silent on questions that
concern no memory (in English and Chinese) — even a generic question on a folder's own
topic — a question in one language finding a memory in the other, lexical evidence
winning a name-and-date question, folder vocabulary lifting a question in the folder's
words, and the background (shipped, cached, or embedded once) it is judged against."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fake_embedder import FakeEmbedder

from sagemem.config import load_settings
from sagemem.embed.embedder import DEFAULT_EMBEDDER, get_embedder
from sagemem.inject.block import inject
from sagemem.search import background
from sagemem.search.gate import THRESHOLD, VOCABULARY_WEIGHT, at_threshold, injectable, judge
from sagemem.search.results import Coverage, Relevance, SearchResponse, SearchResult
from sagemem.store import MemoryStore

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def result(file: str, score: float) -> SearchResult:
    return SearchResult(file, None, "", "reference", score, 1, 1, "", False, None, None)


# -- the verdict, from its numbers ---------------------------------------------------

def test_a_question_passes_when_its_best_memory_beats_the_background() -> None:
    results = [result("a.md", 1.0)]
    assert judge(results, {"a.md": 0.45}, {}, background_level=0.40).passes
    assert not judge(results, {"a.md": 0.20}, {}, background_level=0.40).passes


def test_strong_lexical_evidence_lifts_a_question_the_encoder_doubts() -> None:
    results = [result("a.md", 1.0)]
    doubted = judge(results, {"a.md": 0.24}, {}, background_level=0.40)
    assert not doubted.passes and doubted.score == pytest.approx(-0.16)
    assert judge(results, {"a.md": 0.24}, {"a.md": 2.0}, background_level=0.40).passes
    capped = judge(results, {"a.md": 0.24}, {"a.md": 50.0}, background_level=0.40)
    assert capped.score == pytest.approx(-0.16 + 0.2)  # more overlap says nothing new


def test_folder_vocabulary_lifts_a_question_in_the_folders_own_words() -> None:
    results = [result("a.md", 1.0)]
    doubted = judge(results, {"a.md": 0.24}, {}, background_level=0.40)
    lifted = judge(results, {"a.md": 0.24}, {}, background_level=0.40,
                   vocabulary={"a.md": 2.0})
    assert lifted.score == pytest.approx(doubted.score + 2.0 * VOCABULARY_WEIGHT)
    assert lifted.passes and not doubted.passes
    negative = judge(results, {"a.md": 0.24}, {}, background_level=0.40,
                     vocabulary={"a.md": -3.0})
    assert negative.score == doubted.score  # a word generic questions use takes nothing away


def test_the_verdict_can_be_moved_to_another_threshold_for_the_curve() -> None:
    results = [result("a.md", 1.0), result("b.md", 0.9)]
    verdict = judge(results, {"a.md": 0.40, "b.md": 0.20}, {}, background_level=0.40)
    assert verdict.passes and verdict.files == ("a.md",)
    assert dict(verdict.evidence) == {"a.md": 0.0, "b.md": -0.2}
    assert at_threshold(verdict, THRESHOLD) == verdict
    assert at_threshold(verdict, -0.25).files == ("a.md", "b.md")
    assert not at_threshold(verdict, 0.05).passes


def test_only_results_near_the_best_that_pass_themselves_are_injected() -> None:
    results = (result("a.md", 1.0), result("b.md", 0.9), result("c.md", 0.5),
               result("d.md", 0.95))
    relevance = judge(results, {"a.md": 0.5, "b.md": 0.45, "c.md": 0.5, "d.md": 0.1}, {},
                      background_level=0.40)
    response = SearchResponse("q", results, Coverage(4, 4, 0, None), (), relevance)
    assert [r.file for r in injectable(response)] == ["a.md", "b.md"]  # c far, d weak


def test_a_closed_gate_injects_nothing_and_lexical_mode_injects_what_it_found() -> None:
    results = (result("a.md", 1.0),)
    closed = Relevance(passes=False, score=THRESHOLD - 1, margin=-1.0, lexical=0.0)
    assert injectable(SearchResponse("q", results, Coverage(1, 1, 0, None), (), closed)) == ()
    lexical = SearchResponse("q", results, Coverage(1, 1, 0, None))
    assert injectable(lexical) == results


# -- the background ------------------------------------------------------------------

def test_the_shipped_background_vectors_match_the_text_and_the_default_embedder(
        tmp_path: Path) -> None:
    import numpy as np

    from sagemem.search.vector_sync import clip

    embedder = get_embedder(DEFAULT_EMBEDDER, tmp_path / "embedder")
    shipped = background.shipped_path(embedder)
    questions = background.questions()
    assert shipped.is_file(), "run tools/background_vectors.py after editing background.txt"
    assert shipped.stat().st_size == len(questions) * embedder.dim * 2
    assert len(questions) >= 2000
    assert len(set(questions)) == len(questions)
    # The rows themselves: a spread of questions embedded now must meet their own shipped
    # row (float16 keeps a cosine of 0.99999; another question's row is far below 0.999).
    rows = np.frombuffer(shipped.read_bytes(), dtype=np.float16).astype(np.float32)
    rows = rows.reshape(len(questions), embedder.dim)
    picked = [*range(0, len(questions), 97), len(questions) - 1]
    now = np.asarray(embedder.encode([clip(questions[i]) for i in picked]), dtype=np.float32)
    now /= np.linalg.norm(now, axis=1, keepdims=True)
    cosines = now @ (rows / np.linalg.norm(rows, axis=1, keepdims=True)).T
    own = cosines[np.arange(len(picked)), picked]
    assert own.min() > 0.999, [questions[picked[i]] for i in np.flatnonzero(own <= 0.999)]
    cosines[np.arange(len(picked)), picked] = -1.0
    assert cosines.max(axis=1).max() < 0.999  # no other row would have passed for its own


def test_another_embedder_embeds_the_background_only_when_asked_and_caches_it(
        tmp_path: Path) -> None:
    fake, notices = FakeEmbedder("fake:gate"), []
    background._MEMO.clear()
    assert background.background_for(fake, tmp_path, notices) is None  # under a budget
    assert "run sagemem index" in notices[0] and fake.calls == 0
    built = background.background_for(fake, tmp_path, notices, embed=True)
    assert built is not None and built.vectors.shape == (len(background.questions()), 64)
    assert len(list(tmp_path.glob("background-*.f32"))) == 1
    background._MEMO.clear()
    again = FakeEmbedder("fake:gate")
    assert background.background_for(again, tmp_path, []) is not None and again.calls == 0


def test_a_damaged_background_cache_is_embedded_again_not_trusted(tmp_path: Path) -> None:
    fake = FakeEmbedder("fake:gate")
    background._MEMO.clear()
    background.background_for(fake, tmp_path, [], embed=True)
    (cache,) = tmp_path.glob("background-*.f32")
    cache.write_bytes(cache.read_bytes()[:-4])  # torn: one float short
    background._MEMO.clear()
    assert background.background_for(fake, tmp_path, []) is None
    cache.unlink()
    cache.symlink_to(tmp_path / "elsewhere")
    background._MEMO.clear()
    assert background.background_for(fake, tmp_path, []) is None  # a link is never followed


# -- with the real embedder ------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    """The shipped sample memories, indexed and embedded with the default embedder."""
    root = tmp_path_factory.mktemp("gate")
    shutil.copytree(SAMPLE, root / "memory", ignore=shutil.ignore_patterns("eval"))
    with MemoryStore(root / "memory", root / "state", semantic=True) as store:
        add_dialogue_notes(store.directory)
        store.search("warm up the index and the vectors", mode="hybrid", deadline=None)
        from sagemem.search.vector_sync import sync_vectors

        sync_vectors(store.vector_store(), store.search_index(), store.embedder())
        yield store


def add_dialogue_notes(directory: Path) -> None:
    """Two LoCoMo-like transcripts about the same kind of event, told apart by name/date."""
    for file, who, when, where in (
            ("project_chat_caroline.md", "Caroline", "7 May 2023", "the LGBTQ support group"),
            ("project_chat_melanie.md", "Melanie", "20 July 2023", "a pottery class")):
        (directory / file).write_text(
            f"---\ndescription: chat with {who}\nmetadata:\n  type: project\n---\n"
            f"**{who}** (D1:1): On {when} I went to {where} and it felt great.\n\n"
            f"**Friend** (D1:2): That sounds wonderful, tell me more!\n", encoding="utf-8")


@pytest.mark.parametrize("question", [
    "what's the time complexity of binary search?",
    "how do I make sourdough bread at home",
    "二分查找的时间复杂度是多少",
    "推荐几部好看的科幻电影",
])
def test_a_question_about_nothing_in_the_memories_injects_nothing(
        sample: MemoryStore, question: str) -> None:
    response = sample.search(question, mode="hybrid")
    assert response.relevance is not None and not response.relevance.passes, response.relevance
    settings = load_settings({}, sample.directory, sample.state_dir)
    given = inject(sample, question, "gate", settings, now=NOW, persist=False)
    assert not [item for item in given.items if item.reason == "match"]


def test_a_question_in_chinese_finds_and_injects_an_english_memory(sample: MemoryStore) -> None:
    response = sample.search("我家的猫叫什么名字？", mode="hybrid")
    assert response.relevance is not None and response.relevance.passes
    assert "user_pets.md" in [r.file for r in injectable(response)]


def test_what_is_my_cat_called_injects_the_note_about_the_cat_alone(
        sample: MemoryStore) -> None:
    settings = load_settings({}, sample.directory, sample.state_dir)
    given = inject(sample, "what is my cat called", "cat", settings, now=NOW, persist=False)
    assert [item.file for item in given.items if item.reason == "match"] == ["user_pets.md"]


def test_a_name_and_date_question_is_won_by_lexical_evidence(sample: MemoryStore) -> None:
    response = sample.search("When did Caroline go to the LGBTQ support group?", mode="hybrid")
    assert response.results[0].file == "project_chat_caroline.md"
    assert "7 May 2023" in response.results[0].paragraph


def test_a_background_that_cannot_be_cached_still_judges_and_says_why(
        tmp_path: Path) -> None:
    fake, notices = FakeEmbedder("fake:gate"), []
    background._MEMO.clear()
    (tmp_path / "index").write_text("a file where the cache's directory should be")
    found = background.background_for(fake, tmp_path / "index", notices, embed=True)
    assert found is not None and found.vectors.shape[1] == 64
    assert "could not be cached" in notices[0] and "embedded again" in notices[0]


def test_the_question_passes_only_when_one_memory_passes_on_its_own() -> None:
    """One memory's meaning and another's words do not add up to a relevant question."""
    results = [result("a.md", 1.0), result("b.md", 0.9)]
    verdict = judge(results, {"a.md": 0.5, "b.md": 0.3}, {"b.md": 2.0}, background_level=0.7)
    assert not verdict.passes and verdict.files == ()


def test_what_the_embedder_sees_has_no_terminal_codes_and_no_lone_surrogates() -> None:
    from sagemem.search.vector_sync import clip

    assert clip("what is my \x1b[31mcat\x1b[0m called\x07") == "what is my cat called"
    assert clip("a\ud800b 猫") == "a\ufffdb 猫"
    clip("x\udcffy").encode("utf-8")  # an undecodable argv byte: encodable now


def test_a_question_with_an_undecodable_byte_is_answered_not_a_crash(
        sample: MemoryStore) -> None:
    response = sample.search("what is my cat called \udcff", mode="hybrid")
    assert response.results and response.relevance is not None


def test_what_the_gate_keeps_out_is_listed_never_silently_dropped(sample: MemoryStore) -> None:
    settings = load_settings({}, sample.directory, sample.state_dir)
    given = inject(sample, "what is my cat called", "listed", settings, now=NOW, persist=False)
    kept_out = {s.file for s in given.suppressed if s.reason == "below_gate"}
    assert kept_out and "user_pets.md" not in kept_out
    (attempt,) = given.explain
    assert {c["file"] for c in attempt["candidates"] if c["outcome"] == "below_gate"} == kept_out


# -- a folder about one topic: its topic's how-tos are not its memories ----------------

RUST_NOTES = {
    "feedback_rust_errors.md": (
        "Rust error handling", "how we handle errors in our Rust services",
        "Library crates return `thiserror` enums; binaries wrap them with `anyhow` and add "
        "context at every `?`.\n\nNever call `unwrap()` outside tests; `expect(\"why this "
        "cannot fail\")` is allowed only for invariants checked just above."),
    "feedback_rust_clippy.md": (
        "Clippy settings", "the clippy lints our Rust workspace enforces in CI",
        "CI runs `cargo clippy --all-targets -- -D warnings` with `clippy::pedantic` on; "
        "`#[allow]` needs a comment saying why.\n\nWe turned off `module_name_repetitions` "
        "and `missing_errors_doc` for the whole workspace in `clippy.toml`."),
    "feedback_rust_naming.md": (
        "Rust naming", "naming conventions for types, modules and crates in our Rust code",
        "Crates are named `orbit-<part>` with a hyphen, modules are one noun each, and "
        "builder types end in `Builder`.\n\nConversion methods follow the `as_`/`to_`/"
        "`into_` convention; constructors that can fail are `try_new`."),
    "project_orbit.md": (
        "Orbit", "the Orbit telemetry agent, written in Rust, and where it stands",
        "Orbit is our telemetry agent: a Rust workspace of five crates, built with cargo "
        "and released every second Thursday.\n\nThe next milestone is the OTLP exporter."),
    "user_editor.md": (
        "Editor", "the user's editor setup",
        "The user writes Rust in Helix with rust-analyzer, and keeps `cargo watch -x "
        "check` running in a second pane."),
}


@pytest.fixture(scope="module")
def rust_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    """Five style and project notes about Rust, embedded with the default embedder."""
    root = tmp_path_factory.mktemp("rust")
    (root / "memory").mkdir()
    for file, (name, description, body) in RUST_NOTES.items():
        kind = file.split("_")[0]
        (root / "memory" / file).write_text(
            f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {kind}\n"
            f"---\n{body}\n", encoding="utf-8")
    with MemoryStore(root / "memory", root / "state", semantic=True) as store:
        store.search("warm up the index and the vectors", mode="hybrid", deadline=None)
        yield store


@pytest.mark.parametrize("question", [
    "how do I reverse a vector in Rust?",
    "how do I sort a HashMap by value in Rust",
    "what's the difference between Rust and Go?",
])
def test_a_generic_question_on_the_folders_topic_injects_nothing(
        rust_folder: MemoryStore, question: str) -> None:
    """"rust" is this folder's word (log-odds 3.6, a 0.11 lift), but the question's
    margin is low: the background holds Rust how-tos like it."""
    response = rust_folder.search(question, mode="hybrid")
    assert response.relevance is not None and not response.relevance.passes, response.relevance
    assert injectable(response) == ()


@pytest.mark.parametrize(("question", "memory"), [
    ("what's our rule for unwrap in Rust?", "feedback_rust_errors.md"),
    ("which clippy lints do we turn off?", "feedback_rust_clippy.md"),
])
def test_a_question_about_the_folders_own_rules_injects_the_rule(
        rust_folder: MemoryStore, question: str, memory: str) -> None:
    response = rust_folder.search(question, mode="hybrid")
    assert response.relevance is not None and response.relevance.passes, response.relevance
    assert memory in [r.file for r in injectable(response)]
