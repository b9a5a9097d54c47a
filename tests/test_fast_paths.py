"""The fast paths of ``sagemem/launch.py`` answer byte for byte as the full CLI does, or
decline and let it answer.

Each case runs two real processes over the same folder: ``python -m sagemem ARGS`` (the
launcher, which tries ``FAST_PATHS`` first) and the full typer CLI alone
(``sagemem.cli.main``); their stdout, stderr and exit code must be identical. Each
launcher run also records whether typer was loaded, which says which path answered: the
plain shapes must be taken by the fast path (else the speed is gone unnoticed), every
other shape must reach the full CLI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"

LAUNCHER = """
import atexit, os, sys
def mark():
    with open(os.environ["FAST_PATH_MARK"], "w") as out:
        out.write(str("typer" in sys.modules))
atexit.register(mark)
from sagemem.launch import main
main(sys.argv[1:])
"""
FULL_CLI = "import sys\nfrom sagemem.cli import main\nsys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class Ran:
    code: int
    out: bytes
    err: bytes


def _env(home: Path, columns: int, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    return {**env, "HOME": str(home), "COLUMNS": str(columns), "LINES": "24",
            "PYTHONIOENCODING": "utf-8", **extra}


def _run(code: str, argv: list[str], env: dict[str, str], cwd: Path) -> Ran:
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                          env=env, cwd=cwd, timeout=60)
    return Ran(done.returncode, done.stdout, done.stderr)


def both(tmp_path: Path, argv: list[str], columns: int = 80,
         extra: dict[str, str] | None = None) -> tuple[Ran, Ran, bool]:
    """(launcher, full CLI, whether the launcher answered without typer)."""
    mark = tmp_path / "mark"
    env = _env(tmp_path / "home", columns, {**(extra or {}), "FAST_PATH_MARK": str(mark)})
    (tmp_path / "home").mkdir(exist_ok=True)
    fast = _run(LAUNCHER, argv, env, tmp_path)
    full = _run(FULL_CLI, argv, env, tmp_path)
    return fast, full, mark.read_text() == "False"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "sample"))


@pytest.fixture
def awkward(tmp_path: Path) -> Path:
    """Files a hand-edited folder holds: a description with control characters (an
    escape that would clear the screen, C1, DEL), broken frontmatter, bytes that are not
    UTF-8, no frontmatter, a wide file name, CJK text."""
    folder = tmp_path / "awkward"
    folder.mkdir()
    files = {
        "user_controls.md": "---\nname: controls\ndescription: \"clear \\e[2J bell \\a "
                            "c1 \\x85 del \\x7f\"\ntype: user\ntags: [x]\n---\nbody\n",
        "project_broken.md": "---\nname: [unclosed\ndescription: oops: : :\n---\nbody\n",
        "feedback_plain.md": "no frontmatter at all\n",
        "reference_" + "a-very-long-file-name-wider-than-its-column" * 2 + ".md":
            "---\nname: long\ndescription: long name\ntype: reference\ntags: [x]\n---\n",
        "user_中文.md": "---\nname: 中文\ndescription: 我哪天可以不去公司坐班\ntype: user\n---\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "project_latin1.md").write_bytes(b"---\nname: caf\xe9\n---\n\xff\xfe body\n")
    return folder


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


LIST_SHAPES = [[], ["--json"], ["--active"], ["--type", "user"], ["--type", "USER"],
               ["--tag", "x"], ["--type", "feedback", "--active", "--json"],
               ["--json", "--tag", "x", "--active"], ["--type", "reference", "--tag", "x"]]


def _same(fast: Ran, full: Ran) -> None:
    assert (fast.code, fast.out.decode(), fast.err.decode()) == (
        full.code, full.out.decode(), full.err.decode())


@pytest.mark.parametrize("folder", ["sample", "awkward", "empty"])
@pytest.mark.parametrize("shape", LIST_SHAPES, ids=" ".join)
def test_list_answers_as_the_full_cli_without_typer(
        request: pytest.FixtureRequest, tmp_path: Path, folder: str, shape: list[str]) -> None:
    memory = request.getfixturevalue(folder)
    fast, full, took_fast_path = both(tmp_path, ["--dir", str(memory), "list", *shape])
    _same(fast, full)
    assert fast.code == 0 and took_fast_path


@pytest.mark.parametrize("shape", [[], ["--json"]], ids=" ".join)
def test_list_in_a_wide_terminal_and_with_a_global_layer_answers_the_same(
        sample: Path, awkward: Path, tmp_path: Path, shape: list[str]) -> None:
    fast, full, took_fast_path = both(tmp_path, ["--dir", str(sample), "list", *shape],
                                      columns=132, extra={"SAGE_MEM_GLOBAL_DIR": str(awkward)})
    _same(fast, full)
    assert b"[global]" in fast.out or b'"layer": "global"' in fast.out
    assert took_fast_path


def test_list_of_a_missing_folder_is_the_full_clis_one_line_error(tmp_path: Path) -> None:
    fast, full, took_fast_path = both(tmp_path, ["--dir", str(tmp_path / "nowhere"), "list"])
    _same(fast, full)
    assert fast.code == 1 and fast.err.startswith(b"error: ") and fast.err.count(b"\n") == 1
    assert not took_fast_path


@pytest.mark.parametrize("shape", [["--help"], ["--type", "bogus"], ["--type=user"],
                                   ["--bogus"], ["extra"], ["--json", "--json"], ["--tag"],
                                   ["--tag", "--json"]], ids=" ".join)
def test_list_declines_every_other_shape_and_the_full_cli_answers(
        sample: Path, tmp_path: Path, shape: list[str]) -> None:
    fast, full, took_fast_path = both(tmp_path, ["--dir", str(sample), "list", *shape])
    _same(fast, full)
    assert not took_fast_path


def test_a_settings_warning_is_left_to_the_full_cli(sample: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "settings.json").write_text('{"no_such_setting": 1}', encoding="utf-8")
    for command in ("list", "config"):
        fast, full, took_fast_path = both(
            tmp_path, ["--dir", str(sample), "--state-dir", str(state), command])
        _same(fast, full)
        assert b"warning: " in fast.err and not took_fast_path


@pytest.mark.parametrize("shape", [[], ["--json"]], ids=" ".join)
def test_config_answers_as_the_full_cli_without_typer(
        sample: Path, tmp_path: Path, shape: list[str]) -> None:
    for argv in (["config", *shape], ["--dir", str(sample), "config", *shape],
                 ["--dir", str(sample), "--state-dir", str(tmp_path / "s"), "config", *shape]):
        fast, full, took_fast_path = both(tmp_path, argv,
                                          extra={"SAGE_MEM_MAX_RESULTS": "7"})
        _same(fast, full)
        assert fast.code == 0 and took_fast_path


@pytest.mark.parametrize("shape", [["--help"], ["--bogus"], ["--json", "x"]], ids=" ".join)
def test_config_declines_every_other_shape(tmp_path: Path, shape: list[str]) -> None:
    fast, full, took_fast_path = both(tmp_path, ["config", *shape])
    _same(fast, full)
    assert not took_fast_path


def _to_a_closed_pipe(code: str, argv: list[str], env: dict[str, str]) -> Ran:
    read, write = os.pipe()
    os.close(read)  # the reader is gone (``| head`` done) before anything is written
    try:
        done = subprocess.run([sys.executable, "-c", code, *argv], stdout=write,
                              stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(write)
    return Ran(done.returncode, b"", done.stderr)


@pytest.mark.parametrize("command", [["list"], ["list", "--json"], ["config"]], ids=" ".join)
def test_a_reader_gone_ends_both_paths_with_exit_1_and_nothing_said(
        sample: Path, tmp_path: Path, command: list[str]) -> None:
    env = _env(tmp_path, 80, {"FAST_PATH_MARK": str(tmp_path / "mark")})
    argv = ["--dir", str(sample), *command]
    fast, full = (_to_a_closed_pipe(code, argv, env) for code in (LAUNCHER, FULL_CLI))
    assert fast == full == Ran(1, b"", b"")
    assert (tmp_path / "mark").read_text() == "False"
