"""A title and a description are bounded on every write, and so is MEMORY.md (issue 20,
item 12): ``fields.over_bound``, ``guard.refuse_long_fields``, ``indexfile.cut`` and the
index's own limit in ``MemoryFolder._write_index`` — through the CLI as a shell runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sagemem.errors import FieldTooLong, IndexTooLarge
from sagemem.files import indexfile
from sagemem.files.fields import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS
from sagemem.files.paths import MAX_INDEX_BYTES
from sagemem.store import MemoryStore
from tests.cli_run import sagemem

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
LONG = ("The user keeps every detail of the deploy in this one sentence, " * 5).strip()
HAND_WRITTEN = "word " * 2000  # 10,000 characters, as an editor can write them


@pytest.fixture
def sample(tmp_path: Path) -> MemoryStore:
    folder = tmp_path / "memory"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("eval"))
    return MemoryStore(folder, tmp_path / "state")


def folder_bytes(store: MemoryStore) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(store.directory.glob("*.md"))}


def refused_in_one_line(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 1, result
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert f"the {what} is " in result.stderr and "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_bound_is_past_a_sentence_and_under_the_issue_s_long_lines() -> None:
    assert 300 <= MAX_DESCRIPTION_CHARS <= 500 < len(LONG) + 200
    assert len(LONG) > MAX_DESCRIPTION_CHARS


def test_every_cli_write_refuses_a_description_over_the_bound_and_writes_nothing(
        sample: MemoryStore, tmp_path: Path) -> None:
    before = folder_bytes(sample)
    pets = sample.get("user_pets.md")
    text = pets.text.replace(pets.description, LONG)
    (tmp_path / "new.md").write_text(text, encoding="utf-8")
    attempts = {
        "new": ("new", "--type", "project", "--name", "Deploy notes", "--description", LONG,
                "--body", "x"),
        "remember": ("remember", "--type", "project", "--title", "Deploy notes",
                     "--description", LONG, "--body", "x"),
        "remember (update)": ("remember", "--type", "user", "--title", "家里的猫",
                              "--description", LONG, "--body", "x"),
        "set": ("set", "user_pets", f"description={LONG}"),
        "write": ("write", "user_pets", "--from", str(tmp_path / "new.md"), "--expect",
                  pets.revision),
    }
    for command, args in attempts.items():
        result = sagemem(sample, *args)
        refused_in_one_line(result, "description")
        assert folder_bytes(sample) == before, command


def test_a_title_over_its_bound_is_refused(sample: MemoryStore) -> None:
    before = folder_bytes(sample)
    title = "Deploy " * (MAX_NAME_CHARS // 7 + 1)
    refused_in_one_line(sagemem(sample, "new", "--type", "project", "--name", title,
                                "--description", "x", "--body", "x"), "title")
    refused_in_one_line(sagemem(sample, "set", "user_pets", f"name={title}"), "title")
    assert folder_bytes(sample) == before


def test_mcp_and_the_library_refuse_it_too(sample: MemoryStore) -> None:
    with pytest.raises(FieldTooLong) as refused:
        sample.new(type="project", name="Deploy notes", description=LONG, body="x")
    assert (refused.value.field, refused.value.limit) == ("description", MAX_DESCRIPTION_CHARS)
    pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")
    from sagemem.mcp_server.tools import MemoryTools

    before = folder_bytes(sample)
    with pytest.raises(FieldTooLong):
        MemoryTools(sample).create_memory(type="project", name="Deploy notes",
                                          description=LONG, body="x")
    assert folder_bytes(sample) == before


def test_a_long_description_written_by_hand_is_read_whole_and_stays_editable(
        sample: MemoryStore) -> None:
    path = sample.directory / "user_pets.md"
    pets = sample.get("user_pets.md")
    path.write_text(pets.text.replace(pets.description, HAND_WRITTEN.strip()), "utf-8")
    shown = sagemem(sample, "show", "user_pets", "--json")
    assert shown.returncode == 0 and HAND_WRITTEN.strip() in shown.stdout
    tagged = sagemem(sample, "set", "user_pets", "tags=[cat]")
    assert tagged.returncode == 0, tagged.stderr
    assert sample.get("user_pets.md").description == HAND_WRITTEN.strip()


def test_the_audit_hints_at_a_long_hand_written_description(sample: MemoryStore) -> None:
    pets = sample.get("user_pets.md")
    (sample.directory / "user_pets.md").write_text(
        pets.text.replace(pets.description, HAND_WRITTEN.strip()), "utf-8")
    findings = json.loads(sagemem(sample, "audit", "--json").stdout)["findings"]
    long = [f for f in findings if f["category"] == "description_over_limit"]
    assert [(f["severity"], f["file"], f["line"], f["data"]) for f in long] == [
        ("hint", "user_pets.md", 3, {"length": 9999, "limit": MAX_DESCRIPTION_CHARS})]


def test_an_index_line_keeps_a_long_hand_written_description_to_its_bound(
        sample: MemoryStore) -> None:
    (sample.directory / "project_notes.md").write_text(
        f"---\nname: Notes\ndescription: {HAND_WRITTEN.strip()}\n---\nbody\n", "utf-8")
    fixed = sagemem(sample, "audit", "--fix", "--yes")
    assert fixed.returncode == 0, fixed.stderr
    line = next(ln for ln in (sample.directory / "MEMORY.md").read_text("utf-8").splitlines()
                if "(project_notes.md)" in ln)
    assert line.endswith("…") and len(line) < MAX_DESCRIPTION_CHARS + 40
    findings = json.loads(sagemem(sample, "audit", "--json").stdout)["findings"]
    stale = [f for f in findings if f["category"] == "index_stale_hook"]
    assert all("project_notes.md" not in f["message"] for f in stale)


def test_cut_ends_at_a_word_within_the_bound() -> None:
    assert indexfile.cut("short", 10) == "short"
    assert indexfile.cut("alpha beta gamma", 12) == "alpha beta…"
    assert len(indexfile.cut("猫" * 400, 300)) == 300


def test_a_write_that_would_take_memory_md_past_its_limit_is_refused(
        sample: MemoryStore) -> None:
    index = sample.directory / "MEMORY.md"
    text = index.read_text("utf-8")
    filler = "<!-- " + "x" * (MAX_INDEX_BYTES - len(text.encode()) - 40) + " -->\n"
    index.write_text(text + filler, "utf-8")
    before = folder_bytes(sample)
    result = sagemem(sample, "new", "--type", "project", "--name", "Deploy notes",
                     "--description", "Where the deploy notes live", "--body", "x")
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: MEMORY.md would be ")
    assert "over its limit of 16 MiB; nothing was written" in result.stderr
    assert folder_bytes(sample) == before  # the memory file was taken back
    remembered = sagemem(sample, "remember", "--type", "project", "--title", "Deploy notes",
                         "--body", "x")
    assert remembered.returncode == 1 and remembered.stderr.startswith(
        "error: MEMORY.md would be ")
    assert folder_bytes(sample) == before  # refused before the memory was written


def test_index_too_large_is_a_file_too_large() -> None:
    error = IndexTooLarge("MEMORY.md", MAX_INDEX_BYTES + 1, MAX_INDEX_BYTES)
    assert (error.size, error.limit) == (MAX_INDEX_BYTES + 1, MAX_INDEX_BYTES)
