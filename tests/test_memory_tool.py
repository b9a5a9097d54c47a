"""The memory tool's handler: each command's documented semantics and the exact strings a
model reads, the path mapping onto the flat folder, and every way a request can fail
without an exception escaping or a byte leaving the folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory

from sagemem import MemoryStore, WriteFailed, init_directory, lock_memory, read_log
from sagemem.files.indexfile import retarget_entries
from sagemem.history import ledger
from sagemem.history.rename import rename_memory
from sagemem.memory_tool import MemoryToolHandler
from sagemem.memory_tool.render import human_size
from sagemem.memory_tool.text import describe, insert_at
from sagemem.writes.conflicts import list_conflicts

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
NOTES = ("---\nname: notes\ndescription: meeting notes\nmetadata:\n  type: project\n---\n"
         "Meeting notes:\n- timeline\n- next steps\n- timeline review\n")
OTHER = "---\nname: other\ndescription: another memory\nmetadata:\n  type: user\n---\nBody.\n"
HEADER = "Here's the content of /memories/notes.md with line numbers:"
GENERATED = ("---\nname: user_coffee\ndescription: Coffee\nmetadata:\n  type: user\n"
             "updated: 2026-11-30\n---\n")
"""The block a plain create of /memories/user_coffee.md gets, first line "# Coffee"."""
EDITED = ("The memory file has been edited. Here is the snippet showing the change "
          "(with line numbers):")
"""The documented strings are pinned here as literals, not taken from ``messages.py``:
a test reading the module's own constant could never catch its wording drifting."""


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    init_directory(tmp_path / "memory", tmp_path / "state")
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    for name, text in (("notes.md", NOTES), ("other.md", OTHER)):
        write_memory(store.directory, name, text)
        store.index_memory(store.get(name))
    return store


@pytest.fixture
def tool(store: MemoryStore) -> MemoryToolHandler:
    return MemoryToolHandler(store, clock=lambda: NOW)


def on_disk(store: MemoryStore, name: str) -> str:
    return (store.directory / name).read_text(encoding="utf-8")


def index(store: MemoryStore) -> str:
    return on_disk(store, "MEMORY.md")


# -- each command as documented -------------------------------------------------------

DOCUMENTED: list[tuple[dict[str, Any], str]] = [
    ({"command": "view", "path": "/memories/notes.md", "view_range": [8, 9]},
     f"{HEADER}\n     8\t- timeline\n     9\t- next steps"),
    ({"command": "view", "path": "/memories/notes.md", "view_range": [10, -1]},
     f"{HEADER}\n    10\t- timeline review"),
    ({"command": "view", "path": "/memories/nope.md"},
     "The path /memories/nope.md does not exist. Please provide a valid path."),
    ({"command": "create", "path": "/memories/notes.md", "file_text": "x"},
     "Error: File /memories/notes.md already exists"),
    ({"command": "str_replace", "path": "/memories/notes.md", "old_str": "next steps",
      "new_str": "next: ship it"},
     EDITED + "\n     7\tMeeting notes:\n     8\t- timeline\n     9\t- next: ship it"
                  "\n    10\t- timeline review"),
    ({"command": "str_replace", "path": "/memories/notes.md", "old_str": "zzz", "new_str": "q"},
     "No replacement was performed, old_str `zzz` did not appear verbatim in "
     "/memories/notes.md."),
    ({"command": "str_replace", "path": "/memories/notes.md", "old_str": "timeline",
      "new_str": "q"},
     "No replacement was performed. Multiple occurrences of old_str `timeline` in lines: "
     "8, 10. Please ensure it is unique"),
    ({"command": "str_replace", "path": "/memories/nope.md", "old_str": "a", "new_str": "b"},
     "Error: The path /memories/nope.md does not exist. Please provide a valid path."),
    ({"command": "str_replace", "path": "/memories", "old_str": "a", "new_str": "b"},
     "Error: The path /memories does not exist. Please provide a valid path."),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": 7,
      "insert_text": "- agenda"},
     "The file /memories/notes.md has been edited."),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": 11, "insert_text": "x"},
     "Error: Invalid `insert_line` parameter: 11. It should be within the range of lines of "
     "the file: [0, 10]"),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": -1, "insert_text": "x"},
     "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of "
     "the file: [0, 10]"),
    ({"command": "insert", "path": "/memories/nope.md", "insert_line": 0, "insert_text": "x"},
     "Error: The path /memories/nope.md does not exist"),
    ({"command": "delete", "path": "/memories/nope.md"},
     "Error: The path /memories/nope.md does not exist"),
    ({"command": "delete", "path": "/memories"},
     "Error: Cannot delete the /memories directory itself"),
    ({"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/kept.md"},
     "Successfully renamed /memories/notes.md to /memories/kept.md"),
    ({"command": "rename", "old_path": "/memories/nope.md", "new_path": "/memories/kept.md"},
     "Error: The path /memories/nope.md does not exist"),
    ({"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/other.md"},
     "Error: The destination /memories/other.md already exists"),
    ({"command": "view", "path": "/etc/passwd"},
     "Error: Path must start with /memories, got: /etc/passwd"),
    ({"command": "forget", "path": "/memories/notes.md"},
     "Error: Unknown command: forget. The memory tool's commands are view, create, "
     "str_replace, insert, delete and rename."),
]


@pytest.mark.parametrize(("tool_input", "expected"), DOCUMENTED,
                         ids=[f"{i['command']}-{n}" for n, (i, _) in enumerate(DOCUMENTED)])
def test_each_command_answers_with_the_documented_string(tool: MemoryToolHandler,
                                                         tool_input: dict[str, Any],
                                                         expected: str) -> None:
    assert tool.handle(tool_input) == expected


def test_view_of_a_file_numbers_every_line_in_six_columns(tool: MemoryToolHandler) -> None:
    lines = NOTES.splitlines()
    expected = [HEADER] + [f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1)]
    assert tool.handle({"command": "view", "path": "/memories/notes.md"}) == "\n".join(expected)


def test_view_of_the_folder_lists_memories_and_the_index_with_sizes(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    sizes = {n: len((store.directory / n).read_bytes())
             for n in ("MEMORY.md", "notes.md", "other.md")}
    total = sum(sizes.values())
    shown_total = f"{total}B" if total < 1024 else f"{total / 1024:.1f}K"
    assert tool.handle({"command": "view", "path": "/memories"}) == "\n".join([
        "Here're the files and directories up to 2 levels deep in /memories, excluding "
        "hidden items and node_modules:",
        f"{shown_total}\t/memories",
        *(f"{sizes[n]}B\t/memories/{n}" for n in ("MEMORY.md", "notes.md", "other.md")),
    ])


def test_view_of_the_folder_hides_archived_hidden_and_non_markdown_files(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "delete", "path": "/memories/other.md"})
    write_memory(store.directory, ".draft.md", "hidden")
    write_memory(store.directory, "notes.txt", "not a memory")
    listed = tool.handle({"command": "view", "path": "/memories/"}).splitlines()[2:]
    assert [line.split("\t")[1] for line in listed] == ["/memories/MEMORY.md",
                                                        "/memories/notes.md"]


@pytest.mark.parametrize(("size", "shown"), [(0, "0B"), (1023, "1023B"), (1536, "1.5K"),
                                             (2 * 1024 * 1024, "2.0M")])
def test_sizes_are_human_readable(size: int, shown: str) -> None:
    assert human_size(size) == shown


def test_view_of_the_index_shows_it(store: MemoryStore, tool: MemoryToolHandler) -> None:
    shown = tool.handle({"command": "view", "path": "/memories/MEMORY.md"})
    assert shown.splitlines()[0] == "Here's the content of /memories/MEMORY.md with line numbers:"
    assert "\t- [notes](notes.md) — meeting notes" in shown


def test_view_counts_a_read_in_the_access_ledger(store: MemoryStore,
                                                 tool: MemoryToolHandler) -> None:
    tool.handle({"command": "view", "path": "/memories/notes.md"})
    assert ledger.load(store.state_dir)[0]["notes.md"].read.count == 1


@pytest.mark.parametrize("view_range", [[0, 3], [11, 12], [5, 4], [1], "1-3", [True, 2]])
def test_view_refuses_an_impossible_range_and_says_what_works(
        tool: MemoryToolHandler, view_range: object) -> None:
    answer = tool.handle({"command": "view", "path": "/memories/notes.md",
                          "view_range": view_range})
    assert answer.startswith("Error:") and "view_range" in answer


# -- create --------------------------------------------------------------------------

def test_create_keeps_a_text_with_frontmatter_byte_for_byte(store: MemoryStore,
                                                            tool: MemoryToolHandler) -> None:
    text = "---\nname: plan\ndescription: the plan\ntype: project\n---\nStep one.\r\n"
    answer = tool.handle({"command": "create", "path": "/memories/plan.md", "file_text": text})
    assert answer == "File created successfully at: /memories/plan.md"
    assert (store.directory / "plan.md").read_bytes() == text.encode()
    assert "- [plan](plan.md) — the plan" in index(store)


def test_create_gives_a_plain_text_frontmatter_and_an_index_line(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    text = "# Coffee\n\nThe user takes it black.\n"
    answer = tool.handle({"command": "create", "path": "/memories/user_coffee.md",
                          "file_text": text})
    assert answer == ("File created successfully at: /memories/user_coffee.md\n"
                      "sagemem gave it a frontmatter block (name, description, type, "
                      "updated) so it can be found, and keeps that block out of view: view, "
                      "str_replace and insert see the text as written here, with its line "
                      "numbers, and the description, made from its first line, follows it.")
    assert on_disk(store, "user_coffee.md") == GENERATED + text
    memory = store.get("user_coffee.md")
    assert (memory.type, memory.description, memory.problems) == ("user", "Coffee", ())
    assert "- [user_coffee](user_coffee.md) — Coffee" in index(store)


@pytest.mark.parametrize(("text", "why"), [
    ("---\nname: Tea\ndescription: oolong every morning\ntype: user\n\nOolong.\n",
     "the block would never be closed with a `---` line"),
    ("---\nname: Tea: oolong\ntype: user\n---\nOolong.\n",
     "the block would not parse as YAML ("),  # then the parser's words
    ("---\n- tea\n---\nOolong.\n",
     "the block would not be a mapping of `key: value` fields"),
])
def test_create_refuses_a_text_whose_frontmatter_is_broken(
        store: MemoryStore, tool: MemoryToolHandler, text: str, why: str) -> None:
    """As an edit must leave a memory, so must a create: an unclosed block made the
    frontmatter body (no description, the default type), and nothing said so."""
    answer = tool.handle({"command": "create", "path": "/memories/user_tea.md",
                          "file_text": text})
    assert answer.startswith("Error: Nothing was created, the frontmatter of "
                             f"/memories/user_tea.md is broken: {why}")
    assert answer.endswith(". Close the `---` block with a `---` line and keep it valid "
                           "YAML, or leave the block out and sagemem adds one.")
    assert not (store.directory / "user_tea.md").exists()
    assert "user_tea" not in index(store)


def test_create_without_a_type_prefix_reads_as_the_default_type(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "create", "path": "/memories/ideas.md", "file_text": "Ideas\n"})
    assert store.get("ideas.md").type == "reference"


@pytest.mark.parametrize(("text", "description"), [
    ("", ""), ("\n\n- **Deploy** on Fridays\n", "**Deploy** on Fridays"),
    ("x " * 100, ("x " * 75).strip() + "…"), ("---\n", ""),
])
def test_a_description_is_the_first_line_of_words(text: str, description: str) -> None:
    assert describe(text) == description


def test_create_refuses_a_name_taken_in_another_case(tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "create", "path": "/memories/NOTES.md", "file_text": "x"})
    assert answer == "Error: File /memories/NOTES.md already exists"


def test_create_refuses_a_reserved_name(tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "create", "path": "/memories/session-log.md",
                          "file_text": "x"})
    assert answer.startswith("Error: /memories/session-log.md: a reserved name")


# -- str_replace and insert ------------------------------------------------------------

def test_str_replace_changes_only_the_match(store: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "str_replace", "path": "/memories/notes.md",
                 "old_str": "- next steps\n", "new_str": ""})
    assert on_disk(store, "notes.md") == NOTES.replace("- next steps\n", "")


def test_str_replace_of_the_description_carries_over_to_the_index_line(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "str_replace", "path": "/memories/notes.md",
                 "old_str": "description: meeting notes", "new_str": "description: minutes"})
    assert "- [notes](notes.md) — minutes" in index(store)


def test_str_replace_refuses_an_empty_old_str(tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "str_replace", "path": "/memories/notes.md",
                          "old_str": "", "new_str": "x"})
    assert answer == ("Error: `old_str` is empty; give the exact text to replace (copy it "
                      "from view), or use insert to add text.")


def test_insert_puts_lines_after_the_numbered_line(store: MemoryStore,
                                                   tool: MemoryToolHandler) -> None:
    tool.handle({"command": "insert", "path": "/memories/notes.md", "insert_line": 7,
                 "insert_text": "- agenda"})
    assert on_disk(store, "notes.md") == NOTES.replace("Meeting notes:\n",
                                                       "Meeting notes:\n- agenda\n")


def test_insert_takes_the_text_editors_new_str_too(store: MemoryStore,
                                                   tool: MemoryToolHandler) -> None:
    tool.handle({"command": "insert", "path": "/memories/notes.md", "insert_line": 10,
                 "new_str": "- last\n"})
    assert on_disk(store, "notes.md") == NOTES + "- last\n"


@pytest.mark.parametrize(("text", "line", "insert", "result"), [
    ("", 0, "a", "a\n"),
    ("a\nb", 2, "c", "a\nb\nc\n"),
    ("a\nb", 1, "c\n", "a\nc\nb"),
    ("a\r\nb\r\n", 1, "c", "a\r\nc\r\nb\r\n"),
    ("\ufeffa\n", 0, "z", "\ufeffz\na\n"),
])
def test_insert_keeps_the_files_line_ends(text: str, line: int, insert: str,
                                          result: str) -> None:
    assert insert_at(text, line, insert) == result


# -- the model edits what it wrote; the frontmatter stays a memory's ---------------------

COFFEE = "# Coffee\n\nThe user takes it black, no sugar.\n"
COFFEE_HEADER = "Here's the content of /memories/user_coffee.md with line numbers:"


@pytest.fixture
def coffee(store: MemoryStore, tool: MemoryToolHandler) -> MemoryStore:
    """``user_coffee.md`` created through the tool from a plain text (no frontmatter)."""
    tool.handle({"command": "create", "path": "/memories/user_coffee.md", "file_text": COFFEE})
    return store


def test_a_plain_create_is_viewed_as_written_with_its_own_line_numbers(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    assert tool.handle({"command": "view", "path": "/memories/user_coffee.md"}) == (
        f"{COFFEE_HEADER}\n     1\t# Coffee\n     2\t\n     3\tThe user takes it black, "
        "no sugar.")
    assert tool.handle({"command": "view", "path": "/memories/user_coffee.md",
                        "view_range": [3, -1]}) == \
        f"{COFFEE_HEADER}\n     3\tThe user takes it black, no sugar."
    assert on_disk(coffee, "user_coffee.md") == GENERATED + COFFEE  # kept on disk


def test_insert_at_line_0_of_a_plain_create_lands_below_its_frontmatter(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "insert", "path": "/memories/user_coffee.md",
                          "insert_line": 0, "insert_text": "Asked on 2026-11-30."})
    assert answer == "The file /memories/user_coffee.md has been edited."
    memory = coffee.get("user_coffee.md")
    assert memory.body == "Asked on 2026-11-30.\n" + COFFEE
    assert (memory.has_frontmatter, memory.type, memory.problems) == (True, "user", ())
    assert tool.handle({"command": "view", "path": "/memories/user_coffee.md",
                        "view_range": [1, 2]}) == \
        f"{COFFEE_HEADER}\n     1\tAsked on 2026-11-30.\n     2\t# Coffee"


def test_insert_line_range_counts_only_the_lines_the_model_wrote(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "insert", "path": "/memories/user_coffee.md",
                          "insert_line": 4, "insert_text": "x"})
    assert answer == ("Error: Invalid `insert_line` parameter: 4. It should be within the "
                      "range of lines of the file: [0, 3]")
    tool.handle({"command": "insert", "path": "/memories/user_coffee.md", "insert_line": 3,
                 "insert_text": "Decaf after 4 pm."})
    assert on_disk(coffee, "user_coffee.md") == GENERATED + COFFEE + "Decaf after 4 pm.\n"


def test_str_replace_of_a_word_in_the_first_line_is_unique_and_numbered_as_written(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "str_replace", "path": "/memories/user_coffee.md",
                          "old_str": "Coffee", "new_str": "Coffee and tea"})
    assert answer == (f"{EDITED}\n     1\t# Coffee and tea\n     2\t\n"
                      "     3\tThe user takes it black, no sugar.")
    memory = coffee.get("user_coffee.md")
    assert memory.body == COFFEE.replace("Coffee", "Coffee and tea")
    # the description sagemem made from the first line follows it, and so does the index
    assert memory.description == "Coffee and tea"
    assert "- [user_coffee](user_coffee.md) — Coffee and tea" in index(coffee)


def test_a_text_emptied_of_words_keeps_its_description_and_index_line(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "str_replace", "path": "/memories/user_coffee.md",
                 "old_str": COFFEE, "new_str": ""})
    tool.handle({"command": "insert", "path": "/memories/user_coffee.md", "insert_line": 0,
                 "insert_text": "Tea now."})
    assert coffee.get("user_coffee.md").description == "Tea now."
    assert "- [user_coffee](user_coffee.md) — Tea now.\n" in index(coffee)


def test_a_description_someone_reworded_stays_when_the_first_line_changes(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    memory = coffee.get("user_coffee.md")
    coffee.write("user_coffee.md", memory.text.replace("description: Coffee",
                                                       "description: how they take it"),
                 memory.revision)
    tool.handle({"command": "str_replace", "path": "/memories/user_coffee.md",
                 "old_str": "# Coffee", "new_str": "# Drinks"})
    memory = coffee.get("user_coffee.md")
    assert (memory.description, memory.body) == ("how they take it",
                                                 COFFEE.replace("Coffee", "Drinks"))
    shown = tool.handle({"command": "view", "path": "/memories/user_coffee.md"})
    assert "description" not in shown  # a person's edit of the block leaves it hidden


def test_a_merge_marker_is_reported_at_the_models_line(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "insert", "path": "/memories/user_coffee.md",
                          "insert_line": 1, "insert_text": "<<<<<<< HEAD"})
    assert answer.startswith("Error: the new text of /memories/user_coffee.md holds a git "
                             "merge marker at line 2;")


def test_a_renamed_plain_create_is_still_viewed_as_written(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "rename", "old_path": "/memories/user_coffee.md",
                 "new_path": "/memories/user_drinks.md"})
    assert tool.handle({"command": "view", "path": "/memories/user_drinks.md",
                        "view_range": [1, 1]}) == \
        "Here's the content of /memories/user_drinks.md with line numbers:\n     1\t# Coffee"


def test_a_deleted_plain_create_leaves_no_hiding_for_the_next_file_of_its_name(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    tool.handle({"command": "delete", "path": "/memories/user_coffee.md"})
    write_memory(coffee.directory, "user_coffee.md", GENERATED + "A person's own.\n")
    shown = tool.handle({"command": "view", "path": "/memories/user_coffee.md"})
    assert "     1\t---\n     2\tname: user_coffee" in shown


def test_a_plain_create_whose_block_a_person_removed_is_viewed_whole(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    write_memory(coffee.directory, "user_coffee.md", "---\nname: user_coffee\n" + COFFEE)
    shown = tool.handle({"command": "view", "path": "/memories/user_coffee.md"})
    assert shown.splitlines()[1:3] == ["     1\t---", "     2\tname: user_coffee"]


def test_a_malformed_record_of_hidden_blocks_is_one_error_line(
        coffee: MemoryStore, tool: MemoryToolHandler) -> None:
    (coffee.state_dir / "memory-tool.json").write_text("{not json", encoding="utf-8")
    answer = tool.handle({"command": "view", "path": "/memories/user_coffee.md"})
    assert answer.startswith("Error: ") and "memory-tool.json: not valid JSON" in answer
    assert "fix or remove the file" in answer and "\n" not in answer


def test_frontmatter_the_model_wrote_is_its_to_view_whole(store: MemoryStore,
                                                          tool: MemoryToolHandler) -> None:
    # the very block sagemem would generate, but written by the model: it is the model's
    tool.handle({"command": "create", "path": "/memories/user_coffee.md",
                 "file_text": GENERATED + COFFEE})
    shown = tool.handle({"command": "view", "path": "/memories/user_coffee.md"})
    assert shown.splitlines()[1:4] == ["     1\t---", "     2\tname: user_coffee",
                                       "     3\tdescription: Coffee"]


BREAKS = "the edit would break the frontmatter of /memories/notes.md"
KEEP = "Keep the `---` block first in the file, closed and valid YAML"


@pytest.mark.parametrize(("tool_input", "expected"), [
    ({"command": "str_replace", "path": "/memories/notes.md",
      "old_str": "  type: project\n---\n", "new_str": "  type: project\n"},
     f"No replacement was performed, {BREAKS}: the block would never be closed with a "
     f"`---` line. {KEEP}, and edit below it."),
    ({"command": "str_replace", "path": "/memories/notes.md",
      "old_str": "description: meeting notes", "new_str": "description: [meeting notes"},
     f"No replacement was performed, {BREAKS}: the block would not parse as YAML ({{YAML}}). "
     f"{KEEP}, and edit below it."),
    ({"command": "str_replace", "path": "/memories/notes.md",
      "old_str": "---\nname: notes\n", "new_str": "name: notes\n"},
     f"No replacement was performed, {BREAKS}: the `---` line that opens it would no "
     f"longer be line 1. {KEEP}, and edit below it."),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": 0,
      "insert_text": "# Notes"},
     f"Error: Nothing was inserted, {BREAKS}: the `---` line that opens it would no longer "
     f"be line 1. {KEEP}, and insert below it."),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": 2,
      "insert_text": "just some words"},
     f"Error: Nothing was inserted, {BREAKS}: the block would not parse as YAML ({{YAML}}). "
     f"{KEEP}, and insert below it."),
])
def test_an_edit_that_would_break_the_frontmatter_is_refused(
        store: MemoryStore, tool: MemoryToolHandler, tool_input: dict[str, Any],
        expected: str) -> None:
    # {YAML}: PyYAML's own words for the error, which are its to change
    pattern = re.escape(expected).replace(re.escape("{YAML}"), r"[^\n]+")
    assert re.fullmatch(pattern, tool.handle(tool_input))
    assert on_disk(store, "notes.md") == NOTES


def test_an_edit_of_its_own_frontmatter_that_still_parses_is_kept(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "insert", "path": "/memories/notes.md", "insert_line": 3,
                          "insert_text": "tags: [meetings]"})
    assert answer == "The file /memories/notes.md has been edited."
    assert store.get("notes.md").tags == ("meetings",)


def test_a_file_without_frontmatter_may_gain_one_but_not_a_broken_one(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    write_memory(store.directory, "plain.md", "Just text.\n")
    refused = tool.handle({"command": "insert", "path": "/memories/plain.md",
                           "insert_line": 0, "insert_text": "---\nname: plain"})
    assert refused.startswith("Error: Nothing was inserted, the edit would break the "
                              "frontmatter of /memories/plain.md: the block would never be "
                              "closed")
    assert on_disk(store, "plain.md") == "Just text.\n"
    tool.handle({"command": "insert", "path": "/memories/plain.md", "insert_line": 0,
                 "insert_text": "---\ndescription: a plain memory\n---"})
    assert store.get("plain.md").description == "a plain memory"


# -- delete and rename -------------------------------------------------------------------

def test_delete_archives_the_memory_and_drops_its_index_line(store: MemoryStore,
                                                             tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "delete", "path": "/memories/notes.md"})
    assert answer == ("Successfully deleted /memories/notes.md (sagemem archived it rather "
                      "than erase it: it is out of /memories, and a person can bring it "
                      "back with `sagemem restore notes.md`)")
    assert not (store.directory / "notes.md").exists()
    assert (store.archive_dir / "notes.md").read_text(encoding="utf-8") == NOTES
    assert "notes.md" not in index(store)
    event = read_log(store.state_dir)[0][-1]
    assert (event.action, event.by, event.reason) == ("archive", "memory-tool",
                                                      "deleted through the memory tool")
    assert tool.handle({"command": "view", "path": "/memories/notes.md"}) == \
        "The path /memories/notes.md does not exist. Please provide a valid path."


def test_delete_refuses_a_locked_memory(store: MemoryStore, tool: MemoryToolHandler) -> None:
    lock_memory(store, "notes")
    answer = tool.handle({"command": "delete", "path": "/memories/notes.md"})
    assert answer == ("Error: /memories/notes.md is locked (a person protects it with "
                      "`sagemem lock`); nothing was deleted. Leave it as it is, or ask the "
                      "user to unlock it.")
    assert on_disk(store, "notes.md") == NOTES


def test_rename_moves_the_file_and_retargets_its_index_line(store: MemoryStore,
                                                            tool: MemoryToolHandler) -> None:
    tool.handle({"command": "rename", "old_path": "/memories/notes.md",
                 "new_path": "/memories/project notes.md"})
    assert on_disk(store, "project notes.md") == NOTES
    assert not (store.directory / "notes.md").exists()
    assert "- [notes](<project notes.md>) — meeting notes" in index(store)


def test_rename_never_overwrites(store: MemoryStore, tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "rename", "old_path": "/memories/notes.md",
                          "new_path": "/memories/OTHER.md"})
    assert answer == "Error: The destination /memories/OTHER.md already exists"
    assert (on_disk(store, "notes.md"), on_disk(store, "other.md")) == (NOTES, OTHER)


def test_rename_to_the_same_name_in_another_case_is_refused(tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "rename", "old_path": "/memories/notes.md",
                          "new_path": "/memories/Notes.md"})
    assert answer.startswith("Error: /memories/Notes.md names the same memory")


def test_rename_refuses_a_locked_memory(store: MemoryStore, tool: MemoryToolHandler) -> None:
    lock_memory(store, "notes")
    answer = tool.handle({"command": "rename", "old_path": "/memories/notes.md",
                          "new_path": "/memories/kept.md"})
    assert answer == ("Error: /memories/notes.md is locked (a person protects it with "
                      "`sagemem lock`); nothing was renamed. Leave it as it is, or ask the "
                      "user to unlock it.")
    assert on_disk(store, "notes.md") == NOTES


def test_rename_moves_the_file_back_when_the_index_cannot_change(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*_: object) -> None:
        raise WriteFailed(store.directory / "MEMORY.md", "No space left on device")

    before = index(store)
    monkeypatch.setattr(store, "update_index", full_disk)
    with pytest.raises(WriteFailed):
        rename_memory(store, "notes.md", "kept.md")
    assert on_disk(store, "notes.md") == NOTES and not (store.directory / "kept.md").exists()
    assert index(store) == before


def test_retarget_keeps_title_hook_and_every_other_byte() -> None:
    text = "# Index\r\n- [Notes](./notes.md) — hook\r\n- [Other](other.md)\r\nnotes.md\r\n"
    assert retarget_entries(text, "notes.md", "kept.md") == \
        "# Index\r\n- [Notes](kept.md) — hook\r\n- [Other](other.md)\r\nnotes.md\r\n"


# -- MEMORY.md is sagemem's ---------------------------------------------------------------

@pytest.mark.parametrize("tool_input", [
    {"command": "create", "path": "/memories/MEMORY.md", "file_text": "x"},
    {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "# Memory",
     "new_str": "x"},
    {"command": "insert", "path": "/memories/memory.md", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "/memories/MEMORY.md"},
    {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": "/memories/x.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/MEMORY.md"},
])
def test_the_index_is_read_only_through_the_tool(store: MemoryStore, tool: MemoryToolHandler,
                                                 tool_input: dict[str, Any]) -> None:
    before = index(store)
    answer = tool.handle(tool_input)
    assert answer.startswith("Error: /memories/") and "read-only through this tool" in answer
    assert index(store) == before and on_disk(store, "notes.md") == NOTES


# -- paths: confined to the folder ---------------------------------------------------------

TRAVERSALS = [
    "/memories/../secret.md", "/memories/a/../../secret.md", "/memories/./notes.md",
    "/memories//notes.md", "/memories/%2e%2e%2fsecret.md", "/memories/..%2fsecret.md",
    "/memories/%2E%2E/secret.md", "/memories\\..\\secret.md", "/memories/..\\secret.md",
    "/memoriesx/secret.md", "memories/secret.md", "/secret.md", "~/secret.md", "",
    "/memories/secret.md\x00.txt", "/memories/\u202edm.terces.md", "/memories/.secret.md",
    "/memories/archive/notes.md", "/memories/ARCHIVE", "/memories/sub/secret.md",
    "/memories/secret.txt", "/memories/" + "x" * 300 + ".md", "/memories/..",
]


@pytest.mark.parametrize("path", TRAVERSALS)
@pytest.mark.parametrize("command", ["view", "create", "delete"])
def test_a_path_outside_the_folders_top_level_is_refused(tmp_path: Path,
                                                         tool: MemoryToolHandler,
                                                         command: str, path: str) -> None:
    (tmp_path / "secret.md").write_text("outside", encoding="utf-8")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    answer = tool.handle({"command": command, "path": path, "file_text": "pwned"})
    assert answer.startswith("Error:") and "pwned" not in answer
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "secret.md").read_text(encoding="utf-8") == "outside"


def test_a_subdirectory_path_is_refused_with_the_flat_name_to_use(
        tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "create", "path": "/memories/projects/alpha.md",
                          "file_text": "x"})
    assert answer == ("Error: /memories/projects/alpha.md: sagemem's memory folder is flat, "
                      "with no subdirectories; name the file /memories/projects_alpha.md "
                      "instead")


def test_a_non_markdown_name_is_refused_with_the_name_to_use(tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "create", "path": "/memories/notes.xml", "file_text": "x"})
    assert answer == ("Error: /memories/notes.xml: sagemem keeps memories as Markdown files; "
                      "name it /memories/notes.md")


# -- symlinks are never followed -----------------------------------------------------------

@pytest.fixture
def linked(store: MemoryStore, tmp_path: Path) -> Path:
    """``link.md`` in the folder pointing at a file outside it."""
    outside = tmp_path / "outside.md"
    outside.write_text(NOTES, encoding="utf-8")
    (store.directory / "link.md").symlink_to(outside)
    return outside


@pytest.mark.parametrize("tool_input", [
    {"command": "view", "path": "/memories/link.md"},
    {"command": "create", "path": "/memories/link.md", "file_text": "pwned"},
    {"command": "str_replace", "path": "/memories/link.md", "old_str": "next steps",
     "new_str": "pwned"},
    {"command": "insert", "path": "/memories/link.md", "insert_line": 0, "insert_text": "pwned"},
    {"command": "delete", "path": "/memories/link.md"},
    {"command": "rename", "old_path": "/memories/link.md", "new_path": "/memories/moved.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/link.md"},
])
def test_a_symlink_in_the_folder_is_never_read_written_or_moved(
        store: MemoryStore, tool: MemoryToolHandler, linked: Path,
        tool_input: dict[str, Any]) -> None:
    answer = tool.handle(tool_input)
    assert answer.startswith("Error:") and "next steps" not in answer
    assert linked.read_text(encoding="utf-8") == NOTES
    assert (store.directory / "link.md").is_symlink() and on_disk(store, "notes.md") == NOTES
    assert not (store.directory / "moved.md").exists()


def test_the_listing_leaves_out_a_symlink(tool: MemoryToolHandler, linked: Path) -> None:
    assert "link.md" not in tool.handle({"command": "view", "path": "/memories"})


# -- concurrent writers: refused, recorded, nothing lost -----------------------------------

def test_a_change_between_read_and_write_is_refused_and_recorded(
        store: MemoryStore, tool: MemoryToolHandler, monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = NOTES.replace("- timeline\n", "- their timeline\n")
    write = store.write

    def racing_write(*args: Any, **kwargs: Any) -> Any:
        write_memory(store.directory, "notes.md", theirs)  # an editor saves meanwhile
        return write(*args, **kwargs)

    monkeypatch.setattr(store, "write", racing_write)
    answer = tool.handle({"command": "str_replace", "path": "/memories/notes.md",
                          "old_str": "next steps", "new_str": "my steps"})
    [record] = list_conflicts(store.state_dir)
    assert answer == ("Error: /memories/notes.md changed while this edit was being saved "
                      "(another writer saved it first); nothing was written. View "
                      "/memories/notes.md again and redo the edit. Both versions are kept "
                      f"in sagemem conflict {record.id}.")
    assert on_disk(store, "notes.md") == theirs
    assert record.writer == "memory-tool"
    assert record.side("mine")["text"] == NOTES.replace("next steps", "my steps")
    assert record.side("disk")["text"] == theirs


def test_a_create_racing_another_writer_is_refused_and_recorded(
        store: MemoryStore, tool: MemoryToolHandler, monkeypatch: pytest.MonkeyPatch) -> None:
    write = store.write

    def racing_write(*args: Any, **kwargs: Any) -> Any:
        write_memory(store.directory, "new.md", "theirs\n")
        return write(*args, **kwargs)

    monkeypatch.setattr(store, "write", racing_write)
    answer = tool.handle({"command": "create", "path": "/memories/new.md",
                          "file_text": "---\ndescription: mine\n---\n"})
    [record] = list_conflicts(store.state_dir)
    assert answer == f"Error: File /memories/new.md already exists Both versions are kept " \
                     f"in sagemem conflict {record.id}."
    assert on_disk(store, "new.md") == "theirs\n"


def test_a_merge_marker_in_the_new_text_is_refused(store: MemoryStore,
                                                   tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "insert", "path": "/memories/notes.md", "insert_line": 10,
                          "insert_text": "<<<<<<< HEAD"})
    assert answer.startswith("Error: the new text of /memories/notes.md holds a git merge "
                             "marker at line 11")
    assert on_disk(store, "notes.md") == NOTES


# -- bad input never raises ----------------------------------------------------------------

@pytest.mark.parametrize(("tool_input", "expected"), [
    ({}, "Error: Unknown command: None. The memory tool's commands are view, create, "
         "str_replace, insert, delete and rename."),
    ({"command": 3}, "Error: Unknown command: 3. The memory tool's commands are view, "
                     "create, str_replace, insert, delete and rename."),
    ({"command": "view"}, "Error: view needs `path`, a path under /memories "
                          "(e.g. /memories/notes.md)"),
    ({"command": "create", "path": "/memories/a.md"}, "Error: create needs `file_text`, a string"),
    ({"command": "create", "path": "/memories/a.md", "file_text": b"\xff"},
     "Error: create needs `file_text`, a string"),
    ({"command": "str_replace", "path": "/memories/notes.md", "old_str": "a"},
     "Error: str_replace needs `new_str`, a string"),
    ({"command": "insert", "path": "/memories/notes.md", "insert_line": "2",
      "insert_text": "x"},
     "Error: insert needs `insert_line`, a whole number of lines (0 inserts before the "
     "first line)"),
    ({"command": "rename", "old_path": "/memories/notes.md"},
     "Error: rename needs `new_path`, a path under /memories (e.g. /memories/notes.md)"),
])
def test_a_missing_or_mistyped_parameter_is_an_error_string(tool: MemoryToolHandler,
                                                            tool_input: dict[str, Any],
                                                            expected: str) -> None:
    assert tool.handle(tool_input) == expected


def test_input_that_is_not_an_object_is_an_error_string(tool: MemoryToolHandler) -> None:
    answer = tool.handle(["view", "/memories"])  # type: ignore[arg-type]
    assert answer.startswith("Error: the tool input is an object")


def test_text_that_cannot_be_utf8_is_refused_before_writing(store: MemoryStore,
                                                            tool: MemoryToolHandler) -> None:
    answer = tool.handle({"command": "create", "path": "/memories/bad.md",
                          "file_text": "ok \udcff"})
    assert answer == ("Error: `file_text` holds characters that cannot be stored as UTF-8 "
                      "(a lone surrogate at offset 3); nothing was written.")
    assert not (store.directory / "bad.md").exists()


def test_a_memory_that_is_not_utf8_is_one_error_line(store: MemoryStore,
                                                     tool: MemoryToolHandler) -> None:
    (store.directory / "latin.md").write_bytes(b"caf\xe9\n")
    answer = tool.handle({"command": "view", "path": "/memories/latin.md"})
    assert answer.startswith("Error: cannot read") and "not UTF-8" in answer
    assert "\n" not in answer


def test_a_file_over_the_size_limit_is_never_written(store: MemoryStore,
                                                     tool: MemoryToolHandler) -> None:
    big = "x" * (600 * 1024)
    answer = tool.handle({"command": "create", "path": "/memories/big.md", "file_text": big})
    assert answer.startswith("Error: big.md is ") and "512 KiB limit" in answer
    assert not (store.directory / "big.md").exists()
    answer = tool.handle({"command": "insert", "path": "/memories/notes.md", "insert_line": 10,
                          "insert_text": big})
    assert "512 KiB limit" in answer and on_disk(store, "notes.md") == NOTES


def test_an_unexpected_failure_is_an_error_string_not_a_traceback(
        store: MemoryStore, tool: MemoryToolHandler, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(store, "get", broken)
    answer = tool.handle({"command": "view", "path": "/memories/notes.md"})
    assert answer == ("Error: the memory tool failed unexpectedly (RuntimeError: disk on "
                      "fire second line); view the path again before retrying.")


def test_a_missing_memory_folder_is_one_error_line(tmp_path: Path) -> None:
    tool = MemoryToolHandler(MemoryStore(tmp_path / "none", tmp_path / "state"))
    answer = tool.handle({"command": "view", "path": "/memories"})
    assert answer.startswith("Error: memory directory ") and "\n" not in answer


def test_control_characters_in_a_memory_reach_the_model_written_out(
        store: MemoryStore, tool: MemoryToolHandler) -> None:
    write_memory(store.directory, "ansi.md", "clear \x1b[2J here\u202e\n")
    answer = tool.handle({"command": "view", "path": "/memories/ansi.md"})
    assert answer.endswith("     1\tclear \\x1b[2J here\\u202e")
    assert "\x1b" not in answer


def test_a_name_that_is_not_utf8_is_listed_written_out(store: MemoryStore,
                                                       tool: MemoryToolHandler) -> None:
    os.close(os.open(os.fsencode(store.directory) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY))
    answer = tool.handle({"command": "view", "path": "/memories"})
    assert "/memories/caf\\xe9.md" in answer
    answer.encode("utf-8")  # always encodable


# -- the library surface --------------------------------------------------------------------

def test_the_handler_is_a_lazy_public_name() -> None:
    code = ("import sys, sagemem; assert 'sagemem.memory_tool' not in sys.modules; "
            "from sagemem import MemoryToolHandler; print(MemoryToolHandler.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "sagemem.memory_tool.handler"
