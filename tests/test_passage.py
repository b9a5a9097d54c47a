"""Which paragraph a found memory quotes (``search/passage.py``), each lever on a small
hand-made folder with the real embedder: a name deciding between paragraphs that share
every other word, a two-part question quoting both parts, a "still X?" question quoting
what changed, the answer after a question in a dialogue note, and the quote's form."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagemem.errors import EmbedderUnavailable
from sagemem.search import hybrid
from sagemem.search.passage import (
    MAX_PARAGRAPHS,
    PASSAGE_CHARS,
    _picked,
    _quoting,
    _Scored,
    entities_of,
)
from sagemem.search.results import SearchResult
from sagemem.search.text import Paragraph
from sagemem.store import MemoryStore

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"

NOTES = {
    "user_birthdays.md": ("Birthdays in the family", """\
Mum's birthday is on 14 March. She likes orchids and a long phone call in the morning.

Dad's birthday dinner is on 2 August at the Italian place on the corner of Elm Street; \
his birthday dinner starts early, at six, because he likes to be home before the news. \
A history book is always welcome, a good bottle of red wine too, but never socks or \
ties: he has drawers full of both and says so every year, loudly, to everyone at the table.

Lena's birthday is on 30 November. She collects vinyl records, mostly jazz from the \
fifties and sixties, and she hates surprises of any kind, so tell her the plan a week \
ahead. Last year we gave her a first pressing of Kind of Blue and she played it all \
evening; this year a record-cleaning kit or concert tickets in Berlin would be safe choices.
"""),
    "reference_environments.md": ("Where staging and production run", """\
We run two environments besides local development, both on the same cloud account.

Staging lives at staging.acme.dev and its database is reset every Monday at 06:00.

Production lives at app.acme.dev behind the bastion host jump.acme.dev.

Ask Priya in #infra for access to either; it is granted for a day at a time.
"""),
    "project_ci.md": ("Continuous integration", """\
We run CI on Jenkins, on the build box under Tom's desk: CI on Jenkins runs one job per repo.

Jenkins jobs were defined in the jenkins/ folder of each repository, in Groovy.

In March 2025 the pipelines moved to GitHub Actions; Jenkins is no longer used anywhere.
"""),
    "project_chat_ana.md": ("Chat with Ana about the trip", """\
**Ana** (D1:1): I'm back from the mountains, it was freezing at night!

**Ben** (D1:2): Welcome back! Which hut did you sleep in on the second night?

**Ana** (D1:3): The Refugio Elena, right under the glacier; the soup was amazing.

**Ben** (D1:4): Sounds lovely. I'm stuck with spreadsheets all week.
"""),
}


def write_notes(directory: Path) -> None:
    for file, (description, body) in NOTES.items():
        (directory / file).write_text(f"---\ndescription: {description}\n---\n{body}",
                                      encoding="utf-8")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    """The notes above among the shipped sample memories, embedded with the default
    embedder."""
    root = tmp_path_factory.mktemp("passage")
    shutil.copytree(SAMPLE, root / "memory", ignore=shutil.ignore_patterns("eval"))
    write_notes(root / "memory")
    with MemoryStore(root / "memory", root / "state", semantic=True) as store:
        store.search("warm up the index and the vectors", mode="hybrid", deadline=None)
        yield store


def quote_of(store: MemoryStore, question: str, file: str) -> SearchResult:
    response = store.search(question, mode="hybrid", deadline=None)
    found = [r for r in response.results if r.file == file]
    assert found, [r.file for r in response.results]
    return found[0]


def test_the_name_in_the_question_decides_which_paragraph_is_quoted(
        folder: MemoryStore) -> None:
    """Dad's paragraph shares more of the question's words; the name alone is Lena's
    (and the two are too long to quote both)."""
    quoted = quote_of(folder, "When is Lena's birthday dinner?", "user_birthdays.md").paragraph
    assert "30 November" in quoted and "2 August" not in quoted


def test_a_two_part_question_quotes_both_parts(folder: MemoryStore) -> None:
    result = quote_of(folder, "what are the addresses of staging and production?",
                      "reference_environments.md")
    assert "staging.acme.dev" in result.paragraph and "app.acme.dev" in result.paragraph
    assert "Priya" not in result.paragraph  # the two parts, not the whole note
    lines = (folder.directory / "reference_environments.md").read_text().splitlines()
    assert "Staging lives" in lines[result.start_line - 1]
    assert "Production lives" in lines[result.end_line - 1]


def test_a_still_question_quotes_the_paragraph_that_says_what_changed(
        folder: MemoryStore) -> None:
    quoted = quote_of(folder, "are we still running CI on Jenkins?", "project_ci.md").paragraph
    assert "GitHub Actions" in quoted


def test_in_a_dialogue_the_answer_after_the_question_is_quoted(folder: MemoryStore) -> None:
    quoted = quote_of(folder, "Which hut did Ana sleep in on the second night?",
                      "project_chat_ana.md").paragraph
    assert "Refugio Elena" in quoted


def test_hybrid_search_falling_back_to_words_still_chooses_the_paragraph(
        folder: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(*args: object, **kwargs: object) -> None:
        raise EmbedderUnavailable("use-m3", "gone")

    monkeypatch.setattr(hybrid, "_semantic", unavailable)
    response = folder.search("are we still running CI on Jenkins?", mode="hybrid")
    assert any("embedder unavailable" in n for n in response.notices)
    quoted = next(r for r in response.results if r.file == "project_ci.md").paragraph
    assert "GitHub Actions" in quoted


def test_search_on_the_command_line_quotes_the_chosen_paragraph(folder: MemoryStore) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sagemem", "--dir", str(folder.directory), "--state-dir",
         str(folder.state_dir), "search", "When is Lena's birthday?", "--json"],
        capture_output=True, text=True, env={**os.environ, "SAGE_MEM_SEMANTIC": "on"},
        timeout=120)
    assert done.returncode == 0, done.stderr
    results = {r["file"]: r for r in json.loads(done.stdout)["results"]}
    assert "30 November" in results["user_birthdays.md"]["paragraph"]


def test_a_memory_of_very_many_paragraphs_is_quoted_from_around_the_ranked_one(
        tmp_path: Path) -> None:
    """Past MAX_PARAGRAPHS only a window around the ranking's paragraph is scored: the
    cost of a question stays bounded, and the answer after the question still wins."""
    paras = [f"Entry {i}: nothing much happened that day." for i in range(MAX_PARAGRAPHS + 100)]
    paras[250] = "Which locker holds the spare keys for the boathouse?"
    paras[251] = "Locker 17, next to the oars."
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "reference_log.md").write_text(
        "---\ndescription: the long log\n---\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
    with MemoryStore(tmp_path / "memory", tmp_path / "state", semantic=False) as store:
        found = store.search("which locker holds the boathouse spare keys", mode="lexical")
    assert "Locker 17" in found.results[0].paragraph


# -- the quote's form, from its numbers ------------------------------------------------

def para(start: int, text: str) -> Paragraph:
    return Paragraph(start, start + text.count("\n"), text)


def result() -> SearchResult:
    return SearchResult("a.md", None, "", "reference", 1.0, 1, 1, "old", False, None, None)


def test_a_clear_winner_is_quoted_alone() -> None:
    scored = [_Scored(para(5, "one"), 1.0), _Scored(para(7, "two"), 0.5)]
    assert _picked("what is one", scored) == [0]


def test_a_close_runner_up_is_quoted_too_in_file_order() -> None:
    scored = [_Scored(para(5, "one"), 0.9), _Scored(para(7, "two"), 1.0)]
    assert _picked("what is it", scored) == [0, 1]


def test_two_paragraphs_too_long_together_are_never_both_quoted() -> None:
    long = "x" * (PASSAGE_CHARS // 2 + 1)
    scored = [_Scored(para(5, long), 1.0), _Scored(para(7, long), 0.99)]
    assert len(_picked("this and that", scored)) == 1


def test_paragraphs_apart_are_joined_with_an_ellipsis_and_the_lines_span_both() -> None:
    scored = [_Scored(para(5, "one"), 1.0), _Scored(para(9, "two"), 0.0),
              _Scored(para(12, "three"), 1.0)]
    apart = _quoting(result(), scored, [0, 2])
    assert apart.paragraph == "one\n…\nthree" and (apart.start_line, apart.end_line) == (5, 12)
    in_a_row = _quoting(result(), scored, [0, 1])  # however many blank lines between
    assert in_a_row.paragraph == "one\n\ntwo" and in_a_row.end_line == 9


def test_entities_are_names_numbers_and_identifiers_found_word_by_word() -> None:
    assert entities_of("When is Lena's birthday in 2025, per api_base.v2?") == \
        {"lena", "2025", "api_base.v2"}
    assert entities_of("Where is it?") == set()  # a capital first word is no name


def test_a_question_of_one_long_run_of_punctuation_is_read_as_one_capped_word() -> None:
    """Word by word, each word capped at MAX_WORD_CHARS: no pattern runs over the whole
    question (a regular expression over it took 9 s for 40,000 dashes)."""
    assert entities_of("-" * 40_000) == set()
    (number,) = entities_of("Deploy " + "1." * 20_000)
    assert number.startswith("1.1.") and len(number) < 64
