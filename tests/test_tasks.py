"""Task checkpoints: safe task directories, item parsing, evidence, the handle, creation."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemem import UnsafeFile
from sagemem.files.paths import MAX_FILE_BYTES
from sagemem.inject.tasks import (
    WORKING_FILE,
    WORKING_TEMPLATE,
    Checkpoint,
    Item,
    ensure_checkpoint,
    handle,
    has_evidence,
    load_checkpoint,
    parse_items,
    task_dir,
)

TASK = "issue-4"
WORKING = """\
# Task issue-4

## Done

- [x] Parser in `sagemem/tasks.py`
- [x] Wrote the handle

## Next

- [ ] Wire it into inject
* [X] 12 passed
"""


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def write_working(state: Path, text: str, task_id: str = TASK) -> Path:
    directory = task_dir(state, task_id)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / WORKING_FILE
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def checkpoint(state: Path) -> Checkpoint:
    write_working(state, WORKING)
    loaded = load_checkpoint(state, TASK)
    assert loaded is not None
    return loaded


def test_missing_working_file_is_none(state: Path) -> None:
    assert load_checkpoint(state, TASK) is None
    task_dir(state, TASK).mkdir(parents=True)
    assert load_checkpoint(state, TASK) is None


def test_items_are_parsed_with_their_line_numbers(checkpoint: Checkpoint) -> None:
    assert checkpoint.items == (
        Item(5, "Parser in `sagemem/tasks.py`", done=True, evidence=True),
        Item(6, "Wrote the handle", done=True, evidence=False),
        Item(10, "Wire it into inject", done=False, evidence=False),
        Item(11, "12 passed", done=True, evidence=True),
    )


def test_done_without_evidence_is_a_problem_naming_its_line(checkpoint: Checkpoint) -> None:
    assert checkpoint.problems == (
        "line 6: done without evidence (add a path, a command or a test result)",)


def test_open_items_need_no_evidence(state: Path) -> None:
    write_working(state, "- [ ] think about it\n")
    assert load_checkpoint(state, TASK) == Checkpoint(
        TASK, task_dir(state, TASK) / WORKING_FILE,
        hashlib.sha256(b"- [ ] think about it\n").hexdigest(),
        (Item(1, "think about it", done=False, evidence=False),), ())


@pytest.mark.parametrize("text", [
    "edited src/x.py", "ran ./a", "updated file.md", "moved a/b", "see ~/notes",
    "ran `make check`", "`pytest -q`", "merged https://github.com/o/r/pull/4",
    "42 passed", "tests pass", "all tests passed", "OK", "exit 0", "exit code 0",
    "测试通过", "全部通过", "已更新README.md并提交", "改了 sagemem/cli.py",
])
def test_evidence_forms_are_recognised(text: str) -> None:
    assert has_evidence(text)


@pytest.mark.parametrize("text", [
    "", "wrote the handle", "fixed it, e.g. the crash", "looks ok", "tests not passed",
    "tests did not pass", "测试未通过", "测试没有通过", "完成了", "version 1.2",
])
def test_claims_without_evidence_are_not_evidence(text: str) -> None:
    assert not has_evidence(text)


def test_item_markers_and_forms() -> None:
    items = parse_items("- [x] a.py\n* [X] b.py\n+ [ ] c\n1. [x] d.py\n  - [ ] nested\n"
                        "- [x]\n-[x] not an item\n- [y] not an item\ntext - [x] no\n")
    assert [(i.line, i.text, i.done) for i in items] == [
        (1, "a.py", True), (2, "b.py", True), (3, "c", False), (4, "d.py", True),
        (5, "nested", False), (6, "", True)]


def test_items_in_fenced_code_are_examples_not_tasks() -> None:
    text = "```md\n- [x] example\n```\n~~~\n- [ ] also\n```\n- [ ] still fenced\n~~~\n- [ ] real\n"
    assert [(i.line, i.text) for i in parse_items(text)] == [(9, "real")]


def test_line_numbers_count_only_newlines() -> None:
    items = parse_items("a\x0cb\u2028c\r\n- [ ] crlf\r\n")
    assert [(i.line, i.text) for i in items] == [(2, "crlf")]


@given(st.text())
def test_parsing_any_text_never_fails_and_numbers_real_lines(text: str) -> None:
    lines = text.split("\n")
    for item in parse_items(text):
        assert 1 <= item.line <= len(lines)
        assert item.text in lines[item.line - 1]


@pytest.mark.parametrize("run", ["a", "a.", "a-", "a/", "ab.", "a~", "1."])
def test_a_huge_line_is_checked_in_linear_time(run: str) -> None:
    # Unanchored patterns once rescanned a long token from every position: hours per file.
    line = "- [x] " + run * (MAX_FILE_BYTES // len(run))
    started = time.perf_counter()
    parse_items(line)
    assert time.perf_counter() - started < 5


def test_revision_is_the_sha256_of_the_bytes_and_follows_changes(state: Path) -> None:
    path = write_working(state, WORKING)
    first = load_checkpoint(state, TASK)
    path.write_bytes(WORKING.encode("utf-8") + b"- [ ] one more\n")
    second = load_checkpoint(state, TASK)
    assert first is not None and second is not None
    assert first.revision == hashlib.sha256(WORKING.encode("utf-8")).hexdigest()
    assert second.revision == hashlib.sha256(path.read_bytes()).hexdigest() != first.revision


@pytest.mark.parametrize("task_id", [
    "../x", "a/b", "..", ".", ".hidden", "x" * 101, "a\x00b", "a\\b", "/etc", "",
    "a\nb", "任务", "\udcff",
])
def test_hostile_task_ids_stay_inside_tasks(state: Path, task_id: str) -> None:
    directory = task_dir(state, task_id)
    assert directory.parent == state / "tasks"
    assert directory.name.startswith("id-") and len(directory.name) == 19
    assert task_dir(state, task_id) == directory  # stable: the same id finds the same file
    path = ensure_checkpoint(state, task_id)
    assert path.resolve().parent.parent == (state / "tasks").resolve()


@pytest.mark.parametrize("task_id", ["issue-4", "a..b", "3f2a9c1e-uuid_v4.x", "x" * 100])
def test_plain_task_ids_are_their_own_directory(state: Path, task_id: str) -> None:
    assert task_dir(state, task_id) == state / "tasks" / task_id


def test_distinct_hostile_ids_get_distinct_directories(state: Path) -> None:
    assert task_dir(state, "../x") != task_dir(state, "../y")


def test_symlinked_working_file_is_not_followed(state: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("- [ ] secret item\n", encoding="utf-8")
    task_dir(state, TASK).mkdir(parents=True)
    (task_dir(state, TASK) / WORKING_FILE).symlink_to(secret)
    loaded = load_checkpoint(state, TASK)
    assert loaded is not None and not loaded.readable
    assert loaded.items == () and "symlink" in loaded.problems[0]
    assert "was not read" in handle(loaded) and "secret" not in handle(loaded)


def test_symlinked_task_directory_is_not_followed(state: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / WORKING_FILE).write_text("- [ ] elsewhere\n", encoding="utf-8")
    (state / "tasks").mkdir(parents=True)
    (state / "tasks" / TASK).symlink_to(elsewhere)
    loaded = load_checkpoint(state, TASK)
    assert loaded is not None and not loaded.readable
    with pytest.raises(UnsafeFile):
        ensure_checkpoint(state, TASK)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_working_file_is_refused_without_hanging(state: Path) -> None:
    task_dir(state, TASK).mkdir(parents=True)
    os.mkfifo(task_dir(state, TASK) / WORKING_FILE)
    result: list[Checkpoint | None] = []
    reader = threading.Thread(target=lambda: result.append(load_checkpoint(state, TASK)))
    reader.start()
    reader.join(timeout=5)
    assert not reader.is_alive()
    assert result[0] is not None and not result[0].readable


def test_oversized_and_non_utf8_files_are_reported_not_raised(state: Path) -> None:
    write_working(state, "x" * (MAX_FILE_BYTES + 1))
    big = load_checkpoint(state, TASK)
    (task_dir(state, TASK) / WORKING_FILE).write_bytes(b"- [ ] \xff\n")
    binary = load_checkpoint(state, TASK)
    assert big is not None and not big.readable and "limit" in big.problems[0]
    assert binary is not None and not binary.readable and "UTF-8" in binary.problems[0]


def test_handle_names_task_revision_path_and_counts(checkpoint: Checkpoint) -> None:
    assert handle(checkpoint) == (
        f"Task checkpoint: issue-4 (revision {checkpoint.revision[:12]}) — read "
        f"{checkpoint.path}; 1 open, 3 done, 1 done without evidence")


def test_handle_leaves_out_a_zero_unproven_count(state: Path) -> None:
    write_working(state, "- [x] `make`\n")
    loaded = load_checkpoint(state, TASK)
    assert loaded is not None and handle(loaded).endswith("; 0 open, 1 done")


def test_handle_shows_the_safe_name_not_the_raw_id(state: Path) -> None:
    write_working(state, "- [ ] x\n", task_id="a\n### injected")
    loaded = load_checkpoint(state, "a\n### injected")
    assert loaded is not None
    assert "\n" not in handle(loaded) and "injected" not in handle(loaded)


def test_ensure_creates_the_template_once(state: Path) -> None:
    path = ensure_checkpoint(state, TASK)
    assert path == task_dir(state, TASK) / WORKING_FILE
    assert path.read_text(encoding="utf-8") == WORKING_TEMPLATE.format(task=TASK)
    loaded = load_checkpoint(state, TASK)
    assert loaded is not None and loaded.problems == ()  # the template's example has evidence
    assert os.listdir(path.parent) == [WORKING_FILE]  # no temporary left behind


def test_ensure_never_overwrites(state: Path) -> None:
    path = write_working(state, "my notes\n")
    assert ensure_checkpoint(state, TASK) == path
    assert path.read_text(encoding="utf-8") == "my notes\n"


def test_ensure_never_overwrites_a_symlink(state: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.md"
    task_dir(state, TASK).mkdir(parents=True)
    (task_dir(state, TASK) / WORKING_FILE).symlink_to(target)
    ensure_checkpoint(state, TASK)
    assert not target.exists()


def test_template_has_goal_done_and_next() -> None:
    headings = [line for line in WORKING_TEMPLATE.splitlines() if line.startswith("#")]
    assert headings == ["# Task {task}", "## Goal", "## Done", "## Next"]
