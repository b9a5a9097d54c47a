"""Round-trip edits: one field changes, every other byte of the file stays."""

from __future__ import annotations

import difflib
from datetime import date
from pathlib import Path

import pytest
from golden_results import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemem import UneditableFrontmatter, parse, render_new, set_fields

EDITABLE = [p for p in sorted(GOLDEN.glob("*.md"))
            if p.name not in ("broken_line.md", "unclosed.md", "bad_values.md")]


def changed_lines(before: str, after: str) -> list[str]:
    """The lines removed or added between two texts (line endings included)."""
    diff = difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True))
    return [line for line in diff if line[:1] in "+-"]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_setting_a_field_to_its_current_value_changes_nothing(path: Path) -> None:
    text = read(path)
    memory = parse(text.encode(), path.name)
    same: dict[str, object] = {"type": memory.type} if "type:" in text else {}
    if memory.description:
        same["description"] = memory.description
    if memory.tags:
        same["tags"] = list(memory.tags)
    assert set_fields(text, same) == text


@pytest.mark.parametrize("path", [p for p in EDITABLE if p.name != "no_frontmatter.md"],
                         ids=lambda p: p.name)
def test_changing_description_touches_only_its_line(path: Path) -> None:
    text = read(path)
    edited = set_fields(text, {"description": "A new description, with: colons # and a hash"})
    assert parse(edited.encode(), path.name).description == (
        "A new description, with: colons # and a hash")
    changes = changed_lines(text, edited)
    assert all("description" in line for line in changes), changes
    assert len([c for c in changes if c.startswith("+")]) == 1


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_changing_type_keeps_everything_else(path: Path) -> None:
    text = read(path)
    before = parse(text.encode(), path.name)
    new_type = "user" if before.type != "user" else "feedback"
    edited = set_fields(text, {"type": new_type})
    after = parse(edited.encode(), path.name)
    assert after.type == new_type
    assert (after.body, after.description, after.tags) == (before.body, before.description,
                                                           before.tags)
    assert len([c for c in changed_lines(text, edited) if c.startswith("-")]) <= 1


def test_trailing_comment_survives_a_value_change() -> None:
    text = "---\nname: a   # keep me\nmetadata:\n  type: user  # and me\n---\nbody\n"
    edited = set_fields(text, {"name": "b", "type": "project"})
    assert edited == "---\nname: b   # keep me\nmetadata:\n  type: project  # and me\n---\nbody\n"


def test_crlf_file_stays_crlf_when_a_field_is_added() -> None:
    text = read(GOLDEN / "crlf_windows.md")
    edited = set_fields(text, {"invalid_at": date(2026, 1, 2), "superseded_by": "other.md"})
    assert "\n" not in edited.replace("\r\n", "")
    assert edited.startswith(text[: text.index("---\r\nFirst")])
    assert edited.endswith(text[text.index("---\r\nFirst"):])
    memory = parse(edited.encode(), "crlf.md")
    assert memory.invalid_at == date(2026, 1, 2) and memory.superseded_by == "other.md"


def test_chinese_text_round_trips() -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"aliases": ["上线流程", "发布步骤"]})
    assert parse(edited.encode(), "x.md").aliases == ("上线流程", "发布步骤")
    assert [c for c in changed_lines(text, edited) if c.startswith("+")] == [
        "+ aliases: [上线流程, 发布步骤]\n"]


def test_removing_a_field_removes_only_its_lines() -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"tags": None})
    assert changed_lines(text, edited) == ["- tags:\n", "-   - 部署\n", "-   - 上线\n"]


def test_setting_twice_is_the_same_as_once() -> None:
    text = read(GOLDEN / "plain_english.md")
    once = set_fields(text, {"invalid_at": date(2026, 12, 1)})
    assert set_fields(once, {"invalid_at": date(2026, 12, 1)}) == once


def test_yaml_keywords_are_quoted_so_they_read_back_as_text() -> None:
    text = "---\nname: a\n---\n"
    for word in ("yes", "no", "null", "123", "2026-01-01", "on"):
        edited = set_fields(text, {"name": word})
        assert parse(edited.encode(), "x.md").name == word, edited


def test_file_without_frontmatter_gets_a_block() -> None:
    edited = set_fields("# Note\n\nbody\n", {"type": "user"})
    assert edited == "---\nmetadata:\n  type: user\n---\n# Note\n\nbody\n"


def test_top_level_type_is_edited_where_it_lives() -> None:
    edited = set_fields("---\ntype: user\n---\n", {"type": "project"})
    assert edited == "---\ntype: project\n---\n"


def test_unparseable_frontmatter_is_not_edited_blind() -> None:
    with pytest.raises(UneditableFrontmatter):
        set_fields(read(GOLDEN / "broken_line.md"), {"name": "x"})
    with pytest.raises(UneditableFrontmatter):
        set_fields(read(GOLDEN / "unclosed.md"), {"name": "x"})


def test_render_new_reads_back_every_field() -> None:
    text = render_new({"name": "部署", "description": "d: x # y", "type": "user",
                       "tags": ["a", "b"], "aliases": ["yes"], "updated": date(2026, 11, 30)},
                      "hello\n\nworld")
    memory = parse(text.encode(), "user_x.md")
    assert (memory.name, memory.description, memory.type) == ("部署", "d: x # y", "user")
    assert (memory.tags, memory.aliases, memory.updated) == (("a", "b"), ("yes",),
                                                             date(2026, 11, 30))
    assert memory.body == "\nhello\n\nworld\n" and memory.problems == ()


values = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                 max_size=60).map(str.strip).filter(bool)


@settings(max_examples=150, deadline=None)
@given(value=values)
def test_any_description_reads_back_exactly(value: str) -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"description": value})
    after = parse(edited.encode(), "x.md")
    assert after.description == value
    assert after.body == parse(text.encode(), "x.md").body
    assert after.aliases == ("上线流程", "release steps")
