"""Run the examples ``doc_blocks.py`` finds, as docs/contributing.md's convention says.

Every runnable block of a page runs in one sandbox (a copy of ``sample_memory/``, an empty
HOME), in document order, as one shell session a user could type: what a command exports
and the directory it ends in carry to the next. Shown output is a transcript of what the
command printed. This module knows nothing of pytest; ``test_docs_examples.py`` turns its
problems into failures.
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

from doc_blocks import ELISIONS, Block, Command, Problem, parse_console

TIMEOUT_SECONDS = 60
# After a timeout, how long to wait for the killed command's pipe to close.
DRAIN_SECONDS = 5
# Only the one-time notice of building the embedder cache is left out of a transcript: it
# depends on what ran on the machine before. Every other notice is output like any line.
NOTICE = "notice: embedder cache "
_ELISION = re.compile(r"…|\.\.\.")
# The environment an example starts from: these of the caller's, nothing else (a
# developer's PYTHONPATH, FORCE_COLOR or memory folder would make a page pass only here).
INHERITED = ("PATH", "TMPDIR", "LANG")
# Run around each command so a page is one shell session: the exported variables and the
# directory a command leaves are where the next one starts. $1, the page's shell folder, is
# moved into a variable no example uses, and the arguments cleared; pipefail, so a failing
# command before a pipe fails the example.
_SESSION_OPEN = ('__doc_shell=$1; set --; set -o pipefail; '
                 '[ -f "$__doc_shell/env" ] && . "$__doc_shell/env"; '
                 '[ -f "$__doc_shell/cwd" ] && cd "$(cat "$__doc_shell/cwd")"\n')
_SESSION_CLOSE = ('\n__doc_status=$?; export -p > "$__doc_shell/env"; '
                  'pwd > "$__doc_shell/cwd"; exit $__doc_status\n')


@dataclass
class Session:
    """A page's running state: its sandbox, environment, shell state and doctest names."""

    sandbox: Path
    env: dict[str, str]
    shell: Path | None = None  # the shell's exports and directory between commands
    groups: list[int] = field(default_factory=list)  # process groups to end with the page
    timeout: float = TIMEOUT_SECONDS  # per command or script
    globs: dict[str, object] = field(default_factory=dict)


# -- the sandbox ------------------------------------------------------------------------


def make_sandbox(directory: Path, sample: Path) -> Path:
    """A copy of ``sample`` (without its state directory) beside an empty HOME."""
    (directory / "home").mkdir(parents=True)
    shutil.copytree(sample, directory / "sample_memory", ignore=shutil.ignore_patterns(".sage-mem"))
    return directory


def sandbox_env(sandbox: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The environment the convention promises every example (docs/contributing.md)."""
    env = {key: base[key] for key in INHERITED if key in base}
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
    the ``notice: embedder cache`` line (``NOTICE``), which reports one-time work that
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
        try:
            output, _ = process.communicate(timeout=DRAIN_SECONDS)
        except subprocess.TimeoutExpired:  # a detached grandchild holds the pipe open
            output = b""
        return None, _text(output)
    finally:
        session.groups[:] = [group for group in session.groups if _alive(group)]
    return process.returncode, _text(output)


def _alive(group: int) -> bool:
    """Whether a process group still has a member: a finished group's id may be reused
    by an unrelated process, which ending the page must not kill."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a reused id, now another user's
        return False
    return True


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
    try:
        with _cwd(session.sandbox), _alarm(session.timeout):
            result = runner.run(test, out=report.write, clear_globs=False)
    except PyconTimeout:
        return [Problem(block.where, f"timed out after {session.timeout:g} s",
                        output=report.getvalue())]
    session.globs.update(test.globs)  # DocTest copies its globals; keep them for the next block
    if result.failed:
        return [Problem(block.where, f"{result.failed} of {result.attempted} doctest "
                        "examples failed", output=report.getvalue())]
    return []


class PyconTimeout(KeyboardInterrupt):
    """A doctest example ran past its time. A KeyboardInterrupt, because doctest records
    every other exception as the example's output and carries on."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise PyconTimeout in this (the main) thread after ``seconds``: a doctest runs in
    the test process, so a hanging example would otherwise stop the whole suite."""
    def expire(signum: int, frame: object) -> None:
        raise PyconTimeout
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
