"""Claude Code's own auto memory is a sagemem folder: ``sagemem --dir`` on
``~/.claude/projects/<project>/memory/`` searches, injects, audits and snapshots it as
it is — top-level ``type``, a MEMORY.md of links with hooks in their own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemem.audit.report import audit
from sagemem.store import MemoryStore
from tests.cli_run import Run, store_runner

INDEX = """\
- [User role](user_role.md) — data scientist, new to the Rust side
- [Testing feedback](feedback_testing.md) — integration tests hit a real database, never mocks
- [Project X freeze](project_x.md) — merge freeze from 2026-03-05 for the mobile release
"""
TOPICS = {
    "user_role.md": """\
---
name: User role
description: The user is a data scientist, new to the Rust side of the codebase
type: user
---
The user is a data scientist who has written Python for ten years and is new to Rust.
Explain Rust ownership in terms of Python references when it comes up.
""",
    "feedback_testing.md": """\
---
name: Testing feedback
description: Integration tests must hit a real database, not mocks
type: feedback
---
Integration tests must hit a real database, not mocks.

**Why:** last quarter mocked tests passed while the production migration failed.

**How to apply:** when writing or changing tests under `tests/integration/`, use the
docker-compose Postgres fixture; never patch the database client.
""",
    "project_x.md": """\
---
name: Project X freeze
description: Merge freeze begins 2026-03-05 for the mobile release cut
type: project
---
Merge freeze begins 2026-03-05 for the mobile release cut; only fixes for the release
branch land after that.

**Why:** the mobile team cuts the release branch that day.

**How to apply:** flag any non-critical PR scheduled after that date.
""",
}


@pytest.fixture
def auto_memory(tmp_path: Path) -> MemoryStore:
    """A folder as Claude Code writes it, under its own projects directory."""
    directory = tmp_path / ".claude" / "projects" / "-home-u-src-ledgerly" / "memory"
    directory.mkdir(parents=True)
    (directory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    for name, text in TOPICS.items():
        (directory / name).write_text(text, encoding="utf-8")
    return MemoryStore(directory)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], auto_memory: MemoryStore) -> Run:
    return store_runner(capsys, auto_memory)


def test_top_level_type_is_read(auto_memory: MemoryStore) -> None:
    types = {m.file: m.type for m in auto_memory.list().memories}
    assert types == {"user_role.md": "user", "feedback_testing.md": "feedback",
                     "project_x.md": "project"}


def test_search_finds_the_topic_file(run: Run) -> None:
    result = run("search", "should integration tests mock the database", "--json")
    assert result.code == 0, result.err
    files = [r["file"] for r in json.loads(result.out)["results"]]
    assert files[0] == "feedback_testing.md"


def test_inject_hands_the_memory_over(run: Run) -> None:
    result = run("inject", "when does the merge freeze for the mobile release start?")
    assert result.code == 0, result.err
    assert "### project_x.md:" in result.out and "2026-03-05" in result.out


def test_audit_is_clean(run: Run) -> None:
    """No problem, and no hint about the index hooks: Claude Code writes them in its own
    words, never as copies of the descriptions."""
    result = run("audit", "--strict", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"] == []


def test_snapshot_and_rollback_restore_the_folder(run: Run, auto_memory: MemoryStore) -> None:
    created = run("snapshot", "create", "--json")
    assert created.code == 0, created.err
    snapshot = json.loads(created.out)["id"]
    (auto_memory.directory / "project_x.md").write_text("overwritten\n", encoding="utf-8")
    rolled = run("rollback", snapshot, "--yes")
    assert rolled.code == 0, rolled.err
    assert (auto_memory.directory / "project_x.md").read_text() == TOPICS["project_x.md"]


def test_index_limit_names_the_files_own_line_after_leading_blank_lines(
        auto_memory: MemoryStore) -> None:
    """Claude Code trims the index before it counts; the hint still names a line of the
    file, the first one the model never sees."""
    lines = [f"- [Note {n}](user_role.md) — hook {n}" for n in range(1, 206)]
    (auto_memory.directory / "MEMORY.md").write_text("\n\n" + "\n".join(lines) + "\n",
                                                     encoding="utf-8")
    [finding] = [f for f in audit(auto_memory).findings
                 if f.category == "index_over_claude_code_limit"]
    assert finding.line == 203  # "- [Note 201]…", the 201st line Claude Code counts
