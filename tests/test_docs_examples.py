"""Every example in README.md and docs/ runs as shown, or says why it cannot run here.

The convention is docs/contributing.md's "Examples are tests"; ``doc_blocks.py`` parses it
and ``doc_examples.py`` runs it. The first two tests
hold the real pages to it; the rest prove, on small pages written here, that each rule of
the checker can fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from doc_blocks import (
    Block,
    Problem,
    pages,
    parse_blocks,
    parse_console,
    shell_block_problems,
)
from doc_examples import Session, make_sandbox, run_page, sandbox_env

ROOT = Path(__file__).resolve().parent.parent
PAGES = [path.relative_to(ROOT).as_posix() for path in pages(ROOT)]

SessionFactory = Callable[[Path], Session]
Run = Callable[[str], list[Problem]]


def page_blocks(page: str) -> list[Block]:
    return parse_blocks((ROOT / page).read_text(encoding="utf-8"), page)


def fail_with(problems: list[Problem]) -> None:
    if problems:
        pytest.fail("\n\n".join(str(problem) for problem in problems), pytrace=False)


def use_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """Make ``os.environ`` exactly ``env``: pycon blocks run in this process."""
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def new_session(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SessionFactory]:
    """Builds a page's sandbox from a sample folder only when the page has something to run.

    Afterwards ``os.environ`` is put back whole: a pycon block's code may add variables
    (the embedder sets its thread limits) that monkeypatch, restoring only what it set,
    would leave behind for later test files."""
    saved = dict(os.environ)

    def build(sample: Path) -> Session:
        sandbox = make_sandbox(tmp_path_factory.mktemp("page"), sample)
        env = sandbox_env(sandbox, os.environ)
        use_env(monkeypatch, env)
        return Session(sandbox, env)

    yield build
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.parametrize("page", PAGES, ids=PAGES)
def test_every_runnable_example_on_page_runs_as_shown(
    page: str, new_session: SessionFactory
) -> None:
    blocks = page_blocks(page)
    if not any(block.runnable for block in blocks):
        pytest.skip(f"{page} has no runnable example")
    fail_with(run_page(blocks, new_session(ROOT / "sample_memory")))


def test_every_shell_block_is_runnable_or_says_why_not() -> None:
    problems = [problem for page in PAGES for problem in shell_block_problems(page_blocks(page))]
    if problems:
        listing = "\n".join(f"  {problem.where}: {problem.message}" for problem in problems)
        pytest.fail(f"{len(problems)} shell blocks neither run nor say why:\n{listing}",
                    pytrace=False)


# -- the checker can fail ---------------------------------------------------------------


@pytest.fixture
def tiny_sample(tmp_path: Path) -> Path:
    """A one-memory folder: the checker's own tests need no real sample to copy."""
    sample = tmp_path / "sample"
    sample.mkdir()
    (sample / "note.md").write_text("---\nname: note\n---\nhello\n", encoding="utf-8")
    (sample / ".sage-mem").mkdir()
    return sample


@pytest.fixture
def run(new_session: SessionFactory, tiny_sample: Path) -> Run:
    """Runs a markdown string as a page named ``docs/t.md`` in a fresh sandbox."""

    def run_markdown(markdown: str) -> list[Problem]:
        return run_page(parse_blocks(markdown, "docs/t.md"), new_session(tiny_sample))

    return run_markdown


def console(*lines: str) -> str:
    return "```console\n" + "\n".join(lines) + "\n```\n"


def messages(problems: list[Problem]) -> str:
    return "\n".join(str(problem) for problem in problems)


def test_a_page_whose_commands_print_what_they_show_passes(run: Run) -> None:
    assert run(console("$ echo hello world", "hello world")) == []


def test_a_shown_line_the_command_does_not_print_fails_the_page(
    run: Run,
) -> None:
    problems = run("intro\n\n" + console("$ echo hello", "hello", "goodbye"))
    assert len(problems) == 1
    assert "'goodbye'" in str(problems[0])
    assert problems[0].where.startswith("docs/t.md:4 (block at line 3)")


def test_a_failure_names_the_command_and_the_head_of_its_output(
    run: Run,
) -> None:
    problems = run(console("$ seq 1 50", "51"))
    text = messages(problems)
    assert "command: seq 1 50" in text
    assert "| 20" in text
    assert "| 21" not in text


def test_a_command_that_exits_non_zero_fails_the_page(run: Run) -> None:
    problems = run(console("$ echo oops; exit 3", "oops"))
    assert len(problems) == 1
    assert "exit 3" in problems[0].message


def test_a_failing_command_shown_with_its_exit_status_passes(
    run: Run,
) -> None:
    assert run(console('$ false; echo "exit $?"', "exit 1")) == []


def test_a_console_block_that_shows_no_output_fails_the_page(
    run: Run,
) -> None:
    problems = run(console("$ true", "…"))
    assert [p.message for p in problems] == ["console block shows no output line to check"]


def test_a_line_left_out_without_an_elision_fails_the_page(run: Run) -> None:
    problems = run(console("$ printf 'one\\ntwo\\nthree\\n'", "one", "three"))
    assert [problem.message for problem in problems] == [
        "exit 0, but the output has 'two' before the shown line 'three' "
        "(show it, or a `…` line for what is left out)"]


def test_output_after_the_last_shown_line_needs_an_elision(run: Run) -> None:
    assert run(console("$ printf 'one\\ntwo\\n'", "one", "…")) == []
    problems = run(console("$ printf 'one\\ntwo\\n'", "one"))
    assert [problem.message for problem in problems] == [
        "exit 0, but the output goes on with 'two' after the last shown line "
        "(show it, or end with a `…` line)"]


def test_a_shown_line_is_a_whole_output_line_not_a_part_of_one(run: Run) -> None:
    problems = run(console("$ echo rolled back to 2026", "rolled back"))
    assert [problem.message for problem in problems] == [
        "exit 0, but the output lacks the shown line 'rolled back'"]
    assert run(console("$ echo rolled back to 2026", "rolled back …")) == []


def test_the_embedder_cache_notice_is_not_part_of_the_transcript(run: Run) -> None:
    notice = "notice: embedder cache /s/embedder: first use of this model version; built it"
    assert run(console(f"$ echo '{notice}' >&2; echo done", "done")) == []


def test_any_other_notice_is_output_like_any_line(run: Run) -> None:
    problems = run(console("$ echo 'notice: index rebuilt' >&2; echo done", "done"))
    assert [problem.message for problem in problems] == [
        "exit 0, but the output has 'notice: index rebuilt' before the shown line 'done' "
        "(show it, or a `…` line for what is left out)"]


def test_an_elision_inside_a_line_stands_for_what_changes(run: Run) -> None:
    assert run(console("$ echo rolled back to 20261202T0012 '(22 files)'",
                       "rolled back to … (22 files)")) == []


def test_the_pieces_around_an_elision_must_come_in_order_on_one_line(run: Run) -> None:
    problems = run(console("$ echo b a; echo c", "a … b"))
    assert [problem.message for problem in problems] == [
        "exit 0, but the output lacks the shown line 'a … b'"]


def test_an_elision_line_is_not_checked(run: Run) -> None:
    assert run(console("$ echo a; echo b", "a", "...", "…")) == []


def test_shown_lines_are_compared_stripped_and_blank_lines_ignored(
    run: Run,
) -> None:
    assert run(console("$ printf '   indented\\n'", "", "  indented   ")) == []


def test_stderr_counts_as_output(run: Run) -> None:
    assert run(console("$ echo warned >&2", "warned")) == []


def test_an_export_carries_to_the_pages_later_commands(run: Run) -> None:
    markdown = console("$ export GREETING=hi", "$ echo $GREETING-there", "…") + console(
        "$ echo again $GREETING", "again hi"
    )
    problems = run(markdown)
    assert messages(problems) == "docs/t.md:1: console block shows no output line to check"


def test_a_cd_joined_to_another_command_carries_as_in_a_shell(run: Run) -> None:
    markdown = console("$ cd sample_memory && echo in", "in", "$ ls", "note.md")
    assert run(markdown) == []


def test_a_carried_export_is_evaluated_once_not_before_every_command(run: Run) -> None:
    markdown = console('$ export RUNS="$(echo x >> runs.txt; wc -l < runs.txt)"',
                       "$ echo runs=$RUNS", "runs=1", "$ echo file=$(wc -l < runs.txt)", "file=1")
    assert run(markdown) == []


def test_a_cd_carries_to_the_pages_later_commands(run: Run) -> None:
    assert run(console("$ cd sample_memory", "$ ls", "note.md")) == []


def test_a_continued_command_runs_as_one(run: Run) -> None:
    assert run(console("$ echo one \\", "  two", "one two")) == []


def test_a_here_document_is_the_commands_input_not_its_shown_output(run: Run) -> None:
    markdown = console("$ cat > q.txt <<'EOF'", "from the heredoc", "EOF", "$ cat q.txt",
                       "from the heredoc")
    assert run(markdown) == []


def test_commands_run_in_the_sandbox_with_the_promised_environment(
    run: Run,
) -> None:
    markdown = console(
        '$ ls "$SAGE_MEM_DIR"; ls "$HOME" | wc -l; echo "$COLUMNS $TZ $LC_ALL ${EDITOR-none}"',
        "note.md", "0", "80 UTC C.UTF-8 none",
        "$ ls -a sample_memory | grep -c sage-mem || true", "0",
    )
    assert run(markdown) == []


def test_the_sandbox_path_finds_the_sagemem_of_the_running_venv(
    run: Run,
) -> None:
    assert run(console("$ sagemem --help", "Usage: sagemem [OPTIONS] COMMAND [ARGS]...", "…")) == []


def test_a_failure_before_a_pipe_fails_the_example(run: Run) -> None:
    problems = run(console("$ echo before", "before", "$ false | cat"))
    assert [problem.message[:6] for problem in problems] == ["exit 1"]


def test_the_callers_environment_reaches_no_example(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert run(console('$ echo "[${FORCE_COLOR-unset}] [${PYTHONPATH-unset}]"',
                       "[unset] [unset]")) == []


def test_a_block_in_a_language_the_tests_do_not_know_is_reported() -> None:
    markdown = "```py\nprint(1)\n```\n\n```\n$ sagemem list\n```\n\n```text\nok\n```\n"
    assert messages(shell_block_problems(parse_blocks(markdown, "docs/t.md"))) == (
        "docs/t.md:1: ```py block: give it a language the tests know (console, pycon, "
        "python; json, jsonl, yaml, toml, text, markdown, diff, ini)\n"
        "docs/t.md:5: ```(no language) block: give it a language the tests know (console, "
        "pycon, python; json, jsonl, yaml, toml, text, markdown, diff, ini)")


def test_a_here_document_never_closed_is_reported_not_swallowing_the_block() -> None:
    block = parse_blocks(console("$ cat > q <<'EOF'", "text", "$ echo next", "next"),
                         "docs/t.md")[0]
    _, problems = parse_console(block)
    assert "docs/t.md:2: here-document never closed by EOF" in messages(problems)


def test_a_here_string_and_a_shift_are_not_here_documents(run: Run) -> None:
    markdown = console("$ cat <<< hi; echo $((1 << 2))", "hi", "4", "$ echo next", "next")
    assert run(markdown) == []


def test_a_pycon_block_that_hangs_times_out(
    new_session: SessionFactory, tiny_sample: Path
) -> None:
    session = replace(new_session(tiny_sample), timeout=1)
    blocks = parse_blocks("```pycon\n>>> import time; time.sleep(30)\n```\n", "docs/t.md")
    assert [problem.message for problem in run_page(blocks, session)] == [
        "timed out after 1 s"]


def test_a_command_that_outlives_the_timeout_fails_the_page(
    new_session: SessionFactory, tiny_sample: Path
) -> None:
    session = replace(new_session(tiny_sample), timeout=2)
    blocks = parse_blocks(console("$ echo started; sleep 30", "started"), "docs/t.md")
    problems = run_page(blocks, session)
    assert [(p.message, p.output) for p in problems] == [("timed out after 2 s", "started\n")]


def test_a_process_an_example_leaves_in_the_background_ends_with_the_page(
    run: Run, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    command = f"$ sleep 30 >/dev/null 2>&1 & echo $! > {pid_file}; echo started"
    markdown = console(command, "started")
    assert run(markdown) == []
    assert not running(int(pid_file.read_text()))


def running(pid: int) -> bool:
    """Whether ``pid`` is alive, waiting a moment for a killed process to be reaped."""
    for _ in range(250):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        if process_state(pid) in ("Z", "X", "gone"):  # a killed child not yet reaped: a zombie
            return False
        time.sleep(0.02)
    return True


def process_state(pid: int) -> str:
    """Linux's one-letter state of ``pid`` ("gone" once it is reaped, "" off Linux)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone" if Path("/proc/self").exists() else ""


def test_a_marked_block_is_not_run(run: Run) -> None:
    markdown = "<!-- not-run: needs Claude Code -->\n\n" + console("$ false", "never")
    assert run(markdown) == []


def test_a_pycon_block_with_wrong_expected_output_fails(run: Run) -> None:
    problems = run("```pycon\n>>> 1 + 1\n3\n```\n")
    assert len(problems) == 1
    assert "Expected:\n    3\nGot:\n    2" in problems[0].output


def test_a_pycon_block_without_an_example_fails(run: Run) -> None:
    problems = run("```pycon\nprint('never checked')\n```\n")
    assert [p.message for p in problems] == ["pycon block has no `>>> ` example"]


def test_pycon_blocks_run_in_the_sandbox_and_share_names(run: Run) -> None:
    markdown = (
        "```pycon\n>>> import os, pathlib\n>>> sorted(os.listdir(os.environ['SAGE_MEM_DIR']))\n"
        "['note.md']\n>>> here = pathlib.Path.cwd()\n```\n\n"
        "```pycon\n>>> (here / 'sample_memory').is_dir()\nTrue\n```\n"
    )
    cwd = Path.cwd()
    assert run(markdown) == []
    assert Path.cwd() == cwd


def test_a_python_block_that_fails_fails_the_page_showing_its_traceback(
    run: Run,
) -> None:
    script = "import os\nassert os.path.isdir('home')\nprint('\\n' * 40)\nassert 1 == 2\n"
    problems = run(f"```python\n{script}```\n")
    assert len(problems) == 1
    assert "AssertionError" in str(problems[0])


# -- parsing ----------------------------------------------------------------------------


def test_an_unmarked_sh_block_is_reported() -> None:
    blocks = parse_blocks("text\n\n```sh\nsagemem list\n```\n\n```bash\nls\n```\n", "docs/t.md")
    assert [p.where for p in shell_block_problems(blocks)] == ["docs/t.md:3", "docs/t.md:7"]


def test_a_not_run_marker_without_a_reason_is_reported() -> None:
    markdown = "<!-- not-run: -->\n```sh\nx\n```\n<!-- not-run -->\n```shell\ny\n```\n"
    problems = shell_block_problems(parse_blocks(markdown, "docs/t.md"))
    assert [(p.where, p.message) for p in problems] == [
        ("docs/t.md:2", "not-run marker without a reason"),
        ("docs/t.md:6", "not-run marker without a reason"),
    ]


def test_a_marked_sh_block_is_not_reported() -> None:
    markdown = "<!-- not-run: needs an editor -->\n\n```sh\nsagemem edit x\n```\n"
    blocks = parse_blocks(markdown, "docs/t.md")
    assert shell_block_problems(blocks) == []
    assert blocks[0].skip_reason == "not-run: needs an editor"


def test_a_not_run_reason_wrapped_over_lines_is_read_whole() -> None:
    markdown = "<!-- not-run: needs Claude Code\n     and a network -->\n\n```sh\nclaude\n```\n"
    (block,) = parse_blocks(markdown, "docs/t.md")
    assert block.skip_reason == "not-run: needs Claude Code and a network"


def test_readme_blocks_that_ci_runs_are_skipped_as_run_by_ci() -> None:
    markdown = (
        "<!-- test-command -->\n```sh\npytest\n```\n"
        "<!-- quick-start -->\n```console\n$ x\n```\n"
    )
    readme = parse_blocks(markdown, "README.md")
    assert [b.skip_reason for b in readme] == [
        "test-command: run by .ci/run itself", "quick-start: run by .ci/run itself",
    ]
    assert shell_block_problems(readme) == []
    assert len(shell_block_problems(parse_blocks(markdown, "docs/t.md"))) == 1


def test_a_fence_inside_a_longer_fence_is_not_a_block() -> None:
    markdown = "````markdown\n```sh\nrm -rf /\n```\n````\n\n~~~\n```console\n~~~\n"
    blocks = parse_blocks(markdown, "docs/t.md")
    assert [(b.line, b.lang) for b in blocks] == [(1, "markdown"), (7, "")]
    assert blocks[0].text == "```sh\nrm -rf /\n```"


def test_a_tilde_fence_is_a_block() -> None:
    blocks = parse_blocks("~~~console\n$ echo hi\nhi\n~~~\n", "docs/t.md")
    assert [(b.lang, b.text) for b in blocks] == [("console", "$ echo hi\nhi")]


def test_an_indented_fence_in_a_list_loses_its_indent() -> None:
    markdown = "1. Run it:\n\n    ```console\n    $ echo hi\n      hi\n    ```\n2. Done.\n"
    (block,) = parse_blocks(markdown, "docs/t.md")
    assert (block.line, block.text, block.before) == (3, "$ echo hi\n  hi", "1. Run it:")


def test_an_inline_triple_backtick_is_not_a_fence() -> None:
    assert parse_blocks("Use ```x``` inline.\n", "docs/t.md") == []


def test_console_text_before_the_first_command_is_reported() -> None:
    (block,) = parse_blocks("```console\nstray\n$ echo a\na\n```\n", "docs/t.md")
    commands, problems = parse_console(block)
    assert [c.text for c in commands] == ["echo a"]
    assert [p.where for p in problems] == ["docs/t.md:2"]
