"""Commands start fast: each loads only its own command module, and the lazy table that
makes that possible lists exactly the commands the modules register, in help order.

Speed itself is measured in ``benchmarks/bench_startup.py``, never here; these tests pin
what is imported, which is what the speed comes from.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.cli import app
from sagemem.cli.main import COMMANDS, built

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"


def imported_after(*argv: str) -> set[str]:
    """The modules a fresh process has imported once ``sagemem ARGV…`` ran."""
    code = ("import json, sys\nfrom sagemem.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\nsys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_the_lazy_table_lists_exactly_the_registered_commands_and_groups() -> None:
    for module in set(COMMANDS.values()):
        importlib.import_module(f"sagemem.cli.{module}")
    commands = [c.name or c.callback.__name__ for c in app.registered_commands]
    groups = [g.name for g in app.registered_groups]
    assert sorted(COMMANDS) == sorted([*commands, *groups])


def test_each_command_is_built_from_the_module_the_table_names() -> None:
    for name, module in COMMANDS.items():
        importlib.import_module(f"sagemem.cli.{module}")
        assert built(name).name == name


def test_config_imports_no_command_module_nor_the_store_nor_yaml() -> None:
    modules = imported_after("config")
    assert "sagemem.cli.memories" in modules
    loaded = {m for m in modules if m.startswith("sagemem.cli.")}
    assert loaded <= {"sagemem.cli.base", "sagemem.cli.main", "sagemem.cli.memories",
                      "sagemem.cli.output"}
    assert not {"sagemem.store", "yaml", "ruamel", "sagemem.search"} & modules


def test_list_imports_neither_search_history_audit_nor_other_commands() -> None:
    modules = imported_after("--dir", str(SAMPLE), "list")
    assert "sagemem.store" in modules
    heavy = {m for m in modules if m.startswith(("sagemem.search", "sagemem.audit",
                                                  "sagemem.history.snapshots", "ruamel"))}
    assert heavy == set()
    assert not {"sagemem.cli.agent", "sagemem.cli.snapshot", "sagemem.cli.audit",
                "sagemem.cli.archive", "sagemem.cli.write"} & modules


@pytest.mark.parametrize("argv", [["--help"], ["config"]])
def test_no_command_path_imports_rich_or_numpy(argv: list[str]) -> None:
    modules = imported_after(*argv)
    assert not {m for m in modules if m.split(".")[0] in {"rich", "numpy"}}
