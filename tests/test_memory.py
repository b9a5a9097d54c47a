"""Parsing memory files: golden files, lenient fallbacks, hostile input never raising."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from golden_results import GOLDEN, parsed, without_yaml_wording
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemem import UnreadableFile, parse, revision_of

GOLDEN_FILES = sorted(GOLDEN.glob("*.md"))


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden_file_parses_as_recorded(path: Path) -> None:
    expected = json.loads(path.with_suffix(".result.json").read_text(encoding="utf-8"))
    assert without_yaml_wording(parsed(path)) == without_yaml_wording(expected)


def test_golden_comparison_ignores_only_the_yaml_librarys_wording() -> None:
    ours = "does not parse as a whole ({}); each field was read on its own"
    assert without_yaml_wording([ours.format("did not find expected ',' or ']'")]) == \
        without_yaml_wording([ours.format("expected ',' or ']', but got '<stream end>'")])
    assert without_yaml_wording(ours.format("x")) != without_yaml_wording(
        ours.format("x").replace("each field", "some fields"))
    assert without_yaml_wording("does not parse as a whole (x)") == \
        "does not parse as a whole (x)"  # not our message's shape: compared as it is


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_parse_keeps_the_text_exactly(path: Path) -> None:
    data = path.read_bytes()
    memory = parse(data, path.name)
    assert memory.text.encode("utf-8") == data
    assert memory.revision == revision_of(data)


def test_revision_is_sha256_of_bytes() -> None:
    assert revision_of(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_metadata_type_wins_over_top_level_type() -> None:
    memory = parse(b"---\ntype: user\nmetadata:\n  type: project\n---\n", "x.md")
    assert memory.type == "project"


def test_missing_type_reads_as_reference_without_a_problem() -> None:
    memory = parse(b"---\ndescription: d\n---\nbody\n", "x.md")
    assert memory.type == "reference"
    assert memory.problems == ()


def test_one_broken_field_does_not_hide_the_others() -> None:
    memory = parse(b"---\nname: ok\ndescription: still here\nbaselinePriority: [1\n"
                   b"metadata:\n  type: feedback\n---\nbody\n", "x.md")
    assert (memory.name, memory.description, memory.type) == ("ok", "still here", "feedback")
    assert [(p.field, p.line) for p in memory.problems] == [("frontmatter", 5),
                                                           ("baselinePriority", 4)]


def test_block_read_key_by_key_is_a_problem_even_when_every_key_parses() -> None:
    memory = parse(b"---\n  description: c\nname: n\n---\n", "x.md")
    assert (memory.description, memory.name) == ("c", "n")
    assert [p.field for p in memory.problems] == ["frontmatter"]


@pytest.mark.parametrize(("frontmatter", "problem"), [
    ("name: a\nname: b\n", ("name", 3)),
    ("metadata:\n  type: user\n  type: project\n", ("type", 4)),
    ("description:\tx\n", ("frontmatter", 2)),
    ("description: x\t# c\n", ("frontmatter", 2)),
    ("description: a\tb\n", ("frontmatter", 2)),
    ("? description\n: d\n", ("description", 2)),
    ("metadata:\n  ? type\n  : user\n", ("type", 3)),
], ids=["duplicate", "nested-duplicate", "tab-separator", "tab-before-comment",
        "tab-in-plain-value", "complex-key", "nested-complex-key"])
def test_what_yaml_readers_accept_but_the_editor_cannot_is_a_problem(
        frontmatter: str, problem: tuple[str, int]) -> None:
    memory = parse(f"---\n{frontmatter}---\nbody\n".encode(), "x.md")
    assert [(p.field, p.line) for p in memory.problems] == [problem]


@pytest.mark.parametrize("frontmatter", ['description: "a\tb"\n', "description: |\n  a\tb\n"])
def test_tab_inside_quotes_or_a_block_is_fine(frontmatter: str) -> None:
    assert parse(f"---\n{frontmatter}---\n".encode(), "x.md").problems == ()


def test_duplicate_key_is_a_problem_when_reading_key_by_key_too() -> None:
    memory = parse(b"---\nname: a\nbroken: [\nname: b\n---\n", "x.md")
    assert memory.name == "b"
    assert ("name", 4) in [(p.field, p.line) for p in memory.problems]


def test_tags_over_the_limits_are_kept_with_a_problem() -> None:
    many = ", ".join(f"t{i}" for i in range(21))
    memory = parse(f"---\ntags: [{many}, {'x' * 41}]\n---\n".encode(), "x.md")
    assert len(memory.tags) == 22
    assert [(p.field, p.line) for p in memory.problems] == [("tags", 2), ("tags", 2)]


def test_tags_at_the_limits_are_fine() -> None:
    tags = ", ".join(f"{i:02d}" + "x" * 38 for i in range(20))
    memory = parse(f"---\ntags: [{tags}]\n---\n".encode(), "x.md")
    assert len(memory.tags) == 20 and memory.problems == ()


def test_frontmatter_that_is_not_a_mapping_is_a_problem() -> None:
    memory = parse(b"---\n- just\n- a list\n---\nbody\n", "x.md")
    assert memory.problems[0].field == "frontmatter"
    assert memory.body == "body\n"


def test_body_line_counts_frontmatter_lines() -> None:
    memory = parse(b"---\na: 1\nb: 2\n---\n\nfirst body line\n", "x.md")
    assert memory.body_line == 5
    assert memory.text.splitlines()[memory.body_line] == "first body line"


def test_invalid_bytes_raise_a_per_file_error_with_offset() -> None:
    with pytest.raises(UnreadableFile, match="offset 4"):
        parse(b"abc \xff\xfe", "bad.md")


def test_is_invalid_once_invalid_at_has_passed() -> None:
    memory = parse(b"---\ninvalid_at: 2026-03-01\n---\n", "x.md")
    assert not memory.is_invalid(date(2026, 2, 28))
    assert memory.is_invalid(date(2026, 3, 1))


def test_is_not_yet_valid_until_valid_at_arrives() -> None:
    memory = parse(b"---\nvalid_at: 2026-03-01\n---\n", "x.md")
    assert memory.is_not_yet_valid(date(2026, 2, 28))
    assert not memory.is_not_yet_valid(date(2026, 3, 1))
    assert not parse(b"---\ndescription: x\n---\n", "y.md").is_not_yet_valid(date(2026, 1, 1))


def test_alias_bomb_costs_nothing_and_hides_nothing() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    text = "---\n" + "\n".join(lines) + "\ntags: *a9\nname: *a9\ndescription: survives\n---\nb\n"
    memory = parse(text.encode(), "bomb.md")
    assert memory.description == "survives"
    assert memory.tags == () and memory.name is None
    assert {p.field for p in memory.problems} == {"tags", "name"}


def test_deeply_nested_frontmatter_is_a_problem_not_a_crash() -> None:
    text = "---\ndescription: deep\nx: " + "[" * 50_000 + "]" * 50_000 + "\n---\nbody\n"
    memory = parse(text.encode(), "deep.md")
    assert memory.description == "deep"
    assert memory.body == "body\n"


YAML_PIECES = [*"ab:- #'\"[]{}&*!|>%@`\t\n\r,?.0123456789名字",
               "\n  ", "name: ", "description: ", "type: ", "tags: ", "\n- "]
yaml_ish = st.lists(st.sampled_from(YAML_PIECES), max_size=60).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatter=yaml_ish, body=st.text(max_size=80))
def test_fuzzed_frontmatter_never_raises(frontmatter: str, body: str) -> None:
    data = f"---\n{frontmatter}\n---\n{body}".encode("utf-8", errors="surrogatepass")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    memory = parse(data, "fuzz.md")
    assert memory.text.encode("utf-8") == data
    assert memory.type in ("user", "feedback", "project", "reference")


@settings(max_examples=200)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_parse_or_fail_cleanly(data: bytes) -> None:
    try:
        memory = parse(data, "bytes.md")
    except UnreadableFile:
        return
    assert memory.text.encode("utf-8") == data


def test_an_impossible_date_is_that_fields_problem_not_the_whole_blocks() -> None:
    memory = parse(b"---\ndescription: d\nvalid_at: 2026-02-30\nupdated: 2026-01-02\n---\n",
                   "user_x.md")
    assert memory.description == "d" and memory.updated == date(2026, 1, 2)
    assert memory.valid_at is None
    assert [(p.field, p.kind, p.line) for p in memory.problems] == [("valid_at", "field", 3)]


@pytest.mark.parametrize("frontmatter", ["b: !!binary x\n", "a: \"b\x07\"\n"])
def test_a_yaml_error_is_one_line_cut_at_a_word(frontmatter: str) -> None:
    memory = parse(f"---\ndescription: d\n{frontmatter}---\nbody\n".encode(), "user_y.md")
    (problem,) = [p for p in memory.problems if p.field == "frontmatter"]
    reason = problem.message.split("(", 1)[1].rsplit(")", 1)[0]
    assert "\n" not in problem.message and " in \"<" not in reason
    assert len(reason) <= 80 and (reason.endswith(" …") or len(reason) < 80)
