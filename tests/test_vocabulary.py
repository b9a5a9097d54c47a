"""Folder vocabulary: a word this folder's memories use far more than generic questions
do is evidence the question concerns them; a common word, or one generic questions use
as much, is none (``search/vocabulary.py``)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagemem.files.folder import MemoryFolder
from sagemem.search import vocabulary
from sagemem.search.background import questions
from sagemem.search.index import SearchIndex
from sagemem.search.vocabulary import TermCounts, by_file, count_terms, log_odds, rate

# Generic questions: "the" in most of them, "rust" in one in fifty, "clippy" in none.
BACKGROUND = TermCounts({"the": 800, "rust": 20, "how": 300}, documents=1000, length=8.0)


@pytest.fixture
def rust_index(tmp_path: Path) -> Iterator[SearchIndex]:
    """Three memories: two about clippy, one about the editor; all say "the" and "rust"."""
    memory = tmp_path / "memory"
    memory.mkdir()
    for file, body in (("clippy.md", "the rust workspace runs clippy pedantic in the CI"),
                       ("lints.md", "the clippy lints we allow in the rust code, and why"),
                       ("editor.md", "the user edits rust in the helix editor")):
        (memory / file).write_text(f"---\ndescription: {file}\n---\n{body}\n", encoding="utf-8")
    index = SearchIndex(MemoryFolder(memory, tmp_path / "state"))
    index.sync()
    yield index
    index.close()


def test_rate_corrects_for_length_so_a_long_document_is_no_evidence_by_itself() -> None:
    # held by every second document: a rarer word in long documents than in short ones
    assert rate(50, 100, length=100.0) < rate(50, 100, length=8.0)
    assert rate(50, 100, 8.0) == pytest.approx(-math.log(1 - 50.5 / 101) / 8.0)
    assert rate(0, 100, 8.0) > 0  # smoothed: an unseen word has a rate, not infinite odds


def test_a_word_only_the_folder_uses_has_high_log_odds_and_a_common_word_none(
        rust_index: SearchIndex) -> None:
    odds = log_odds(rust_index, ["clippy", "the", "rust", "helix", "absent"], BACKGROUND)
    assert "absent" not in odds  # only words the folder holds
    assert odds["clippy"] > odds["rust"] > odds["the"]
    assert odds["the"] < 0  # every memory says it, and so do most questions: no evidence
    assert odds["clippy"] > 3


def test_each_memory_is_credited_only_with_the_words_it_holds(rust_index: SearchIndex) -> None:
    found = by_file(rust_index, "which clippy lints does the rust code allow?",
                    ["clippy.md", "lints.md", "editor.md", "unknown.md"], BACKGROUND)
    assert found["clippy.md"] == found["lints.md"] > found["editor.md"] > 0
    assert found["unknown.md"] == 0.0
    nothing = by_file(rust_index, "how is the weather", ["clippy.md"], BACKGROUND)
    assert nothing == {"clippy.md": 0.0}  # never below 0: a common word takes nothing away


def test_the_shipped_term_table_matches_the_background_text() -> None:
    table = json.loads(vocabulary.TERMS_FILE.read_text(encoding="utf-8"))
    assert table["digest"] == vocabulary.text_digest(questions()), \
        "run tools/background_vectors.py after editing background.txt"
    counted = count_terms(questions())
    assert table["df"] == counted.df and table["documents"] == counted.documents
    assert vocabulary.background_counts().df == counted.df


def test_a_table_for_another_text_is_ignored_and_the_counts_made_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "background-terms.json"
    stale.write_text(vocabulary.terms_table(TermCounts({"x": 1}, 1, 1.0), "0" * 16))
    monkeypatch.setattr(vocabulary, "TERMS_FILE", stale)
    vocabulary.background_counts.cache_clear()
    try:
        assert vocabulary.background_counts().documents == len(questions())
    finally:
        vocabulary.background_counts.cache_clear()


@pytest.mark.parametrize("damage", [{"documents": 0}, {"documents": -1}, {"length": "NaN"},
                                    {"df": {"x": -3}}, {"df": {"x": "many"}}, {"df": [1]}])
def test_a_table_with_the_right_digest_but_impossible_counts_is_counted_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: dict[str, object]) -> None:
    table = json.loads(vocabulary.TERMS_FILE.read_text(encoding="utf-8"))
    table.update(damage)
    damaged = tmp_path / "background-terms.json"
    damaged.write_text(json.dumps(table))
    monkeypatch.setattr(vocabulary, "TERMS_FILE", damaged)
    vocabulary.background_counts.cache_clear()
    try:
        counts = vocabulary.background_counts()
        assert counts.documents == len(questions()) and counts.df == count_terms(questions()).df
    finally:
        vocabulary.background_counts.cache_clear()
