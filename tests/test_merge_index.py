"""merge_index: MEMORY.md merged line by line, each line known by the file it links."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemem.gitsync.merge_index import merge_index

HEAD = "# Memory index\n\nSome notes a person wrote.\n\n"
BASE = HEAD + "- [A](a.md) — first\n- [B](b.md) — second\n- [C](c.md) — third\n"


def test_lines_added_on_both_sides_are_kept_in_order() -> None:
    ours = BASE + "- [D](d.md) — ours\n"
    theirs = BASE.replace("- [B]", "- [E](e.md) — theirs\n- [B]")
    result = merge_index(BASE, ours, theirs)
    assert result.clean
    assert result.text == HEAD + ("- [A](a.md) — first\n- [E](e.md) — theirs\n"
                                  "- [B](b.md) — second\n- [C](c.md) — third\n- [D](d.md) — ours\n")


def test_a_line_theirs_added_first_goes_after_the_last_list_line() -> None:
    theirs = BASE.replace("- [A]", "- [Z](z.md) — new\n- [A]")
    ours = BASE.replace("- [C](c.md) — third\n", "")
    assert merge_index(BASE, ours, theirs).text == HEAD + (
        "- [A](a.md) — first\n- [B](b.md) — second\n- [Z](z.md) — new\n")


def test_a_line_one_side_removed_is_dropped() -> None:
    ours = BASE.replace("- [B](b.md) — second\n", "")
    theirs = BASE + "- [D](d.md) — new\n"
    assert merge_index(BASE, ours, theirs).text == ours + "- [D](d.md) — new\n"
    assert merge_index(BASE, theirs, ours).text == ours + "- [D](d.md) — new\n"


def test_a_removed_line_stays_removed_even_when_the_other_side_changed_its_hook() -> None:
    ours = BASE.replace("- [B](b.md) — second\n", "")
    theirs = BASE.replace("— second", "— second, reworded")
    assert merge_index(BASE, ours, theirs).text == ours


def test_a_hook_changed_on_one_side_is_taken() -> None:
    theirs = BASE.replace("— third", "— third, reworded")
    ours = BASE + "- [D](d.md) — ours\n"
    assert merge_index(BASE, ours, theirs).text == theirs + "- [D](d.md) — ours\n"


def test_a_hook_changed_differently_on_both_sides_is_a_conflict() -> None:
    result = merge_index(BASE, BASE.replace("— second", "— mine"),
                         BASE.replace("— second", "— yours"))
    assert [c.where for c in result.conflicts] == ["index line for b.md"]
    assert ("<<<<<<< ours\n- [B](b.md) — mine\n=======\n- [B](b.md) — yours\n"
            ">>>>>>> theirs\n") in result.text


def test_the_same_file_linked_twice_is_collapsed() -> None:
    ours = BASE + "- [D](d.md) — new\n"
    theirs = BASE.replace("- [A]", "- [D](./d.md) — new\n- [A]") + "- [B again](B.md) — dup\n"
    text = merge_index(BASE, ours, theirs).text
    assert text.count("d.md") == 1 and text.count("(b.md)") == 1 and "B.md" not in text


def test_prose_changed_by_theirs_merges_as_text() -> None:
    theirs = BASE.replace("Some notes a person wrote.", "Notes, edited.")
    ours = BASE + "- [D](d.md) — ours\n"
    result = merge_index(BASE, ours, theirs)
    assert result.clean and result.text == theirs + "- [D](d.md) — ours\n"


def test_a_line_theirs_added_goes_after_its_predecessor_before_ours_additions() -> None:
    result = merge_index(BASE, BASE + "- [D](d.md) — ours\n", BASE + "- [E](e.md) — theirs\n")
    assert result.text == BASE + "- [E](e.md) — theirs\n- [D](d.md) — ours\n"


def test_crlf_index_keeps_its_line_breaks() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base + "- [D](d.md) — ours\r\n"
    theirs = base + "- [E](e.md) — theirs\r\n"
    assert merge_index(base, ours, theirs).text == (
        base + "- [E](e.md) — theirs\r\n- [D](d.md) — ours\r\n")


def test_an_index_without_a_final_newline_gets_one_between_lines() -> None:
    base = BASE.rstrip("\n")
    ours = base + "\n- [D](d.md) — ours"
    theirs = base + "\n- [E](e.md) — theirs"
    assert merge_index(base, ours, theirs).text == (
        base + "\n- [E](e.md) — theirs\n- [D](d.md) — ours")


_lines = st.lists(st.sampled_from([f"- [{n}]({n}.md) — {n}\n" for n in "abcdefg"]
                                  + ["prose\n", "# heading\n", "\n"]), max_size=8)


@settings(max_examples=80, deadline=None)
@given(_lines, _lines)
def test_an_unchanged_side_returns_the_changed_one_byte_for_byte(
        base: list[str], changed: list[str]) -> None:
    b, c = "".join(base), "".join(changed)
    assert merge_index(b, b, c).text == c
    assert merge_index(b, c, b).text == c
