"""Field-level writes (``store.write(fields=…)``, ``sagemem set``): applied under the lock
to the text as it is then, so writers setting different fields never conflict; only a
field another writer changed since it was read is refused, naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MEMORY_TEXT, write_memory

from sagemem import MemoryStore, StaleRevision, init_directory
from sagemem.cli import main
from sagemem.errors import StaleField
from sagemem.writes import conflicts

WRITERS = 6
ROUNDS = 5


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    init_directory(tmp_path / "memory", tmp_path / "state")
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    write_memory(store.directory, "user_alice.md", MEMORY_TEXT.format(
        name="alice", description="about alice", type="user", body="Alice likes tea."))
    return store


_SETS = """
import sys
from sagemem.cli import main
directory, state, field = sys.argv[1:]
codes = [main(["--dir", directory, "--state-dir", state, "set", "user_alice",
               f"{field}={n}"]) for n in range(ROUNDS)]
sys.exit(max(codes))
"""


def test_concurrent_sets_of_different_fields_all_land(store: MemoryStore) -> None:
    fields = [f"field{i}" for i in range(WRITERS)]
    script = _SETS.replace("ROUNDS", str(ROUNDS))
    processes = [subprocess.Popen([sys.executable, "-c", script, str(store.directory),
                                   str(store.state_dir), f], stderr=subprocess.PIPE)
                 for f in fields]
    errors = [line for p in processes for line in p.communicate(timeout=300)[1].decode()
              .splitlines() if not line.startswith("warning:")]  # field0 is not a known field
    assert [p.returncode for p in processes] == [0] * WRITERS, errors
    text = store.get("user_alice.md").text
    assert all(f"{f}: {ROUNDS - 1}\n" in text for f in fields), text
    assert conflicts.list_conflicts(store.state_dir, None) == []


def test_set_without_a_revision_applies_to_the_text_as_it_is_now(store: MemoryStore) -> None:
    read = store.get("user_alice.md")
    store.write(read.file, fields={"tags": ["tea"]})
    saved = store.write(read.file, fields={"baseline": True},
                        expected_fields={"baseline": None})
    assert "tags: [tea]" in saved.text and "baseline: true" in saved.text


def test_a_field_changed_by_another_writer_is_refused_naming_it(store: MemoryStore) -> None:
    read = store.get("user_alice.md")
    store.write(read.file, fields={"description": "theirs"})
    with pytest.raises(StaleField, match="description changed since you read it") as info:
        store.write(read.file, fields={"description": "mine"},
                    expected_fields={"description": read.description})
    assert info.value.field == "description" and info.value.was == "about alice"
    assert info.value.now == "theirs"
    assert store.get("user_alice.md").description == "theirs"
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    assert record.side("mine")["fields"] == {"description": "mine"}


def test_an_expected_revision_still_guards_the_whole_file(store: MemoryStore) -> None:
    read = store.get("user_alice.md")
    store.write(read.file, fields={"tags": ["tea"]})
    with pytest.raises(StaleRevision):
        store.write(read.file, fields={"baseline": True}, expected_revision=read.revision)


def test_cli_set_of_the_same_field_after_another_writer_names_the_field(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_get = MemoryStore.get

    def read_then_someone_else_sets(self: MemoryStore, name: str) -> object:
        memory = real_get(self, name)
        monkeypatch.setattr(MemoryStore, "get", real_get)
        MemoryStore(self.directory, self.state_dir).write(memory.file,
                                                          fields={"description": "theirs"})
        return memory

    monkeypatch.setattr(MemoryStore, "get", read_then_someone_else_sets)
    code = main(["--dir", str(store.directory), "--state-dir", str(store.state_dir), "set",
                 "user_alice", "description=mine", "baseline=true"])
    err = capsys.readouterr().err
    assert code == 1 and "stale_field" in err and "description" in err
    assert "baseline" not in store.get("user_alice.md").text
