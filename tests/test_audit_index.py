"""The audit's index checks and their repairs: a target is read as a link is (decoded,
fragment and title off), and --fix never drops a line whose file exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.audit.fix import fix
from sagemem.audit.report import audit
from sagemem.store import MemoryStore
from tests.test_audit import CLEAN

LINES = {
    "project c.md": "- [C](project%20c.md) — my hook",
    "project_a.md": "- [A](project_a.md#top) — a",
    "project_e.md": '- [E](project_e.md "the title") — e',
    "project_f.md": "- [F](./project_f.md 'title') — f",
}


@pytest.fixture
def spelt_store(tmp_path: Path) -> MemoryStore:
    """Every memory indexed, each line spelling its link differently."""
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(LINES.values()) + "\n")
    for n, (file, line) in enumerate(LINES.items()):  # the hook is the description
        (directory / file).write_text(CLEAN.format(name=f"memory {n}",
                                                   description=line.rpartition("— ")[2],
                                                   type="project", body=str(10 ** n)))
    return MemoryStore(directory, tmp_path / "state")


def test_encoded_fragment_and_titled_targets_are_indexed_and_not_dangling(
        spelt_store: MemoryStore) -> None:
    assert audit(spelt_store).findings == ()


def test_fix_leaves_differently_spelt_index_lines_alone(spelt_store: MemoryStore) -> None:
    before = (spelt_store.directory / "MEMORY.md").read_bytes()
    assert fix(spelt_store).changes == ()
    assert (spelt_store.directory / "MEMORY.md").read_bytes() == before


def test_fix_drops_a_dangling_line_only_while_its_file_is_missing(
        spelt_store: MemoryStore) -> None:
    (spelt_store.directory / "project_a.md").unlink()
    report = audit(spelt_store)
    assert [f.category for f in report.findings] == ["dangling_index_entry"]
    (spelt_store.directory / "project_a.md").write_text("---\ndescription: back\n---\nb\n")
    before = (spelt_store.directory / "MEMORY.md").read_bytes()
    result = fix(spelt_store, report, snapshot=False)
    assert [s.file for s in result.skipped] == ["MEMORY.md"]
    assert (spelt_store.directory / "MEMORY.md").read_bytes() == before


def test_fix_drops_the_dangling_encoded_line(spelt_store: MemoryStore) -> None:
    (spelt_store.directory / "project c.md").unlink()
    fix(spelt_store, snapshot=False)
    text = (spelt_store.directory / "MEMORY.md").read_text()
    assert "project%20c.md" not in text and "project_a.md#top" in text


def test_a_name_with_a_hash_is_read_as_sagemem_writes_it(tmp_path: Path) -> None:
    from sagemem.files.indexfile import format_entry

    directory = tmp_path / "memory"
    directory.mkdir()
    lines = [format_entry("C sharp", "C# notes.md", "c"), format_entry("c", "c#.md", "c")]
    (directory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    for n, file in enumerate(["C# notes.md", "c#.md"]):
        (directory / file).write_text(CLEAN.format(name=f"memory {n}", description="c",
                                                   type="project", body=str(10 ** n)))
    assert audit(MemoryStore(directory, tmp_path / "state")).findings == ()


def test_an_index_hook_that_no_longer_matches_the_description_is_a_hint(
        spelt_store: MemoryStore) -> None:
    spelt_store.write("project_a.md", fields={"description": "a, said anew"})
    [finding] = audit(spelt_store).findings
    assert (finding.category, finding.severity, finding.file) == (
        "index_stale_hook", "hint", "MEMORY.md")
    assert finding.line == 4 and "project_a.md" in finding.message


def test_an_updated_index_hook_is_no_longer_reported(spelt_store: MemoryStore) -> None:
    spelt_store.write("project_f.md", fields={"description": "f, said anew"})
    assert spelt_store.set_index_hook("project_f.md", "f, said anew")
    assert audit(spelt_store).findings == ()
