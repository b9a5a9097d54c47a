"""Find the examples in README.md and docs/: fenced blocks, console commands, markers.

The convention is docs/contributing.md's "Examples are tests": a ```console block is a
shell session (``$ `` lines are commands, the lines after one its output, a transcript),
```pycon blocks are doctests, ```python blocks scripts; a ```sh/bash/shell block is a
console block or says, in ``<!-- not-run: REASON -->``, what it needs; every other
language is a format shown, never run. This module only parses; ``doc_examples.py`` runs
what it finds, ``test_docs_examples.py`` holds the pages to both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RUNNABLE = ("console", "pycon", "python")
SHELL = ("sh", "bash", "shell")
# Languages of blocks that show a format or an output: never run, never flagged. A block
# in any other language (``py``, ``zsh``, none at all) would hide an example from the
# tests, so it is reported.
FORMATS = ("json", "jsonl", "yaml", "toml", "text", "markdown", "diff", "ini")
ELISIONS = ("...", "…")
OUTPUT_HEAD_LINES = 20
# README's blocks that .ci/run reads and runs itself (its test command, the quick start):
# running them here too would build a venv inside the test run.
CI_MARKERS = {"<!-- test-command -->": "test-command", "<!-- quick-start -->": "quick-start"}
CI_MARKED_PAGE = "README.md"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not-run\b:?(?P<reason>.*?)-->$")
# A here-document (``cat > q.jsonl <<'EOF'``): its lines, up to the word, are the command's
# input as a user pastes them, not shown output. Not ``<<<`` (a here-string) nor ``$((1 << 2))``.
_HEREDOC = re.compile(r"(?<!<)<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it opens, its language, its text and the line above it."""

    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str  # the content, the fence's indent stripped
    before: str  # the nearest non-blank line above the fence, stripped ("" at the top)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def not_run(self) -> str | None:
        """The reason a ``<!-- not-run: REASON -->`` above gives ("" for none), None unmarked."""
        marker = _NOT_RUN.match(self.before)
        return marker["reason"].strip() if marker else None

    @property
    def skip_reason(self) -> str | None:
        """Why this block is not run here, or None when the convention runs (or ignores) it."""
        if self.not_run is not None:
            return f"not-run: {self.not_run}"
        if self.page == CI_MARKED_PAGE and self.before in CI_MARKERS:
            return f"{CI_MARKERS[self.before]}: run by .ci/run itself"
        return None

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE and self.skip_reason is None


@dataclass(frozen=True)
class Command:
    """A ``$ `` line of a console block (continuations joined) and the output it shows."""

    line: int  # 1-based page line of the ``$ `` line
    text: str
    shown: tuple[str, ...]

    @property
    def checked(self) -> tuple[str, ...]:
        """The shown lines that must occur in the output: stripped, blanks and elisions out."""
        lines = (line.strip() for line in self.shown)
        return tuple(line for line in lines if line and line not in ELISIONS)


@dataclass(frozen=True)
class Problem:
    """One way a page breaks the convention, with what a page owner needs to fix it."""

    where: str  # page:line
    message: str
    command: str = ""
    output: str = ""
    tail: bool = False  # a script's traceback is at the end of its output, a command's cause first

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}"
        if self.command:
            text += f"\n  command: {self.command}"
        if self.output:
            text += self._excerpt()
        return text

    def _excerpt(self) -> str:
        lines = self.output.splitlines()
        shown = lines[-OUTPUT_HEAD_LINES:] if self.tail else lines[:OUTPUT_HEAD_LINES]
        which = "last" if self.tail else "first"
        return f"\n  output ({which} lines):\n" + "\n".join(f"    | {line}" for line in shown)


def parse_blocks(text: str, page: str) -> list[Block]:
    """Every fenced block of a page; a fence inside another fence is content, not a block."""
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None or not _valid_info(opening):
            index += 1
            continue
        end = _closing_line(lines, index, opening)
        blocks.append(_block(lines, index, end, opening, page))
        index = end + 1
    return blocks


def _valid_info(opening: re.Match[str]) -> bool:
    # CommonMark: a backtick fence's info string may not contain a backtick (``` `x` ```
    # on one line is inline code, not a fence).
    return not (opening["fence"].startswith("`") and "`" in opening["info"])


def _closing_line(lines: list[str], start: int, opening: re.Match[str]) -> int:
    """The index of the fence closing the block opened at ``start`` (the end if unclosed)."""
    char, size = opening["fence"][0], len(opening["fence"])
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= size:
            return index
    return len(lines)


def _block(lines: list[str], start: int, end: int, opening: re.Match[str], page: str) -> Block:
    indent = len(opening["indent"])
    content = [_dedent(line, indent) for line in lines[start + 1 : end]]
    info = opening["info"].strip()
    lang = info.split()[0].lower().lstrip("{.").rstrip("}") if info else ""
    return Block(page, start + 1, lang, "\n".join(content), _line_above(lines, start))


def _line_above(lines: list[str], start: int) -> str:
    """The nearest non-blank line above ``start``; a comment wrapped over lines, joined."""
    above = [line.strip() for line in lines[:start]]
    while above and not above[-1]:
        above.pop()
    if not above:
        return ""
    end = len(above) - 1
    if above[end].endswith("-->") and "<!--" not in above[end]:
        # A long not-run reason wrapped to the line length: walk back to where it opens.
        begin = next((i for i in range(end, -1, -1) if "<!--" in above[i]), end)
        return " ".join(line for line in above[begin : end + 1] if line)
    return above[end]


def _dedent(line: str, indent: int) -> str:
    """Strip up to the fence's indent (a fence inside a list item is indented with it)."""
    cut = 0
    while cut < indent and cut < len(line) and line[cut] in " \t":
        cut += 1
    return line[cut:]


def parse_console(block: Block) -> tuple[list[Command], list[Problem]]:
    """A console block's commands with their shown output, and what is malformed in it."""
    commands: list[Command] = []
    problems: list[Problem] = []
    lines = block.text.splitlines()
    index = 0
    while index < len(lines):
        line_no = block.line + 1 + index
        if lines[index].startswith("$ "):
            try:
                command, index = _command_at(lines, index, line_no)
            except UnterminatedHeredoc as heredoc:
                problems.append(Problem(f"{block.page}:{line_no}",
                                        f"here-document never closed by {heredoc}"))
                break
            commands.append(command)
            continue
        if lines[index].strip():
            problems.append(Problem(f"{block.page}:{line_no}", "text before the first `$ ` line"))
        index += 1
    if not any(command.checked for command in commands):
        problems.append(Problem(block.where, "console block shows no output line to check"))
    return commands, problems


def _command_at(lines: list[str], index: int, line_no: int) -> tuple[Command, int]:
    """The command at ``lines[index]`` with the output shown up to the next ``$ ``; next index."""
    text, index = _joined_command(lines, index)
    shown: list[str] = []
    while index < len(lines) and not lines[index].startswith("$ "):
        shown.append(lines[index])
        index += 1
    return Command(line_no, text, tuple(shown)), index


def _joined_command(lines: list[str], index: int) -> tuple[str, int]:
    """The command at ``lines[index]`` joined with its `` \\`` continuations; the next index."""
    parts = [lines[index][2:]]
    index += 1
    while parts[-1].endswith(" \\") and index < len(lines):
        parts.append(lines[index])
        index += 1
    for _, word in _HEREDOC.findall("\n".join(parts)):
        while index < len(lines):
            parts.append(lines[index])
            index += 1
            if parts[-1].strip() == word:
                break
        else:
            raise UnterminatedHeredoc(word)
    return "\n".join(parts), index


class UnterminatedHeredoc(ValueError):
    """A here-document whose closing word never comes: it would swallow the block."""


def shell_block_problems(blocks: list[Block]) -> list[Problem]:
    """Blocks the tests would silently skip: unmarked sh/bash/shell blocks, blocks in a
    language that is neither run nor a known format, and not-run markers with no reason."""
    problems = []
    for block in blocks:
        if block.lang in SHELL and block.skip_reason is None:
            problems.append(Problem(block.where, f"```{block.lang} block: make it ```console "
                                    "or mark it <!-- not-run: REASON -->"))
        elif block.lang not in (*RUNNABLE, *SHELL, *FORMATS):
            problems.append(Problem(block.where, f"```{block.lang or '(no language)'} block: "
                                    f"give it a language the tests know ({', '.join(RUNNABLE)}; "
                                    f"{', '.join(FORMATS)})"))
        if block.not_run == "":
            problems.append(Problem(block.where, "not-run marker without a reason"))
    return problems


def pages(root: Path) -> list[Path]:
    """README.md and every docs/**/*.md, in a stable order."""
    found = [root / "README.md"] if (root / "README.md").exists() else []
    return found + sorted((root / "docs").rglob("*.md"))
