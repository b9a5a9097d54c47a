"""The basic-memory, OpenClaw and mem0 readers, each against fixtures written from its
documented format."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

import pytest
from importer_helpers import FIXTURES, by_name, copy_fixture, parsed, source_of

from sagemem.errors import ImportSourceError
from sagemem.importers import basic_memory, mem0, openclaw
from sagemem.importers.basic_memory import permalink_of


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return copy_fixture("basic-memory", tmp_path / "bm")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_fixture("openclaw", tmp_path / "workspace")


def test_each_basic_memory_note_is_one_memory_with_its_relations(notes: Path) -> None:
    batch = basic_memory.read_batch(notes)
    items = by_name(batch)
    assert set(items) == {"reference_coffee_brewing_methods.md", "user_paul_graham.md",
                          "project_auth_design.md"}
    coffee = parsed(items["reference_coffee_brewing_methods.md"])
    assert coffee.title == "Coffee Brewing Methods"
    assert coffee.tags == ("coffee", "brewing")
    assert "- relates_to [[Coffee Bean Origins]]" in coffee.body
    assert "- [method] Pour over provides more flavor clarity" in coffee.body
    assert coffee.description == "Pour over provides more flavor clarity than French press"
    assert source_of(items["reference_coffee_brewing_methods.md"]) == \
        "basic-memory:coffee-brewing-methods"


def test_basic_memory_type_comes_from_the_note_type_then_the_folder(notes: Path) -> None:
    items = by_name(basic_memory.read_batch(notes))
    person = parsed(items["user_paul_graham.md"])
    assert person.type == "user"  # type: Person
    assert person.tags == ("startups", "essays")  # a comma-separated string
    auth = items["project_auth_design.md"]
    assert parsed(auth).type == "project"  # no frontmatter: the projects/ folder
    assert source_of(auth) == "basic-memory:projects/auth-design"


def test_a_permalink_is_made_from_the_path_when_the_note_has_none() -> None:
    assert permalink_of("docs/My Feature.md") == "docs/my-feature"
    assert permalink_of("design/unified_model_refactor.md") == "design/unified-model-refactor"


def test_hidden_folders_and_symlinks_are_not_read(notes: Path, tmp_path: Path) -> None:
    (notes / ".basic-memory").mkdir()
    (notes / ".basic-memory" / "state.md").write_text("internal\n")
    (tmp_path / "elsewhere.md").write_text("---\ntitle: Elsewhere\n---\nsecret\n")
    os.symlink(tmp_path / "elsewhere.md", notes / "link.md")
    batch = basic_memory.read_batch(notes)
    assert len(batch.items) == 3
    assert [s.origin for s in batch.skipped] == ["link.md"]


def test_a_missing_basic_memory_folder_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError, match="does not exist"):
        basic_memory.read_batch(tmp_path / "nope")


def test_openclaw_memory_md_is_split_by_section(workspace: Path) -> None:
    batch = openclaw.read_batch(workspace)
    items = by_name(batch)
    assert parsed(items["user_preferences.md"]).type == "user"
    assert parsed(items["project_decisions.md"]).type == "project"
    assert source_of(items["user_preferences.md"]) == "openclaw:MEMORY.md#preferences"


def test_each_openclaw_daily_log_is_one_dated_project_memory(workspace: Path) -> None:
    items = by_name(openclaw.read_batch(workspace))
    day = parsed(items["project_daily_log_2026_01_05.md"])
    assert day.type == "project"
    assert day.updated == date(2026, 1, 5) and day.when == "2026-01-05"
    assert day.description.startswith("OpenClaw daily log of 2026-01-05: Set up the staging")
    assert source_of(items["project_daily_log_2026_01_05.md"]) == \
        "openclaw:memory/2026-01-05.md"
    assert parsed(items["project_daily_log_2026_01_06_standup.md"]).title == \
        "Daily log 2026-01-06 (standup)"


def test_other_openclaw_files_are_skipped_with_the_reason(workspace: Path) -> None:
    skipped = {s.origin: s.reason for s in openclaw.read_batch(workspace).skipped}
    assert skipped["memory/notes.md"] == "not a daily log (memory/YYYY-MM-DD.md)"
    assert skipped["MEMORY.md:1 § Long-term memory"] == "a heading with no text under it"


def test_each_mem0_memory_keeps_its_id_dates_and_categories() -> None:
    items = by_name(mem0.read_batch(FIXTURES / "mem0" / "export.json"))
    trip = next(i for i in items.values() if "San Francisco" in i.text)
    memory = parsed(trip)
    assert memory.type == "user" and memory.tags == ("travel",)
    assert memory.updated == date(2024, 7, 1)
    assert memory.invalid_at == date(2024, 7, 11)  # hidden once 2024-07-10 has passed
    assert source_of(trip) == "mem0:f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c"
    assert "created: 2024-07-01\n" in trip.text  # a day, like updated:
    assert parsed(items["project_carl_is_leading_the_api_redesign_project_targeting_q2_launch.md"]
                  ).type == "project"  # metadata.type


def test_a_mem0_memory_with_nothing_typing_it_is_reference_and_noted() -> None:
    batch = mem0.read_batch(FIXTURES / "mem0" / "export.json")
    agent = next(i for i in batch.items if "staging cluster" in i.text)
    assert parsed(agent).type == "reference"
    assert any("b3c9d4e5" in note and "imported as reference" in note for note in batch.notes)
    assert [s.reason for s in batch.skipped] == ['no "memory" text']


def test_a_bare_mem0_list_reads_like_the_envelope(tmp_path: Path) -> None:
    envelope = json.loads((FIXTURES / "mem0" / "export.json").read_text())
    (tmp_path / "list.json").write_text(json.dumps(envelope["results"]))
    assert mem0.read_batch(tmp_path / "list.json") == \
        mem0.read_batch(FIXTURES / "mem0" / "export.json")


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "not valid JSON (expecting property name enclosed in double quotes at "
                     "line 1, column 2)"),
    ('{"memories": []}', "not a mem0 export"),
    ("\"text\"", "not a mem0 export"),
])
def test_a_malformed_mem0_file_is_one_error_naming_the_problem(tmp_path: Path, content: str,
                                                               problem: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    with pytest.raises(ImportSourceError, match="nothing was imported") as caught:
        mem0.read_batch(tmp_path / "bad.json")
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_readers_are_deterministic(notes: Path, workspace: Path) -> None:
    assert basic_memory.read_batch(notes) == basic_memory.read_batch(notes)
    assert openclaw.read_batch(workspace) == openclaw.read_batch(workspace)


def test_an_oversized_note_is_skipped_and_the_rest_read(notes: Path) -> None:
    (notes / "huge.md").write_text("x" * (512 * 1024 + 1))
    batch = basic_memory.read_batch(notes)
    assert len(batch.items) == 3
    assert batch.skipped[0].origin == "huge.md" and "512" in batch.skipped[0].reason


def test_every_text_a_reader_makes_parses_with_the_fields_it_meant(notes: Path,
                                                                   workspace: Path) -> None:
    batches = [basic_memory.read_batch(notes), openclaw.read_batch(workspace),
               mem0.read_batch(FIXTURES / "mem0" / "export.json")]
    for batch in batches:
        for item in batch.items:
            memory = parsed(item)
            assert item.name.startswith(f"{memory.type}_")
            assert memory.name and memory.description
            assert source_of(item).startswith(f"{batch.source}:")


def test_a_secret_in_a_mem0_memory_reaches_no_name_title_or_description(tmp_path: Path
                                                                        ) -> None:
    (tmp_path / "m.json").write_text(json.dumps([
        {"id": "m1", "memory": "The wifi password is hunter2-s3cret. Ask Ada."}]))
    [item] = mem0.read_batch(tmp_path / "m.json").items
    memory = parsed(item)
    assert "hunter2" not in item.name + memory.name + memory.description
    assert item.name.endswith("redacted_password.md")
