"""The strings the model reads, kept where their sources can be checked in one look.

Claude is trained on the memory tool's documented behaviour, so where a string is
documented it is matched exactly; where the documentation is silent, the string follows
the Anthropic Python SDK's reference backend. Sources, cited per string below:

- [docs]: Anthropic, "Memory tool", section "Tool commands"
  (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool).
- [sdk]: anthropic-sdk-python, ``src/anthropic/lib/tools/_beta_builtin_memory_tool.py``,
  ``BetaLocalFilesystemMemoryTool``.

What sagemem adds (the flat folder, MEMORY.md kept by sagemem, delete as archive,
guarded writes) is said in strings of its own, each starting ``Error:`` as the
documented errors do, and saying what to do instead.
"""

from __future__ import annotations

# [docs] view, "For directories" (the SDK drops " and node_modules").
LISTING_HEADER = ("Here're the files and directories up to 2 levels deep in {path}, "
                  "excluding hidden items and node_modules:")
# [docs] view, "For files"; [sdk] view.
FILE_HEADER = "Here's the content of {path} with line numbers:"
# [docs] view, "Error handling"; [sdk] view.
VIEW_NOT_FOUND = "The path {path} does not exist. Please provide a valid path."
# [docs] create, "Return values"; [sdk] create.
CREATED = "File created successfully at: {path}"
# [docs] create, "Error handling" ([sdk] has it without "Error: ").
ALREADY_EXISTS = "Error: File {path} already exists"
# [docs] str_replace, "Error handling".
REPLACE_NOT_FOUND = "Error: The path {path} does not exist. Please provide a valid path."
# [docs] str_replace, "Error handling"; [sdk] str_replace.
NOT_VERBATIM = ("No replacement was performed, old_str `{old_str}` did not appear verbatim "
                "in {path}.")
# [docs] str_replace, "Error handling"; [sdk] joins the line numbers with ", ".
MULTIPLE = ("No replacement was performed. Multiple occurrences of old_str `{old_str}` in "
            "lines: {lines}. Please ensure it is unique")
# [docs]: "The memory file has been edited." followed by a snippet; the snippet's
# heading is [sdk] str_replace's.
EDITED = ("The memory file has been edited. Here is the snippet showing the change "
          "(with line numbers):")
# [docs] insert, "Return values"; [sdk] insert.
INSERTED = "The file {path} has been edited."
# [docs] insert, "Error handling" (file missing).
INSERT_NOT_FOUND = "Error: The path {path} does not exist"
# [docs] insert, "Error handling" ([sdk]'s wording differs).
INVALID_INSERT_LINE = ("Error: Invalid `insert_line` parameter: {line}. It should be within "
                       "the range of lines of the file: [0, {n_lines}]")
# [docs] delete, "Return values"; [sdk] delete.
DELETED = "Successfully deleted {path}"
# [docs] delete, "Error handling"; also rename's missing source ([docs] rename).
PATH_NOT_FOUND = "Error: The path {path} does not exist"
# [sdk] delete (the docs do not cover deleting the root).
DELETE_ROOT = "Error: Cannot delete the /memories directory itself"
# [docs] rename, "Return values"; [sdk] rename.
RENAMED = "Successfully renamed {old_path} to {new_path}"
# [docs] rename, "Error handling" ([sdk] has it without "Error: ").
DESTINATION_EXISTS = "Error: The destination {new_path} already exists"
# [sdk] _validate_path.
OUTSIDE = "Error: Path must start with /memories, got: {path}"
# [sdk] execute: "Unknown command: ..."; the list of commands is ours.
UNKNOWN_COMMAND = ("Error: Unknown command: {command}. The memory tool's commands are view, "
                   "create, str_replace, insert, delete and rename.")

# -- sagemem's own -------------------------------------------------------------------

ARCHIVED_NOTE = ("(sagemem archived it rather than erase it: it is out of /memories, and a "
                 "person can bring it back with `sagemem restore {file}`)")
FRONTMATTER_NOTE = ("sagemem gave it a frontmatter block (name, description, type, updated) "
                    "so it can be found, and keeps that block out of view: view, "
                    "str_replace and insert see the text as written here, with its line "
                    "numbers, and the description, made from its first line, follows it.")
# An edit whose result would not be a memory any more: the documented refusal's opening
# for str_replace ("No replacement was performed, ..."), an "Error:" line for insert.
REPLACE_BREAKS_FRONTMATTER = ("No replacement was performed, the edit would break the "
                              "frontmatter of {path}: {why}. Keep the `---` block first "
                              "in the file, closed and valid YAML, and edit below it.")
INSERT_BREAKS_FRONTMATTER = ("Error: Nothing was inserted, the edit would break the "
                             "frontmatter of {path}: {why}. Keep the `---` block first in "
                             "the file, closed and valid YAML, and insert below it.")
CREATE_BREAKS_FRONTMATTER = ("Error: Nothing was created, the frontmatter of {path} is "
                             "broken: {why}. Close the `---` block with a `---` line and "
                             "keep it valid YAML, or leave the block out and sagemem adds "
                             "one.")
INDEX_READ_ONLY = ("Error: {path} is the index sagemem keeps in step with the memory files; "
                   "it is read-only through this tool. Create, rename or delete memories "
                   "and their MEMORY.md lines follow.")
LOCKED = ("Error: {path} is locked (a person protects it with `sagemem lock`); nothing was "
          "{done}. Leave it as it is, or ask the user to unlock it.")
STALE = ("Error: {path} changed while this edit was being saved (another writer saved it "
         "first); nothing was written. View {path} again and redo the edit.")
NEAR_DUPLICATE = ("Error: {path} would repeat {other} (titled {title}, {how}); nothing "
                  "was written. View {other} and edit it, or create this memory under a "
                  "name that says how it differs.")
MERGE_MARKER = ("Error: the new text of {path} holds a git merge marker at line {line}; "
                "nothing was written. Resolve the merge in the text and try again.")
EMPTY_OLD_STR = ("Error: `old_str` is empty; give the exact text to replace (copy it from "
                 "view), or use insert to add text.")
NOT_TEXT = ("Error: `{key}` holds characters that cannot be stored as UTF-8 (a lone "
            "surrogate at offset {offset}); nothing was written.")
UNEXPECTED = ("Error: the memory tool failed unexpectedly ({problem}); view the path again "
              "before retrying.")
