"""Confirmation, one rule for every command that asks: off a terminal nothing is asked
(--yes is required, exit 2); declining at a terminal prints ``cancelled``, exit 1."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from sagemem.cli import base as cli
from sagemem.store import MemoryStore
from tests.cli_run import Run, one_line_error, store_runner

ASKING = {
    "purge": ["purge", "project_gone"],
    "rollback": ["rollback", "{snapshot}"],
    "audit-fix": ["audit", "--fix"],
    "conflicts-delete": ["conflicts", "delete", "{conflict}"],
    "conflicts-delete-bulk": ["conflicts", "delete", "--status", "open"],
    "candidates-apply": ["archive", "candidates", "--apply"],
}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    store.directory.mkdir()
    (store.directory / "MEMORY.md").write_text("# Memory index\n\n")
    store.new(type="project", name="Deploy", description="How we deploy", body="kubectl\n")
    store.new(type="project", name="Old", description="An old plan", body="ancient\n",
              today=date(2020, 1, 1))
    store.new(type="project", name="Gone", description="Gone", body="x\n")
    return store


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)


@pytest.fixture
def ids(run: Run, store: MemoryStore) -> dict[str, str]:
    assert run("archive", "project_gone", "--reason", "done").code == 0
    snapshot = json.loads(run("snapshot", "create", "--json").out)["id"]
    (store.directory / "project_deploy.md").write_text("changed since the snapshot\r\n")
    conflict = json.loads(run("conflicts", "contradict", "project_deploy", "project_old",
                              "--note", "which?", "--json").out)["id"]
    return {"snapshot": snapshot, "conflict": conflict}


def tree(store: MemoryStore) -> dict[str, bytes]:
    root = store.directory.parent
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {"locks", "index"} & set(p.parts)}


def command(name: str, ids: dict[str, str]) -> list[str]:
    return [word.format(**ids) for word in ASKING[name]]


@pytest.mark.parametrize("name", ASKING)
def test_off_a_terminal_a_confirming_command_needs_yes_and_changes_nothing(
        run: Run, store: MemoryStore, ids: dict[str, str], name: str) -> None:
    before = tree(store)
    error = one_line_error(run(*command(name, ids), stdin="y\n"), code=2)
    assert "--yes is required off a terminal" in error
    assert tree(store) == before


@pytest.mark.parametrize("name", [n for n in ASKING if n != "candidates-apply"])
def test_declining_at_a_terminal_prints_cancelled_and_exits_1(
        run: Run, store: MemoryStore, ids: dict[str, str], name: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "interactive", lambda: True)
    before = tree(store)
    result = run(*command(name, ids), stdin="n\n")
    assert (result.code, result.out.strip()) == (1, "")  # click's input() echoes one space
    assert result.err.endswith("cancelled\n") and "error:" not in result.err
    assert tree(store) == before


@pytest.mark.parametrize("name", ASKING)
def test_yes_goes_ahead_off_a_terminal(run: Run, store: MemoryStore, ids: dict[str, str],
                                       name: str) -> None:
    before = tree(store)
    result = run(*command(name, ids), "--yes")
    assert result.code == 0, result
    assert tree(store) != before
