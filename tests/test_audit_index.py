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


# -- what Claude Code loads of MEMORY.md: 200 lines or 25,000 bytes ------------------------

def index_store(tmp_path: Path, text: str) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text(text, encoding="utf-8")
    return MemoryStore(directory, tmp_path / "state")


def size_findings(store: MemoryStore) -> list[tuple[str, str, int | None]]:
    return [(f.category, f.severity, f.line) for f in audit(store).findings
            if f.category == "index_over_claude_code_limit"]


def test_an_index_of_200_lines_is_within_claude_codes_limit(tmp_path: Path) -> None:
    text = "".join(f"- note {n}\n" for n in range(200)) + "\n\n"  # trailing blank lines trim
    assert size_findings(index_store(tmp_path, text)) == []


def test_an_index_of_201_lines_is_a_hint_naming_the_first_line_lost(tmp_path: Path) -> None:
    store = index_store(tmp_path, "".join(f"- note {n}\n" for n in range(201)))
    assert size_findings(store) == [("index_over_claude_code_limit", "hint", 201)]
    [finding] = [f for f in audit(store).findings if f.line == 201]
    assert "move detail into topic files" in finding.message
    assert finding.data["lines"] == 201


def test_an_index_of_25000_bytes_is_within_claude_codes_limit(tmp_path: Path) -> None:
    line = "- " + "x" * 247 + "\n"  # 250 bytes: 100 lines make 25,000 bytes with the last \n
    text = line * 100
    assert len(text.strip().encode()) == 24_999
    assert size_findings(index_store(tmp_path, text.rstrip("\n") + "x\n")) == []


def test_an_index_over_25000_bytes_is_a_hint_at_the_line_past_the_limit(
        tmp_path: Path) -> None:
    text = ("- " + "é" * 200 + "\n") * 70  # 403 bytes a line, well under 200 lines
    store = index_store(tmp_path, text)
    assert size_findings(store) == [("index_over_claude_code_limit", "hint", 63)]
    assert audit(store).findings[0].data["bytes"] == len(text.strip().encode())


# -- a stale hook is one that was the description (issue 20, item 8) -----------------------

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"


def sagemem_json(directory: Path, state: Path, *args: str) -> dict:
    """``sagemem --dir … --state-dir … ARGS --json`` as a subprocess, its JSON output."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    proc = subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(directory),
                           "--state-dir", str(state), *args, "--json"],
                          capture_output=True, text=True, encoding="utf-8", timeout=60,
                          env={**env, "SAGE_MEM_SEMANTIC": "off", "SAGE_MEM_GLOBAL_DIR": "off"})
    assert proc.returncode == 0, proc
    return json.loads(proc.stdout)


def test_one_new_memory_leaves_the_hand_written_index_lines_unreported(tmp_path: Path) -> None:
    import shutil

    directory, state = tmp_path / "memory", tmp_path / "state"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns("eval"))
    assert sagemem_json(directory, state, "audit")["findings"] == []
    sagemem_json(directory, state, "new", "--type", "user", "--name", "Favourite tea",
                 "--description", "Green tea, no sugar, after lunch", "--body", "Sencha.")
    assert sagemem_json(directory, state, "audit")["findings"] == []
    sagemem_json(directory, state, "set", "user_favourite_tea.md",
                 "description=Black tea now, with milk", "--no-update-index")
    [stale] = sagemem_json(directory, state, "audit")["findings"]
    assert (stale["category"], stale["data"]["target"]) == (
        "index_stale_hook", "user_favourite_tea.md")


def test_a_hook_in_its_own_words_is_not_stale_beside_one_that_repeats_its_description(
        spelt_store: MemoryStore) -> None:
    index = spelt_store.directory / "MEMORY.md"
    index.write_text(index.read_text().replace("— a\n", "— the first one, in my words\n"))
    assert audit(spelt_store).findings == ()


def test_a_stale_hook_is_found_after_the_memory_was_renamed(spelt_store: MemoryStore) -> None:
    from sagemem.history.rename import rename_memory

    spelt_store.write("project_e.md", fields={"description": "e, said anew"})
    rename_memory(spelt_store, "project_e.md", "project_e2.md")
    [finding] = audit(spelt_store).findings
    assert (finding.category, finding.data["target"]) == ("index_stale_hook", "project_e2.md")
