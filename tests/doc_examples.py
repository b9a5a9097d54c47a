"""Find the examples in README.md and docs/, and run them as the docs convention says.

The convention (issue 21): a ```console block is a shell session — ``$ `` lines are
commands, the lines after one are output it must print; ```pycon blocks are doctests;
```python blocks run as scripts; a ```sh/bash/shell block is either turned into a
console block or preceded by ``<!-- not-run: REASON -->`` saying what it needs. Every
runnable block of a page runs in one sandbox (a copy of ``sample_memory/``, an empty
HOME), in document order, so a page reads as one session a user could type.

This module parses and runs; it knows nothing of pytest. ``test_docs_examples.py`` turns
its problems into failures.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = ("console", "pycon", "python")
SHELL = ("sh", "bash", "shell")
ELISIONS = ("...", "…")
NOTICE = "notice: "
_ELISION = re.compile(r"…|\.\.\.")
TIMEOUT_SECONDS = 60
OUTPUT_HEAD_LINES = 20
# Cleared from the sandbox's environment: the developer's own memory folder, Claude Code
# session variables or editor must never reach an example (a doc would pass here only).
CLEARED_PREFIXES = ("SAGE_MEM_", "CLAUDE_")
CLEARED_NAMES = ("VISUAL", "EDITOR")
# README's blocks that .ci/run reads and runs itself (its test command, the quick start):
# running them here too would build a venv inside the test run.
CI_MARKERS = {"<!-- test-command -->": "test-command", "<!-- quick-start -->": "quick-start"}
CI_MARKED_PAGE = "README.md"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not-run\b:?(?P<reason>.*?)-->$")
# A here-document (``cat > q.jsonl <<'EOF'``): its lines, up to the word, are the command's
# input as a user pastes them, not shown output.
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
# Run around each command so a page is one shell session: the exported variables and the
# directory a command leaves are where the next one starts. $1, the page's shell folder, is
# moved into a variable no example uses, and the arguments cleared.
_SESSION_OPEN = ('__doc_shell=$1; set --; [ -f "$__doc_shell/env" ] && . "$__doc_shell/env"; '
                 '[ -f "$__doc_shell/cwd" ] && cd "$(cat "$__doc_shell/cwd")"\n')
_SESSION_CLOSE = ('\n__doc_status=$?; export -p > "$__doc_shell/env"; '
                  'pwd > "$__doc_shell/cwd"; exit $__doc_status\n')


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


@dataclass
class Session:
    """A page's running state: its sandbox, environment, shell state and doctest names."""

    sandbox: Path
    env: dict[str, str]
    shell: Path | None = None  # the shell's exports and directory between commands
    groups: list[int] = field(default_factory=list)  # process groups to end with the page
    timeout: float = TIMEOUT_SECONDS  # per command or script
    globs: dict[str, object] = field(default_factory=dict)


# -- parsing ----------------------------------------------------------------------------


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
            command, index = _command_at(lines, index, line_no)
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
    for word in _HEREDOC.findall("\n".join(parts)):
        while index < len(lines):
            parts.append(lines[index])
            index += 1
            if parts[-1].strip() == word:
                break
    return "\n".join(parts), index


def shell_block_problems(blocks: list[Block]) -> list[Problem]:
    """Unmarked sh/bash/shell blocks and not-run markers that give no reason."""
    problems = []
    for block in blocks:
        if block.lang in SHELL and block.skip_reason is None:
            problems.append(Problem(block.where, f"```{block.lang} block: make it ```console "
                                    "or mark it <!-- not-run: REASON -->"))
        if block.not_run == "":
            problems.append(Problem(block.where, "not-run marker without a reason"))
    return problems


def pages(root: Path) -> list[Path]:
    """README.md and every docs/**/*.md, in a stable order."""
    found = [root / "README.md"] if (root / "README.md").exists() else []
    return found + sorted((root / "docs").rglob("*.md"))


# -- the sandbox ------------------------------------------------------------------------


def make_sandbox(directory: Path, sample: Path) -> Path:
    """A copy of ``sample`` (without its state directory) beside an empty HOME."""
    (directory / "home").mkdir(parents=True)
    shutil.copytree(sample, directory / "sample_memory", ignore=shutil.ignore_patterns(".sage-mem"))
    return directory


def sandbox_env(sandbox: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The environment the convention promises every example (issue 21, rule 2)."""
    env = {key: value for key, value in base.items() if not _cleared(key)}
    bin_dir = str(Path(sys.executable).parent)  # the venv running the tests: its sagemem
    env.update(
        HOME=str(sandbox / "home"),
        SAGE_MEM_DIR=str(sandbox / "sample_memory"),
        PATH=os.pathsep.join([bin_dir, base.get("PATH", "")]),
        COLUMNS="80",
        TZ="UTC",
        LC_ALL="C.UTF-8",
    )
    return env


def _cleared(key: str) -> bool:
    return key.startswith(CLEARED_PREFIXES) or key in CLEARED_NAMES


# -- running ----------------------------------------------------------------------------


def run_page(blocks: list[Block], session: Session) -> list[Problem]:
    """Run a page's runnable blocks in order in one session; every problem, not just the first.

    pycon blocks run in this process: the caller sets ``os.environ`` to ``session.env``.
    """
    runners = {"console": run_console, "pycon": run_pycon, "python": run_python}
    problems: list[Problem] = []
    try:
        for block in blocks:
            if block.runnable:
                problems += runners[block.lang](block, session)
    finally:
        _end_processes(session)
        if session.shell is not None:
            shutil.rmtree(session.shell, ignore_errors=True)
    return problems


def run_console(block: Block, session: Session) -> list[Problem]:
    """Run each command in turn, as typed into one shell session for the whole page."""
    commands, problems = parse_console(block)
    for command in commands:
        problems += _run_command(block, command, session)
    return problems


def _run_command(block: Block, command: Command, session: Session) -> list[Problem]:
    where = f"{block.page}:{command.line} (block at line {block.line})"
    if session.shell is None:
        session.shell = Path(tempfile.mkdtemp(prefix="doc-shell-"))
    script = _SESSION_OPEN + command.text + _SESSION_CLOSE
    status, output = _spawn(["bash", "-c", script, "bash", str(session.shell)], session)
    if status is None:
        return [Problem(where, f"timed out after {session.timeout:g} s", command.text, output)]
    if status != 0:
        return [Problem(where, f'exit {status} (a shown failure ends in `; echo "exit $?"`)',
                        command.text, output)]
    mismatch = transcript_mismatch(command.shown, output)
    return [Problem(where, f"exit 0, but {mismatch}", command.text, output)] if mismatch else []


def transcript_mismatch(shown: tuple[str, ...], output: str) -> str | None:
    """Why the shown lines are not the command's output, or None when they are.

    Shown output is a transcript: its lines are the output's lines, in order, none left
    out, except where a line that is just ``…`` stands for the lines it skips (at the
    start, between two lines or at the end). Blank lines do not count on either side, nor
    ``notice:`` lines, which report one-time work (an embedder cache being built) that
    depends on what ran on the machine before.
    """
    lines = [line.strip() for line in output.splitlines()
             if line.strip() and not line.startswith(NOTICE)]
    at, skipping = 0, False
    for want in (line.strip() for line in shown):
        if not want:
            continue
        if want in ELISIONS:
            skipping = True
            continue
        found = next((i for i in range(at, len(lines)) if shows(want, lines[i])), None)
        if found is None:
            return f"the output lacks the shown line {want!r}"
        if found > at and not skipping:
            return (f"the output has {lines[at]!r} before the shown line {want!r} "
                    "(show it, or a `…` line for what is left out)")
        at, skipping = found + 1, False
    if at < len(lines) and not skipping:
        return (f"the output goes on with {lines[at]!r} after the last shown line "
                "(show it, or end with a `…` line)")
    return None


def shows(shown: str, line: str) -> bool:
    """Whether an output line is the shown line. A ``…`` (or ``...``) inside the shown line,
    or at either end, stands for text left out; the pieces around it must come in that
    order, the first at the line's start and the last at its end unless a ``…`` is there,
    so a line is shown whole with only what changes elided."""
    pieces = [piece.strip() for piece in _ELISION.split(shown)]
    if len(pieces) == 1:
        return shown == line
    head, *middle, tail = pieces
    if not line.startswith(head) or not line.endswith(tail):
        return False
    inner = line[len(head):len(line) - len(tail)]
    return len(inner) + len(head) + len(tail) == len(line) and _in_order(middle, inner)


def _in_order(pieces: list[str], line: str) -> bool:
    at = 0
    for piece in pieces:
        found = line.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _spawn(args: list[str], session: Session, script: str = "") -> tuple[int | None, str]:
    """Run ``args`` in the sandbox: its exit status (None on timeout) and stdout+stderr.

    Each run leads a process group of its own, ended with the page, so an example that
    starts a server in the background (``sagemem mcp --http &``) leaves nothing behind.
    """
    process = subprocess.Popen(
        args, cwd=session.sandbox, env=session.env, start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    session.groups.append(process.pid)
    try:
        output, _ = process.communicate(script.encode("utf-8"), timeout=session.timeout)
    except subprocess.TimeoutExpired:
        _end_group(process.pid)
        output, _ = process.communicate()
        return None, _text(output)
    return process.returncode, _text(output)


def _end_processes(session: Session) -> None:
    for group in session.groups:
        _end_group(group)
    session.groups.clear()


def _end_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # ended already: usual
        os.killpg(group, signal.SIGKILL)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def run_pycon(block: Block, session: Session) -> list[Problem]:
    """Run a pycon block as a doctest in the sandbox; a page's pycon blocks share names."""
    test = doctest.DocTestParser().get_doctest(
        block.text, session.globs, block.where, block.page, block.line,
    )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if not test.examples:
        return [Problem(block.where, "pycon block has no `>>> ` example")]
    report = io.StringIO()
    with _cwd(session.sandbox):
        result = runner.run(test, out=report.write, clear_globs=False)
    session.globs.update(test.globs)  # DocTest copies its globals; keep them for the next block
    if result.failed:
        return [Problem(block.where, f"{result.failed} of {result.attempted} doctest "
                        "examples failed", output=report.getvalue())]
    return []


@contextlib.contextmanager
def _cwd(directory: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def run_python(block: Block, session: Session) -> list[Problem]:
    """Run a python block as a script (``python -``) in the sandbox; it must exit 0."""
    status, output = _spawn([sys.executable, "-"], session, block.text)
    if status is None:
        return [Problem(block.where, f"timed out after {session.timeout:g} s", output=output)]
    if status != 0:
        return [Problem(block.where, f"python block exited {status}", output=output, tail=True)]
    return []
