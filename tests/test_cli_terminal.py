"""What the CLI prints is the CLI's: control characters in memory text reach no terminal
(shown as ``\\x1b``), JSON escapes them, and human output fits 80 columns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_run import Run, store_runner

from sagemem.cli import main
from sagemem.cli.output import width_of
from sagemem.store import MemoryStore

CONTROLS = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07\x9b31m\x7f\u202eevil"
# YAML's double-quoted escapes put the same characters in the description.
HOSTILE = f"""\
---
name: Hostile
description: "Deploy notes \\e[2J\\e]0;owned\\a\\e]52;c;ZXZpbA==\\a\\x9b31m\\x7f\\u202eevil"
metadata:
  type: project
tags: [deploy]
---
Deploy with care {CONTROLS} and tabs\tkept.
"""


def strings(data: object) -> list[str]:
    if isinstance(data, dict):
        return [s for value in data.values() for s in strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in strings(value)]
    return [data] if isinstance(data, str) else []


def raw_controls(text: str) -> list[str]:
    return sorted({ch for ch in text if ch not in "\n\t" and (not ch.isprintable() or
                                                             ch == "\x7f")})


@pytest.fixture
def hostile_store(tmp_path: Path) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory index\n\n", encoding="utf-8")
    (directory / "project_hostile.md").write_text(HOSTILE, encoding="utf-8")
    return MemoryStore(directory, tmp_path / "state")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], hostile_store: MemoryStore) -> Run:
    return store_runner(capsys, hostile_store)


@pytest.mark.parametrize("args", [
    ["show", "project_hostile"], ["list"], ["read", "project_hostile"],
    ["search", "deploy"], ["inject", "how do we deploy"],
])
def test_human_output_carries_no_control_character(run: Run, args: list[str]) -> None:
    result = run(*args)
    assert raw_controls(result.out + result.err) == []
    assert "\\x1b" in result.out + result.err


def test_human_output_shows_the_escape_sequence_as_text(run: Run) -> None:
    out = run("read", "project_hostile").out
    assert "care \\x1b[2J\\x1b]0;owned\\x07\\x1b]52;c;ZXZpbA==\\x07\\x9b31m\\x7f\\u202eevil" in out
    assert "tabs\tkept." in out


@pytest.mark.parametrize("args", [
    ["show", "project_hostile", "--json"], ["list", "--json"],
    ["read", "project_hostile", "--json"], ["search", "deploy", "--json"],
])
def test_json_output_escapes_control_characters(run: Run, args: list[str]) -> None:
    result = run(*args)
    assert raw_controls(result.out) == []
    assert any(CONTROLS in text for text in strings(json.loads(result.out)))


def test_the_injected_block_carries_no_control_character(run: Run) -> None:
    data = json.loads(run("inject", "how do we deploy", "--json").out)
    assert "Deploy with care \\x1b[2J" in data["text"]
    assert raw_controls(data["text"]) == []


def test_an_error_line_shows_a_control_character_as_text(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["--dir", str(tmp_path / "a\x1b]0;title\x07b"), "list"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: ")
    assert raw_controls(err) == [] and "a\\x1b]0;title\\x07b" in err


def test_every_command_prints_through_the_one_neutralising_echo() -> None:
    """base.py's echo, and the typer-free fast paths' one printer, which neutralises
    exactly as echo does (tests/test_fast_paths.py compares their bytes)."""
    cli = Path(__file__).parent.parent / "sagemem" / "cli"
    for module in cli.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        if module.name != "base.py":
            assert "typer.echo(" not in text and "print(" not in text, module.name
        assert "sys.stdout.write" not in text and "sys.stderr.write" not in text, module.name
        if module.name == "fast.py":
            assert text.count(".write(") == text.count(".write(visible(") == 1


LONG = "project_" + "deployment-window-for-the-payments-service-on-fridays-and-hol"[:60]


@pytest.fixture
def long_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Run:
    """A folder whose names, descriptions and lines are as long as the format allows."""
    directory = tmp_path / "memory"
    directory.mkdir()
    description = "The payments service deploys only in its window " * 4
    files = [f"{LONG}.md", f"{LONG[:-1]}x.md", f"{LONG[:-1]}y.md"]
    for n, file in enumerate(files):
        (directory / file).write_text(
            f"---\nname: {file[:-3]}\ndescription: {description}\nmetadata:\n  type: project\n"
            f"---\n        indented code line that is long enough to be cut in a half view {n}\n"
            + "A paragraph about deploying in the window, " * 6 + "\n", encoding="utf-8")
    (directory / "MEMORY.md").write_text(f"- [x]({files[0]}) — {description}\n")
    run = store_runner(capsys, MemoryStore(directory, tmp_path / "state"))
    run("snapshot", "create", "--label", "a label that is long enough to matter " * 2)
    assert run("write", files[0], "-", "--expect", "0" * 12, stdin="mine\n").code == 1
    run("conflicts", "contradict", files[1], files[2], "--note", "they disagree " * 5)
    run("rollback", snapshot_id(run), "--yes")
    # after the snapshot: left by a rollback; idle and locked; a field that does not parse
    (directory / f"{LONG[:-1]}z.md").write_text(
        f"---\ndescription: {description}\nbaseline: {description}\n---\nBody.\n",
        encoding="utf-8")
    for file in (files[0], f"{LONG[:-1]}z.md"):
        os.utime(directory / file, (1.6e9, 1.6e9))  # 2020: idle past every threshold
    run("lock", files[0])
    return run


def snapshot_id(run: Run) -> str:
    return str(json.loads(run("snapshot", "list", "--json").out)[-1]["id"])


def stale_id(run: Run) -> str:
    records = json.loads(run("conflicts", "list", "--json").out)["conflicts"]
    return str(next(r["id"] for r in records if r["kind"] == "stale_version"))


@pytest.mark.parametrize("args", [
    ["list"], ["show", LONG], ["search", "deploy window"], ["audit"], ["conflicts", "list"],
    ["conflicts", "show", "STALE"], ["snapshot", "list"], ["locks"], ["ledger"],
    ["archive", "candidates"], ["rollback", "SNAPSHOT", "--dry-run"],
    ["show", f"{LONG[:-1]}z"],
])
def test_human_output_fits_80_columns(long_run: Run, args: list[str]) -> None:
    """The CLI's own layout; a memory's text (show's body, a diff) is printed as it is."""
    ids = {"STALE": stale_id, "SNAPSHOT": snapshot_id}
    result = long_run(*[ids[arg](long_run) if arg in ids else arg for arg in args])
    assert result.code == 0, result
    out = result.out.split("--- body")[0].split("\n--- disk")[0]
    wide = [line for line in (out + result.err).splitlines() if width_of(line) > 80]
    assert wide == []


@pytest.mark.parametrize("depth", [0, 60, 140], ids=["tmp", "macos-tmpdir", "deep"])
def test_the_init_hint_fits_80_columns_one_whole_command_a_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int) -> None:
    """``init`` lists the paths it made as they are; its hint on stderr is laid out: its
    words fit 80 columns, and a path too long for them stands whole on a line of its own
    (macOS's TMPDIR, /var/folders/…/T/, alone is about 50 characters)."""
    base = tmp_path / ("x" * depth) if depth else tmp_path
    memory, state = base / "memory", base / "state"
    err = store_runner(capsys, MemoryStore(memory, state))("init").err.splitlines()
    commands = [line for line in err if line.removeprefix("next:").lstrip().startswith("export")]
    assert commands == [f"next: export SAGE_MEM_DIR={memory}",
                        f"      export SAGE_MEM_STATE_DIR={state}"]
    prose = [line for line in err if line not in commands]
    assert [line for line in prose if width_of(line) > 80 and
            line.strip() not in (str(memory), str(state))] == []
    assert any(line.strip() == str(state) for line in prose)  # the state path, on its own


def test_the_injected_preamble_fits_80_columns(long_run: Run) -> None:
    text = long_run("inject", "when do we deploy payments").out
    assert text.startswith("<sagemem-memory>\n\nNotes from earlier sessions")
    preamble = text.split("\n### ")[0].splitlines()
    assert [line for line in preamble if width_of(line) > 80] == []


def test_the_side_by_side_view_keeps_leading_indentation(long_run: Run) -> None:
    out = long_run("conflicts", "show", stale_id(long_run)).out
    assert any(line.startswith("        indented code line") for line in out.splitlines())


def test_config_aligns_every_value(long_run: Run) -> None:
    header, *rows = long_run("config").out.splitlines()
    column = header.index("VALUE")
    rows = [row for row in rows if len(row) > column]
    assert len(rows) > 10 and all(row[column - 1] == " " != row[column] for row in rows)


def test_list_and_ledger_keep_a_long_file_name_whole_on_a_line_of_its_own(tmp_path: Path) -> None:
    from datetime import date, datetime, timezone

    from sagemem.cli.output import listing_text
    from sagemem.cli.output_agent import ledger_text
    from sagemem.history.ledger import load, record
    from sagemem.store import MemoryStore

    long_name = "user_" + "this_is_a_really_long_memory_name_" * 2 + "end.md"
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / long_name).write_text("---\ndescription: a note with a long name\n---\nBody.\n",
                                    encoding="utf-8")
    store = MemoryStore(memory, tmp_path / "state")
    for columns in (80, 200):
        lines = listing_text(store.list(), date(2026, 12, 1), columns)
        assert long_name in lines
    record(store.state_dir, "read", [long_name], datetime.now(timezone.utc))
    assert long_name in ledger_text(load(store.state_dir)[0], 80)
