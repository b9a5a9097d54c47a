"""``sagemem import claude-code|basic-memory|openclaw|mem0`` as a shell runs them: a dry
run writes nothing, a real run creates the memories in a fresh ``sagemem init`` folder,
running it again imports nothing new, and the source stays byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from importer_helpers import FIXTURES, copy_fixture

from sagemem.files.memory import parse
from sagemem.importers.claude_project import project_key
from sagemem.store import MemoryStore
from tests.cli_run import sagemem


def every_file(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def fresh(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "fresh", tmp_path / "fresh-state")
    assert sagemem(store, "init").returncode == 0
    return store


def run_import(store: MemoryStore, *args: str, cwd: Path, home: Path
               ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(store.directory),
                           "--state-dir", str(store.state_dir), "import", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def memories(store: MemoryStore) -> dict[str, bytes]:
    return {k: v for k, v in every_file(store.directory).items() if k != "MEMORY.md"}


def check_round(store: MemoryStore, args: list[str], source: Path, cwd: Path, home: Path,
                tool: str) -> dict[str, bytes]:
    """Dry run, real run, run again; returns the memories the real run made."""
    original = every_file(source)
    before = every_file(store.directory)
    dry = run_import(store, *args, "--dry-run", cwd=cwd, home=home)
    assert dry.returncode == 0, dry.stderr
    assert f"dry run, nothing written: import from {tool}:" in dry.stdout
    assert every_file(store.directory) == before
    done = run_import(store, *args, cwd=cwd, home=home)
    assert done.returncode == 0, done.stderr
    made = memories(store)
    assert made and f"import from {tool}: {len(made)} created" in done.stdout
    again = run_import(store, *args, cwd=cwd, home=home)
    assert again.returncode == 0, again.stderr
    assert f"import from {tool}: 0 created, {len(made)} unchanged" in again.stdout
    assert memories(store) == made
    assert every_file(source) == original
    for name, data in made.items():
        assert parse(data, name).has_frontmatter
    return made


def test_import_claude_code_project_and_auto_memory(fresh: MemoryStore, tmp_path: Path) -> None:
    project = copy_fixture("claude-code/project", tmp_path / "acme")
    home = copy_fixture("claude-code/home", tmp_path / "home")
    auto = copy_fixture("claude-code/auto-memory",
                        home / ".claude" / "projects" / project_key(project) / "memory")
    made = check_round(fresh, ["claude-code"], project, project, home, "claude-code")
    assert made["user_role.md"] == (auto / "user_role.md").read_bytes()
    assert b"source: claude-code:CLAUDE.md#code-style" in made["feedback_code_style.md"]
    assert "user_about_me.md" in made


def test_import_basic_memory(fresh: MemoryStore, tmp_path: Path) -> None:
    notes = copy_fixture("basic-memory", tmp_path / "bm")
    made = check_round(fresh, ["basic-memory", str(notes)], notes, tmp_path, tmp_path,
                       "basic-memory")
    assert b"[[Coffee Bean Origins]]" in made["reference_coffee_brewing_methods.md"]


def test_import_openclaw(fresh: MemoryStore, tmp_path: Path) -> None:
    workspace = copy_fixture("openclaw", tmp_path / "workspace")
    made = check_round(fresh, ["openclaw", str(workspace)], workspace, tmp_path, tmp_path,
                       "openclaw")
    assert b"when: '2026-01-05'" in made["project_daily_log_2026_01_05.md"]


def test_import_mem0(fresh: MemoryStore, tmp_path: Path) -> None:
    source = tmp_path / "mem0"
    source.mkdir()
    (source / "export.json").write_bytes((FIXTURES / "mem0" / "export.json").read_bytes())
    made = check_round(fresh, ["mem0", str(source / "export.json")], source, tmp_path,
                       tmp_path, "mem0")
    assert len(made) == 3


def test_a_malformed_mem0_file_is_one_error_line(fresh: MemoryStore, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    before = every_file(fresh.directory)
    done = run_import(fresh, "mem0", str(tmp_path / "bad.json"), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "not valid JSON (line 1" in done.stderr
    assert every_file(fresh.directory) == before


def test_a_missing_openclaw_folder_is_one_error_line(fresh: MemoryStore, tmp_path: Path) -> None:
    done = run_import(fresh, "openclaw", str(tmp_path / "nope"), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "does not exist" in done.stderr and "nothing was imported" in done.stderr
