"""The commit message a sync builds from the change journal (gitsync/message.py)."""

from __future__ import annotations

from sagemem.gitsync.message import commit_message
from sagemem.writes.changelog import entry


def change(file: str, op: str, writer: str = "cli", to: str | None = None):  # type: ignore[no-untyped-def]
    return entry(file, op, writer=writer, reason=None, before=None, after=None, to=to)


def test_the_subject_counts_each_kind_most_frequent_first() -> None:
    entries = [change("a.md", "write"), change("b.md", "archive"), change("c.md", "write")]
    text = commit_message(entries, [])
    assert text.splitlines()[0] == "sagemem sync: 3 changes (2 written, 1 archived)"
    assert text.splitlines()[2:] == ["write a.md (cli)", "archive b.md (cli)",
                                     "write c.md (cli)"]


def test_hand_edits_are_counted_and_named_after_the_journal_lines() -> None:
    text = commit_message([change("old.md", "rename", "mcp", to="new.md")], ["notes.md"])
    assert text.splitlines() == ["sagemem sync: 2 changes (1 renamed, 1 edited by hand)", "",
                                 "rename old.md -> new.md (mcp)", "edited by hand: notes.md"]


def test_a_given_subject_replaces_the_counted_one_on_one_line() -> None:
    text = commit_message([change("a.md", "set")], [], subject="weekly\ntidy")
    assert text.splitlines()[0] == "weekly tidy"


def test_control_characters_in_a_name_are_made_visible() -> None:
    text = commit_message([], ["evil\x1b[2J.md"])
    assert "\x1b" not in text and "evil" in text
