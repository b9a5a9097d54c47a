"""Progress bars for long work (``sagemem/cli/progress.py``): drawn with rich on stderr
when stderr is a terminal, and nothing at all otherwise — a script, a pipe or ``--json``
sees the same output as before bars existed."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

FILES = 300  # above cli/progress.MIN_ITEMS: a bar is due on a terminal


def many_memories(directory: Path, count: int = FILES) -> Path:
    directory.mkdir()
    for n in range(count):
        (directory / f"project_note_{n:04}.md").write_text(
            f"---\nname: Note {n}\ndescription: a note about topic {n}\n"
            f"metadata:\n  type: project\n---\nThe body of note {n}.\n", encoding="utf-8")
    return directory


def index_argv(memory: Path, state: Path) -> list[str]:
    return [sys.executable, "-m", "sagemem", "--dir", str(memory), "--state-dir", str(state),
            "index"]


def quiet_env() -> dict[str, str]:
    return {**os.environ, "SAGE_MEM_SEMANTIC": "off", "TERM": "xterm-256color",
            "COLUMNS": "100"}


def run_in_a_terminal(argv: list[str], stdout: Path | None = None) -> str:
    """Run ``argv`` with stderr (and stdout, unless it goes to the file ``stdout``) on a
    pseudo-terminal; everything the terminal showed."""
    master, slave = pty.openpty()
    out = stdout.open("wb") if stdout is not None else None
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out or slave,
                             stderr=slave, env=quiet_env(), close_fds=True)
    if out is not None:
        out.close()
    os.close(slave)
    shown = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            child.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert child.wait(timeout=60) == 0
    return shown.decode("utf-8", "replace")


def test_index_off_a_terminal_prints_only_its_summary(tmp_path: Path) -> None:
    memory = many_memories(tmp_path / "memory")
    done = subprocess.run(index_argv(memory, tmp_path / "state"), capture_output=True,
                          text=True, env=quiet_env(), check=True)
    assert done.stderr == ""
    assert done.stdout.startswith(f"{FILES} files scanned, {FILES} indexed, 0 removed (")
    assert done.stdout.count("\n") == 1


def test_index_off_a_terminal_prints_the_same_for_a_large_and_a_small_folder(
        tmp_path: Path) -> None:
    shown = []
    for count in (3, FILES):  # a bar would be due only for the second
        memory = many_memories(tmp_path / f"memory{count}", count)
        done = subprocess.run(index_argv(memory, tmp_path / f"state{count}"),
                              capture_output=True, text=True, env=quiet_env(), check=True)
        shown.append((done.stderr, done.stdout.split(" (")[0].replace(str(count), "N")))
    assert shown[0] == shown[1] == ("", "N files scanned, N indexed, 0 removed")


def test_index_on_a_terminal_draws_a_bar_and_keeps_its_summary(tmp_path: Path) -> None:
    memory = many_memories(tmp_path / "memory")
    shown = run_in_a_terminal(index_argv(memory, tmp_path / "state"))
    assert "indexing" in shown and f"{FILES}/{FILES}" in shown  # the bar, at its end
    assert "\x1b[" in shown  # drawn with the terminal's controls
    assert f"{FILES} files scanned, {FILES} indexed, 0 removed (" in shown


def test_index_with_stdout_to_a_file_keeps_the_bar_on_the_terminal(tmp_path: Path) -> None:
    memory = many_memories(tmp_path / "memory")
    saved = tmp_path / "out.txt"
    shown = run_in_a_terminal(index_argv(memory, tmp_path / "state"), stdout=saved)
    assert "indexing" in shown and "files scanned" not in shown
    data = saved.read_text(encoding="utf-8")
    assert data.startswith(f"{FILES} files scanned, {FILES} indexed, 0 removed (")
    assert data.count("\n") == 1 and "\x1b" not in data


def test_index_on_a_terminal_draws_no_bar_for_a_few_files(tmp_path: Path) -> None:
    memory = many_memories(tmp_path / "memory", 3)
    shown = run_in_a_terminal(index_argv(memory, tmp_path / "state"))
    assert "indexing" not in shown
    assert "3 files scanned, 3 indexed, 0 removed (" in shown


def sagemem_argv(memory: Path, state: Path, *command: str) -> list[str]:
    return [sys.executable, "-m", "sagemem", "--dir", str(memory), "--state-dir", str(state),
            *command]


def exported(tmp_path: Path) -> Path:
    """An export of FILES memories, written by ``sagemem export``."""
    memory = many_memories(tmp_path / "source")
    target = tmp_path / "backup.json"
    subprocess.run(sagemem_argv(memory, tmp_path / "source-state", "export", str(target)),
                   capture_output=True, env=quiet_env(), check=True)
    return target


def test_import_off_a_terminal_prints_its_report_and_nothing_else(tmp_path: Path) -> None:
    done = subprocess.run(
        sagemem_argv(tmp_path / "fresh", tmp_path / "state", "import", str(exported(tmp_path))),
        capture_output=True, text=True, env=quiet_env(), check=True)
    assert done.stderr == ""
    created = [line for line in done.stdout.splitlines() if line.startswith("created ")]
    assert len(created) == FILES
    assert "importing" not in done.stdout and "\x1b[" not in done.stdout


def test_import_on_a_terminal_draws_a_bar_and_keeps_its_report(tmp_path: Path) -> None:
    export = exported(tmp_path)
    quiet = subprocess.run(
        sagemem_argv(tmp_path / "fresh1", tmp_path / "state1", "import", str(export)),
        capture_output=True, text=True, env=quiet_env(), check=True)
    shown = run_in_a_terminal(
        sagemem_argv(tmp_path / "fresh2", tmp_path / "state2", "import", str(export)))
    assert "importing" in shown and f"{FILES}/{FILES}" in shown
    first_line = quiet.stdout.splitlines()[0].replace("fresh1", "fresh2")
    assert first_line in shown
