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


SECTIONS = ("## Work\n- [A](a.md) — alpha\n- [B](b.md) — beta\n\n"
            "## Favourites\n- [A](a.md) — alpha\n")


def test_a_file_listed_under_two_headings_keeps_both_lines() -> None:
    ours = SECTIONS.replace("— beta", "— beta, reworded")
    theirs = SECTIONS + "- [C](c.md) — gamma\n"
    result = merge_index(SECTIONS, ours, theirs)
    assert result.clean
    assert result.text == ours + "- [C](c.md) — gamma\n"


def test_a_line_theirs_added_after_a_repeated_link_follows_that_occurrence() -> None:
    ours = SECTIONS + "- [D](d.md) — delta\n"
    theirs = SECTIONS.replace("## Favourites\n- [A](a.md) — alpha\n",
                              "## Favourites\n- [A](a.md) — alpha\n- [C](c.md) — gamma\n")
    assert merge_index(SECTIONS, ours, theirs).text == (
        SECTIONS + "- [C](c.md) — gamma\n- [D](d.md) — delta\n")


def test_a_line_both_sides_added_for_one_new_file_is_kept_once() -> None:
    ours = BASE + "- [D](d.md) — new\n"
    theirs = BASE.replace("- [A]", "- [D](d.md) — new\n- [A]")
    assert merge_index(BASE, ours, theirs).text == ours


def test_lines_theirs_added_to_a_crlf_index_take_its_line_ending() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base.replace("— second", "— mine")
    theirs = base.replace("— third\r\n", "— changed\n") + "- [E](e.md) — theirs\n"
    assert merge_index(base, ours, theirs).text == ours.replace(
        "— third", "— changed") + "- [E](e.md) — theirs\r\n"


_index_line = st.sampled_from([f"- [{n}]({n}.md) — {n}" for n in "abcdef"]
                              + [f"- [{n}]({n}.md) — {n}, again" for n in "abc"]
                              + ["prose", "# heading", ""])


@settings(max_examples=80, deadline=None)
@given(st.lists(_index_line, max_size=7), st.lists(_index_line, max_size=7),
       st.lists(st.tuples(_index_line, st.booleans()), max_size=7))
def test_a_crlf_index_merged_with_any_theirs_has_no_bare_lf(
        base: list[str], ours: list[str], theirs: list[tuple[str, bool]]) -> None:
    b, o = ("".join(f"{line}\r\n" for line in lines) for lines in (base, ours))
    t = "".join(line + ("\r\n" if crlf else "\n") for line, crlf in theirs)
    if o in (b, ""):
        return  # ours unchanged takes theirs whole; an empty ours has no ending to keep
    text = merge_index(b, o, t).text
    assert "\n" not in text.replace("\r\n", "")
