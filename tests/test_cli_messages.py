"""Messages that say what happened: a missing option is missing, an over-long batch line is
too long, a state directory that is a file is not a directory, and counts agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import Run, one_line_error, store_runner

from sagemem.cli import main
from sagemem.store import MemoryStore

DEPLOY = """\
---
name: Deploy
description: Main deploys to staging.
metadata:
  type: project
---
Tag a release to deploy.
"""


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory index\n\n", encoding="utf-8")
    (directory / "project_deploy.md").write_text(DEPLOY, encoding="utf-8")
    return MemoryStore(directory, tmp_path / "state")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)


@pytest.mark.parametrize(("args", "missing"), [
    (["archive", "project_deploy"], "Missing option --reason"),
    (["write", "project_deploy", "-"], "Missing option --expect"),
    (["search"], "Missing argument QUERY"),
    (["inject"], "Missing argument QUESTION"),
])
def test_a_missing_required_value_is_called_missing(run: Run, args: list[str],
                                                    missing: str) -> None:
    err = one_line_error(run(*args, stdin=""), code=2)
    assert err.startswith(f"error: {missing}") and "Invalid value" not in err


def test_an_over_long_batch_line_says_it_is_too_long(run: Run, tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    long_line = json.dumps({"id": 1, "query": "deploy " * 20_000})
    batch.write_text(long_line + "\n" + json.dumps({"id": 2, "query": "deploy"}) + "\n")
    result = run("search", "--batch", str(batch), "--json")
    first, second = (json.loads(line) for line in result.out.splitlines())
    assert first == {"id": None, "line": 1, "error": "line 1 is longer than 64 KiB"}
    assert second["id"] == 2 and "error" not in second


def test_a_state_directory_that_is_a_file_is_not_a_directory(
        capsys: pytest.CaptureFixture[str], store: MemoryStore, tmp_path: Path) -> None:
    not_dir = tmp_path / "plain-file"
    not_dir.write_text("")
    code = main(["--dir", str(store.directory), "--state-dir", str(not_dir), "list"])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (f"error: state directory {not_dir} is not a directory; point --state-dir "
                   "or SAGE_MEM_STATE_DIR at a directory\n")


def test_counts_of_one_are_singular(run: Run) -> None:
    assert "scanned 1 file, 1 candidate, 0 paragraphs filtered" in run("search", "deploy").out
    assert run("index").out.startswith("1 file scanned, ")
