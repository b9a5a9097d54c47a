"""``sagemem import claude-code|basic-memory|openclaw|mem0`` as a shell runs them: a dry
run writes nothing, a real run creates the memories in a fresh ``sagemem init`` folder,
running it again imports nothing new, and the source stays byte for byte."""

from __future__ import annotations

import json
import os
import shlex
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
    assert "not valid JSON (expecting property name enclosed in double quotes at line 1, " \
           "column 2)" in done.stderr
    assert every_file(fresh.directory) == before


def test_a_missing_openclaw_folder_is_one_error_line(fresh: MemoryStore, tmp_path: Path) -> None:
    done = run_import(fresh, "openclaw", str(tmp_path / "nope"), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "does not exist" in done.stderr and "nothing was imported" in done.stderr


def test_a_source_file_that_cannot_be_read_is_named_as_a_source_not_a_memory(
        fresh: MemoryStore, tmp_path: Path) -> None:
    missing = run_import(fresh, "mem0", "nonexist.json", cwd=tmp_path, home=tmp_path)
    assert missing.returncode == 1
    assert "nonexist.json: the mem0 export cannot be read: no such file" in missing.stderr
    with open(tmp_path / "big.json", "wb") as big:
        big.truncate(17 * 1024 * 1024)  # sparse: the gate refuses it unread
    too_big = run_import(fresh, "mem0", str(tmp_path / "big.json"), cwd=tmp_path,
                         home=tmp_path)
    assert "over the 16 MiB an import reads" in too_big.stderr
    (tmp_path / "link.json").symlink_to(tmp_path / "big.json")
    linked = run_import(fresh, "mem0", str(tmp_path / "link.json"), cwd=tmp_path,
                        home=tmp_path)
    assert "cannot be read: it is a symlink" in linked.stderr
    for done in (missing, too_big, linked):
        assert "memory named" not in done.stderr and "per memory" not in done.stderr
        assert "smaller memories" not in done.stderr


def test_a_folder_readers_unreadable_files_are_skipped_as_source_files(
        fresh: MemoryStore, tmp_path: Path) -> None:
    notes = tmp_path / "bm"
    notes.mkdir()
    (notes / "ok.md").write_text("A note.\n")
    with open(notes / "huge.md", "wb") as huge:
        huge.truncate(600 * 1024)
    os.mkfifo(notes / "pipe.md")
    done = run_import(fresh, "basic-memory", str(notes), "--dry-run", cwd=tmp_path,
                      home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skipped    huge.md: it is 614,400 bytes, over the 512 KiB an import reads" \
        in done.stdout
    assert "skipped    pipe.md: not a regular file" in done.stdout
    assert "per memory" not in done.stdout


def test_the_undo_line_works_as_pasted_off_a_terminal(fresh: MemoryStore,
                                                      tmp_path: Path) -> None:
    notes = copy_fixture("basic-memory", tmp_path / "bm")
    before = every_file(fresh.directory)
    done = run_import(fresh, "basic-memory", str(notes), cwd=tmp_path, home=tmp_path)
    undo = next(li for li in done.stdout.splitlines() if li.startswith("undo: "))
    words = shlex.split(undo[len("undo: "):])
    assert words[:5] == ["sagemem", "--dir", str(fresh.directory), "--state-dir",
                         str(fresh.state_dir)]
    # from another folder, stdin not a terminal: as a script or an agent pastes it
    pasted = subprocess.run([sys.executable, "-m", "sagemem", *words[1:]], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60, check=False)
    assert pasted.returncode == 0, pasted.stderr
    assert {f: b for f, b in every_file(fresh.directory).items()
            if not f.startswith("archive/")} == before


def test_an_import_into_a_folder_not_made_yet_creates_it_but_a_dry_run_does_not(
        tmp_path: Path) -> None:
    new = MemoryStore(tmp_path / "new", tmp_path / "new-state")
    notes = copy_fixture("basic-memory", tmp_path / "bm")
    dry = run_import(new, "basic-memory", str(notes), "--dry-run", cwd=tmp_path,
                     home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert f"note: would create the memory folder {new.directory}" in dry.stdout
    assert not new.directory.exists() and not new.state_dir.exists()
    done = run_import(new, "basic-memory", str(notes), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"note: created the memory folder {new.directory}" in done.stdout
    assert (new.directory / "MEMORY.md").read_text().startswith("# Memory index")
    assert len(memories(new)) == 3


def test_adopt_says_when_the_folder_in_effect_holds_memories(fresh: MemoryStore,
                                                             tmp_path: Path) -> None:
    pytest.importorskip("sagemem.files.scopes")
    project = copy_fixture("claude-code/project", tmp_path / "acme")
    home = copy_fixture("claude-code/home", tmp_path / "home")
    auto = copy_fixture("claude-code/auto-memory",
                        home / ".claude" / "projects" / project_key(project) / "memory")
    (fresh.directory / "user_x.md").write_text("---\nname: x\ndescription: x\n"
                                               "type: user\n---\n\nx\n")
    done = run_import(fresh, "claude-code", "--adopt", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert f"adopted {auto}" in done.stdout
    assert (f"note: {fresh.directory} holds 1 memory that this project will no longer "
            "use") in done.stderr
    assert f"sagemem scope use {fresh.directory}" in done.stderr


def test_claude_md_text_before_the_first_heading_is_named_after_its_file(
        fresh: MemoryStore, tmp_path: Path) -> None:
    project = tmp_path / "acme"
    (project / ".claude").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Intro text before any heading. This is the Acme "
                                       "web app.\n\n## Testing\n\nRun pytest.\n")
    rules = tmp_path / "elsewhere-rules"
    rules.mkdir()
    (rules / "style.md").write_text("# Style\n\nUse black.\n")
    (project / ".claude" / "rules").symlink_to(rules)
    done = run_import(fresh, "claude-code", str(project), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skipped    .claude/rules: a symlinked folder, which an import never enters" \
        in done.stdout
    preamble = parse(memories(fresh)["reference_claude_md.md"], "reference_claude_md.md")
    assert preamble.name == "CLAUDE.md (preamble)"
    assert preamble.description == "Intro text before any heading."


def test_a_basic_memory_note_whose_frontmatter_does_not_parse_keeps_its_lines(
        fresh: MemoryStore, tmp_path: Path) -> None:
    notes = tmp_path / "bm"
    notes.mkdir()
    (notes / "note.md").write_text("---\ntitle: My Note\ntags: [a, b\n---\nSome text.\n")
    done = run_import(fresh, "basic-memory", str(notes), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "note: note.md: frontmatter does not parse (" in done.stdout
    text = memories(fresh)["reference_note.md"].decode()
    assert "## Frontmatter (did not parse)\n\n```yaml\ntitle: My Note\ntags: [a, b\n```\n" \
        in text


def test_mem0_dates_are_days_a_bad_one_is_noted_and_alike_notes_are_one_line(
        fresh: MemoryStore, tmp_path: Path) -> None:
    facts = [{"id": f"m{n}", "memory": f"Fact number {n}.",
              "created_at": "2024-07-01T12:00:00Z", "updated_at": "2024-07-02T08:00:00Z"}
             for n in range(3)]
    facts[0]["expiration_date"] = "someday"
    (tmp_path / "export.json").write_text(json.dumps(facts))
    done = run_import(fresh, "mem0", str(tmp_path / "export.json"), cwd=tmp_path,
                      home=tmp_path)
    assert done.returncode == 0, done.stderr
    notes = [li for li in done.stdout.splitlines() if li.startswith("note: ")]
    assert notes == [
        "note: no category or user gave it a type; imported as reference (3 memories, "
        "first mem0 m0)",
        "note: mem0 m0: its expiration_date is not a date; left out"]
    text = memories(fresh)["reference_fact_number_0.md"].decode()
    assert "created: 2024-07-01\n" in text and "updated: 2024-07-02\n" in text
