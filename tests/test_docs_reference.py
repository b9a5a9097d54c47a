"""The generated references. The CLI page (docs/reference/cli.md) is what the app says
now, has a section for every command, and a page gone stale is caught and named; the
library page (docs/reference/library.md, rendered by mkdocstrings) documents every
public name."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from tool_scripts import load_tool

import sagemem
from sagemem.cli.main import COMMANDS, root

HERE = Path(__file__).parent
LIBRARY = HERE.parent / "docs" / "reference" / "library.md"


REFERENCE = load_tool("cli_reference")


def _every_command() -> list[str]:
    """Each name in ``COMMANDS`` and each subcommand of a group, asked of the app itself
    (not of the tool, whose walk is what is under test)."""
    app = root()
    top = click.Context(app, info_name="sagemem")
    paths = []
    for name in COMMANDS:
        command = app.get_command(top, name)
        assert command is not None
        paths.append(f"sagemem {name}")
        if isinstance(command, click.Group):
            paths += [f"sagemem {name} {sub}" for sub, c in command.commands.items()
                      if not c.hidden]  # the page promises what --help lists
    return paths


def _headings(text: str) -> set[str]:
    return {line[3:] for line in text.splitlines() if line.startswith("## ")}


def test_the_cli_reference_page_is_what_the_app_generates() -> None:
    stale = REFERENCE.check()  # names the first difference and says to run --write
    assert stale is None, stale


def test_the_cli_reference_lists_every_command() -> None:
    headings = _headings(REFERENCE.PAGE.read_text(encoding="utf-8"))
    missing = [path for path in _every_command() if path not in headings]
    assert "sagemem snapshot create" in _every_command()  # the groups were walked
    assert not missing, f"no section for {missing}; run python tools/cli_reference.py --write"


def test_a_page_missing_one_command_is_reported_naming_it(tmp_path: Path) -> None:
    text = REFERENCE.page()
    start = text.index("## sagemem snapshot diff\n")
    end = text.index("## ", start + 3)
    page = tmp_path / "cli.md"
    page.write_text(text[:start] + text[end:], encoding="utf-8")
    stale = REFERENCE.check(page)
    assert stale is not None
    assert "sagemem snapshot diff" in stale
    assert "run python tools/cli_reference.py --write" in stale


def test_a_changed_help_text_is_reported_with_its_line() -> None:
    expected = REFERENCE.page()
    found = expected.replace("Print the version.", "Print the release.")
    stale = REFERENCE.difference(found, expected)
    assert stale is not None and "Print the version." in stale
    line = expected.splitlines().index(
        next(line for line in expected.splitlines() if "Print the version." in line)) + 1
    assert f"line {line} (in sagemem)" in stale


def test_the_page_does_not_depend_on_the_terminal_width(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    wide = REFERENCE.page()
    monkeypatch.setenv("COLUMNS", "40")
    assert REFERENCE.page() == wide


def test_a_pipe_in_a_table_cell_is_escaped_but_not_in_code() -> None:
    assert REFERENCE._markdown("disk|mine `a|b`", cell=True) == "disk\\|mine `a|b`"
    assert REFERENCE._markdown("<state>/x_y") == "&lt;state&gt;/x\\_y"


def test_check_from_the_command_line_exits_1_until_the_page_is_written(tmp_path: Path) -> None:
    page = tmp_path / "cli.md"
    page.write_text("# CLI reference\n", encoding="utf-8")
    assert REFERENCE.main(["--check"], page) == 1
    assert REFERENCE.main(["--write"], page) == 0
    assert REFERENCE.main(["--check"], page) == 0
    assert page.read_text(encoding="utf-8") == REFERENCE.page()


def _documented(page: Path) -> tuple[set[str], set[str]]:
    """What the page's ``::: path`` blocks render: (objects, modules rendered whole); a
    block with ``members: [...]`` renders only those members of its module."""
    objects, whole = set(), set()
    current = ""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("::: "):
            current = line[4:].strip()
            objects.add(current)
            whole.add(current)
        elif members := re.match(r"\s+members: \[(.*)\]$", line):
            whole.discard(current)
            objects.update(f"{current}.{name.strip()}" for name in members.group(1).split(","))
    return objects, whole


def _public_path(name: str) -> str:
    """Where ``sagemem.<name>`` is defined: ``__init__``'s lazy table, else the errors."""
    module, _, attribute = sagemem._LAZY.get(name, "errors").partition(":")
    return f"sagemem.{module}.{attribute or name}"


def test_the_library_reference_documents_every_public_name() -> None:
    objects, whole = _documented(LIBRARY)
    missing = [name for name in sagemem.__all__
               if _public_path(name) not in objects
               and _public_path(name).rpartition(".")[0] not in whole]
    assert "sagemem.store.MemoryStore" in objects  # the page was read
    assert not missing, f"docs/reference/library.md has no ::: block for {missing}"
