"""MEMORY.md lines: parsed, written and removed without touching anything else."""

from __future__ import annotations

from sagemem.files import indexfile
from sagemem.files.indexfile import add_entry, entries, format_entry, points_at, remove_entries

INDEX = "# Memory index\n\nA note of mine.\n\n- [Prefs](user_prefs.md) — tabs not spaces\n"


def test_entries_are_read_with_their_lines() -> None:
    (entry,) = entries(INDEX)
    assert (entry.title, entry.target, entry.hook, entry.line) == (
        "Prefs", "user_prefs.md", "tabs not spaces", 5)


def test_format_escapes_brackets_and_keeps_one_line() -> None:
    line = format_entry("a [b]", "user_a.md", "two\nlines")
    assert line == "- [a \\[b\\]](user_a.md) — two lines"
    assert entries(line)[0].title == "a [b]"


def test_names_with_spaces_or_parentheses_use_angle_brackets() -> None:
    line = format_entry("Notes", "my notes (v2).md", "hook")
    assert line == "- [Notes](<my notes (v2).md>) — hook"
    assert entries(line)[0].target == "my notes (v2).md"


def test_add_keeps_crlf_and_a_missing_final_newline() -> None:
    assert add_entry("# I\r\n- [a](a.md)", "- [b](b.md)") == "# I\r\n- [a](a.md)\r\n- [b](b.md)\r\n"


def test_remove_drops_only_that_files_lines() -> None:
    text = INDEX + "- [Other](user_other.md)\n"
    assert remove_entries(text, "user_prefs.md") == (
        "# Memory index\n\nA note of mine.\n\n- [Other](user_other.md)\n")


def test_remove_drops_lines_whatever_the_link_spelling() -> None:
    text = ("# Index\n- [A](./project_a.md) — dot slash\n- [B](<Project_A.md>) — angled\n"
            "- [C](PROJECT_A.MD)\n- [D](project_ab.md)\n")
    assert remove_entries(text, "project_a.md") == "# Index\n- [D](project_ab.md)\n"


def test_points_at_compares_like_file_names() -> None:
    assert points_at("./Project_A.md", "project_a.md")
    assert not points_at("sub/project_a.md", "project_a.md")


def test_a_link_title_after_the_target_is_not_part_of_it() -> None:
    text = "- [E](project_e.md \"title\") — e\n- [F](<my f.md> 'title')\n- [G](g.md (x))\n"
    assert [(e.target, e.hook) for e in entries(text)] == [("project_e.md", "e"),
                                                            ("my f.md", "")]
    assert remove_entries(text, "project_e.md") == text.split("\n", 1)[1]


def test_set_hook_changes_only_the_hook_of_that_files_lines() -> None:
    text = "# Index\r\n- [A](<project a.md>) — old hook\r\n- [B](b.md) — b\r\n- [C](./A.md)\r\n"
    edited = indexfile.set_hook(text, "project a.md", "new\nhook")
    assert edited == text.replace("old hook", "new hook")
    assert indexfile.set_hook(text, "a.md", "c") == text.replace("(./A.md)", "(./A.md) — c")


def test_hook_of_names_the_hook_or_none() -> None:
    text = "- [A](a.md) — the hook\n- [B](b.md)\n"
    assert indexfile.hook_of(text, "a.md") == "the hook"
    assert indexfile.hook_of(text, "b.md") == "" and indexfile.hook_of(text, "c.md") is None


def test_format_writes_control_characters_visibly() -> None:
    line = format_entry("evil\x1b[2Jname", "user_evil.md", "x\x1b]0;T\x07 \x9b\u202e")
    assert line == "- [evil\\\\x1b\\[2Jname](user_evil.md) — x\\x1b]0;T\\x07 \\x9b\\u202e"
    assert entries(line)[0].title == "evil\\x1b[2Jname"
    assert indexfile.hook_matches(entries(line)[0].hook, "x\x1b]0;T\x07 \x9b\u202e")


def test_set_hook_writes_control_characters_visibly() -> None:
    text = indexfile.set_hook("- [a](a.md) — old\n", "a.md", "new\x1b[2J\rline")
    assert text == "- [a](a.md) — new\\x1b[2J line\n"
