"""merge_memory: a memory merged field by field in its frontmatter, line by line in its
body, every byte no side touched kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemem.gitsync.merge_memory import merge_memory

BASE = ("---\nname: Alpha\n# a comment that stays\ndescription: the first\ntags: [a, b]\n"
        "metadata:\n  type: project\n---\none\ntwo\nthree\nfour\n")


def test_different_fields_changed_on_each_side_both_land() -> None:
    ours = BASE.replace("name: Alpha", "name: Alpha 2")
    theirs = BASE.replace("description: the first", "description: now second")
    result = merge_memory(BASE, ours, theirs)
    assert result.clean
    assert result.text == BASE.replace("name: Alpha", "name: Alpha 2").replace(
        "description: the first", "description: now second")


def test_the_same_change_on_both_sides_is_one_change() -> None:
    changed = BASE.replace("tags: [a, b]", "tags: [a, b, c]")
    assert merge_memory(BASE, changed, changed).text == changed


def test_a_field_changed_differently_is_a_conflict_marked_around_its_lines() -> None:
    ours = BASE.replace("description: the first", "description: mine")
    theirs = BASE.replace("description: the first", "description: yours")
    result = merge_memory(BASE, ours, theirs)
    assert [c.where for c in result.conflicts] == ["field 'description'"]
    assert ("<<<<<<< ours\ndescription: mine\n=======\ndescription: yours\n>>>>>>> theirs\n"
            in result.text)
    assert result.text.endswith("---\none\ntwo\nthree\nfour\n")


def test_a_field_changed_on_one_side_and_deleted_on_the_other_is_a_conflict() -> None:
    ours = BASE.replace("tags: [a, b]\n", "")
    theirs = BASE.replace("tags: [a, b]", "tags: [z]")
    result = merge_memory(BASE, ours, theirs)
    assert [c.where for c in result.conflicts] == ["field 'tags'"]
    assert "<<<<<<< ours\n=======\ntags: [z]\n>>>>>>> theirs\n" in result.text


def test_a_field_deleted_on_one_side_and_untouched_on_the_other_is_gone() -> None:
    ours = BASE.replace("tags: [a, b]\n", "")
    theirs = BASE.replace("four", "4")
    assert merge_memory(BASE, ours, theirs).text == ours.replace("four", "4")


def test_a_field_theirs_added_lands_after_the_field_it_follows_there() -> None:
    theirs = BASE.replace("tags: [a, b]\n", "tags: [a, b]\npriority: high\n")
    ours = BASE.replace("one\n", "one!\n")
    result = merge_memory(BASE, ours, theirs)
    assert result.text == theirs.replace("one\n", "one!\n")


def test_the_comment_before_a_field_travels_with_it() -> None:
    theirs = BASE.replace("# a comment that stays\ndescription: the first\n",
                          "# a comment that changed\ndescription: the first\n")
    ours = BASE.replace("name: Alpha", "name: A")
    assert merge_memory(BASE, ours, theirs).text == theirs.replace("name: Alpha", "name: A")


def test_a_nested_mapping_edited_on_both_sides_is_one_conflict() -> None:
    ours = BASE.replace("  type: project\n", "  type: user\n")
    theirs = BASE.replace("  type: project\n", "  type: project\n  owner: me\n")
    assert [c.where for c in merge_memory(BASE, ours, theirs).conflicts] == ["field 'metadata'"]


def test_the_body_merges_with_gits_line_merge() -> None:
    ours = BASE.replace("one\n", "one (ours)\n")
    theirs = BASE.replace("four\n", "four (theirs)\n")
    result = merge_memory(BASE, ours, theirs)
    assert result.clean
    assert result.text.endswith("---\none (ours)\ntwo\nthree\nfour (theirs)\n")


def test_a_body_line_changed_differently_is_a_body_conflict() -> None:
    result = merge_memory(BASE, BASE.replace("two", "2"), BASE.replace("two", "II"))
    assert [c.where for c in result.conflicts] == ["body"]
    assert "<<<<<<< ours\n2\n=======\nII\n>>>>>>> theirs\n" in result.text


def test_crlf_files_keep_their_line_breaks() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base.replace("name: Alpha", "name: Beta")
    theirs = base.replace("three", "3")
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert result.text == base.replace("name: Alpha", "name: Beta").replace("three", "3")


def test_unicode_and_quoted_values_stay_byte_exact() -> None:
    base = "---\nname: 'Café ☕'\ndescription: \"naïve — 日本語\"\n---\nüber\n"
    ours = base.replace("über", "über alles")
    theirs = base.replace("'Café ☕'", "'Café ☕☕'")
    assert merge_memory(base, ours, theirs).text == (
        "---\nname: 'Café ☕☕'\ndescription: \"naïve — 日本語\"\n---\nüber alles\n")


def test_a_file_without_frontmatter_merges_as_plain_text() -> None:
    base = "one\ntwo\nthree\n"
    result = merge_memory(base, "one!\ntwo\nthree\n", "one\ntwo\nthree!\n")
    assert result.clean and result.text == "one!\ntwo\nthree!\n"


def test_a_key_written_twice_merges_the_whole_file_as_text() -> None:
    base = "---\nname: A\nname: B\n---\nbody\n"
    ours, theirs = base.replace("name: A", "name: C"), base.replace("body", "body 2")
    result = merge_memory(base, ours, theirs)
    assert result.clean and result.text == "---\nname: C\nname: B\n---\nbody 2\n"


def test_a_memory_both_sides_created_differently_conflicts() -> None:
    result = merge_memory("", "---\nname: A\n---\nx\n", "---\nname: B\n---\ny\n")
    assert not result.clean and "<<<<<<< ours" in result.text


_texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=60)
_memories = st.builds(lambda n, d, b: f"---\nname: {n!r}\ndescription: {d!r}\n---\n{b}",
                      _texts, _texts, _texts)


@settings(max_examples=60, deadline=None)
@given(_memories, _memories)
def test_an_unchanged_side_returns_the_changed_one_byte_for_byte(base: str, changed: str
                                                                 ) -> None:
    assert merge_memory(base, base, changed).text == changed
    assert merge_memory(base, changed, base).text == changed
    assert merge_memory(base, changed, changed).text == changed


@settings(max_examples=40, deadline=None)
@given(_memories, _texts)
def test_a_field_change_and_a_body_change_both_land(base: str, addition: str) -> None:
    ours = base.replace("\n---\n", "\npriority: 1\n---\n", 1)
    theirs = base + "\nappended line\n"
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert result.text == ours + "\nappended line\n"


def test_updated_set_on_both_sides_keeps_the_later_day() -> None:
    base = "---\nname: A\ndescription: d\nupdated: 2026-11-01\n---\nbody\n"
    ours = base.replace("name: A", "name: B").replace("2026-11-01", "2026-12-02")
    theirs = base.replace("body", "body 2").replace("2026-11-01", "2026-11-30")
    for a, b in ((ours, theirs), (theirs, ours)):
        result = merge_memory(base, a, b)
        assert result.clean
        assert result.text == "---\nname: B\ndescription: d\nupdated: 2026-12-02\n---\nbody 2\n"


def test_updated_deleted_on_one_side_and_changed_on_the_other_still_conflicts() -> None:
    base = "---\nname: A\nupdated: 2026-11-01\n---\nbody\n"
    result = merge_memory(base, base.replace("updated: 2026-11-01\n", ""),
                          base.replace("2026-11-01", "2026-11-30"))
    assert [c.where for c in result.conflicts] == ["field 'updated'"]


def test_fields_and_body_lines_theirs_added_to_a_crlf_memory_take_its_line_ending() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base.replace("name: Alpha", "name: Alpha 2")
    theirs = base.replace("tags: [a, b]\r\n", "tags: [a, b]\r\npriority: high\n") + "five\n"
    assert merge_memory(base, ours, theirs).text == ours.replace(
        "tags: [a, b]\r\n", "tags: [a, b]\r\npriority: high\r\n") + "five\r\n"


_field = st.sampled_from(["name: A", "name: B", "description: x", "description: y",
                          "tags: [a]", "# note", ""])
_body_line = st.sampled_from(["one", "two", "three", ""])


def _memory(fields: list[str], body: list[str], crlf: list[bool] | None = None) -> str:
    lines = ["---", "name: M", *fields, "---", *body]
    ends = crlf if crlf is not None else [True] * len(lines)
    return "".join(line + ("\r\n" if end else "\n")
                   for line, end in zip(lines, [*ends, *[True] * len(lines)], strict=False))


@settings(max_examples=60, deadline=None)
@given(st.lists(_field, max_size=4, unique=True), st.lists(_body_line, max_size=4),
       st.lists(_field, max_size=4, unique=True), st.lists(_body_line, max_size=4),
       st.lists(_field, max_size=4, unique=True), st.lists(_body_line, max_size=4),
       st.lists(st.booleans(), max_size=12))
def test_a_crlf_memory_merged_with_any_theirs_has_no_bare_lf(
        base_fields: list[str], base_body: list[str], our_fields: list[str],
        our_body: list[str], their_fields: list[str], their_body: list[str],
        crlf: list[bool]) -> None:
    b, o = _memory(base_fields, base_body), _memory(our_fields, our_body)
    if o == b:
        return  # ours unchanged takes theirs whole
    text = merge_memory(b, o, _memory(their_fields, their_body, crlf)).text
    assert "\n" not in text.replace("\r\n", "")
