"""The conflict queue: every refusal leaves both sides, dedup, every resolution path."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import MEMORY_TEXT, write_memory

from sagemem import (
    ConflictNotFound,
    InvalidName,
    MemoryExists,
    MemoryNotFound,
    MemoryStore,
    ResolutionRefused,
    StaleRevision,
    UnresolvedMerge,
    WriteFailed,
    init_directory,
)
from sagemem.files import atomic as atomic_mod
from sagemem.writes import conflicts, contradictions
from sagemem.writes.contradictions import open_contradictions
from sagemem.writes.guard import merge_marker_line
from sagemem.writes.resolve import resolve_invalidate, resolve_keep

TODAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
ALICE = """---
name: alice
description: about alice
metadata:
  type: user
updated: 2026-01-02  # by hand
---
Alice likes tea.

Second paragraph.
"""


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    init_directory(tmp_path / "memory", tmp_path / "state")
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    write_memory(store.directory, "user_alice.md", ALICE)
    write_memory(store.directory, "user_bob.md", MEMORY_TEXT.format(
        name="bob", description="about bob", type="user", body="Bob likes coffee."))
    return store


@pytest.fixture
def contradiction(store: MemoryStore) -> conflicts.Conflict:
    return conflicts.contradict(store, "user_alice", "user_bob", "tea or coffee?", now=NOW)


def edit_by_hand(store: MemoryStore, name: str, text: str) -> None:
    (store.directory / name).write_text(text, encoding="utf-8")


def records(store: MemoryStore) -> list[conflicts.Conflict]:
    return conflicts.list_conflicts(store.state_dir)


# -- refusals -----------------------------------------------------------------------------


def test_stale_write_keeps_both_sides(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", "edited by a person\n")
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + "mine\n", memory.revision, reason="append")
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    assert (record.kind, record.status, record.file, record.writer, record.reason) == (
        "stale_version", "open", "user_alice.md", "library", "append")
    assert record.side("disk") == {"revision": store.get("user_alice").revision,
                                   "text": "edited by a person\n"}
    assert record.side("mine") == {"based_on": memory.revision, "text": memory.text + "mine\n"}
    assert record.data["version"] == 1 and record.created
    assert (store.directory / "user_alice.md").read_text() == "edited by a person\n"


def test_create_over_an_existing_file_is_refused_and_recorded(store: MemoryStore) -> None:
    with pytest.raises(MemoryExists) as info:
        store.write("user_alice.md", "new text\n", None, writer="cli")
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    assert record.side("mine")["based_on"] is None
    assert record.side("disk")["text"] == ALICE and record.writer == "cli"


def test_write_to_a_deleted_file_is_refused_and_recorded(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    (store.directory / "user_alice.md").unlink()
    with pytest.raises(StaleRevision, match="deleted") as info:
        store.write(memory.file, memory.text, memory.revision)
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    assert record.side("disk") == {"revision": None, "text": None}
    assert not (store.directory / "user_alice.md").exists()


def test_merge_markers_are_refused_as_unresolved_merge(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    text = memory.text + "<<<<<<< HEAD\ntea\n=======\ncoffee\n>>>>>>> theirs\n"
    with pytest.raises(UnresolvedMerge, match="line 11") as info:
        store.write(memory.file, text, memory.revision)
    assert conflicts.load(store.state_dir, info.value.conflict_id or "").kind == \
        "unresolved_merge"
    assert store.get("user_alice").revision == memory.revision


def test_a_field_edit_of_a_file_left_with_markers_is_refused_as_unresolved_merge(
        store: MemoryStore) -> None:
    """Markers in the frontmatter make its YAML unparsable: the refusal says why (the
    merge), not "does not parse"."""
    memory = store.get("user_alice")
    marked = memory.text.replace("name: alice\n", "<<<<<<< ours\nname: alice\n=======\n"
                                 "name: alicia\n>>>>>>> theirs\n")
    (store.directory / memory.file).write_text(marked, encoding="utf-8")
    with pytest.raises(UnresolvedMerge, match="line 2"):
        store.write(memory.file, None, store.get(memory.file).revision,
                    fields={"description": "x"})
    assert (store.directory / memory.file).read_text(encoding="utf-8") == marked


@pytest.mark.parametrize(("text", "line"), [
    ("a\n<<<<<<< HEAD\n", 2), ("=======\n", None), (">>>>>>>\n", 1), ("x\n>>>>>>> b\n", 2),
    ("Title\n========\n", None), ("a <<<<<<< b\n", None), ("Title\n===\n", None),
])
def test_merge_markers_count_only_at_line_starts(text: str, line: int | None) -> None:
    assert merge_marker_line(text) == line


def test_external_change_is_the_kind_an_editor_session_records(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", "changed meanwhile\n")
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, "from the editor\n", memory.revision, writer="cli",
                    conflict_kind="external_change")
    assert conflicts.load(store.state_dir, info.value.conflict_id or "").kind == \
        "external_change"


def test_identical_failure_adds_no_copy(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", "edited\n")
    ids = set()
    for _ in range(3):
        with pytest.raises(StaleRevision) as info:
            store.write(memory.file, memory.text + "mine\n", memory.revision)
        ids.add(info.value.conflict_id)
    assert len(ids) == 1 and len(records(store)) == 1
    with pytest.raises(StaleRevision):
        store.write(memory.file, memory.text + "other\n", memory.revision)
    assert len(records(store)) == 2


def test_a_resolved_record_does_not_absorb_a_new_failure(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", "edited\n")
    with pytest.raises(StaleRevision) as first:
        store.write(memory.file, "mine\n", memory.revision)
    resolve_keep(store, first.value.conflict_id or "", "disk")
    with pytest.raises(StaleRevision) as second:
        store.write(memory.file, "mine\n", memory.revision)
    assert second.value.conflict_id != first.value.conflict_id


def test_fields_write_goes_through_set_fields(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    saved = store.write("user_alice", fields={"tags": ["tea"]},
                        expected_revision=memory.revision)
    assert saved.text == ALICE.replace("---\nAlice", "tags: [tea]\n---\nAlice")


def test_stale_fields_write_records_the_fields(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", ALICE.replace("tea", "green tea"))
    with pytest.raises(StaleRevision) as info:
        store.write("user_alice", fields={"valid_at": TODAY}, expected_revision=memory.revision)
    mine = conflicts.load(store.state_dir, info.value.conflict_id or "").side("mine")
    assert mine == {"based_on": memory.revision, "text": None,
                    "fields": {"valid_at": "2026-11-30"}}


def test_write_without_a_revision_is_a_type_error(store: MemoryStore) -> None:
    with pytest.raises(TypeError):
        store.write("user_alice", "text")
    with pytest.raises(ValueError, match="writer"):
        store.write("user_alice", "text", None, writer="someone")


def test_ids_sort_by_creation_time(store: MemoryStore) -> None:
    first = conflicts.contradict(store, "user_alice", "user_bob", "one", now=NOW)
    later = datetime(2026, 12, 1, tzinfo=timezone.utc)
    second = conflicts.contradict(store, "user_alice", "user_bob", "two", now=later)
    assert [r.id for r in records(store)] == [first.id, second.id]
    assert conflicts.load(store.state_dir, second.id[:12]).id == second.id


# -- readers ------------------------------------------------------------------------------


def test_readers_ignore_unknown_fields(store: MemoryStore, contradiction: conflicts.Conflict,
                                       ) -> None:
    path = store.state_dir / "conflicts" / f"{contradiction.id}.json"
    data = json.loads(path.read_text())
    data.update(version=7, severity="high", extra={"nested": [1, 2]})
    path.write_text(json.dumps(data))
    assert conflicts.load(store.state_dir, contradiction.id).kind == "contradiction"
    assert open_contradictions(store.state_dir) == [("user_alice.md", "user_bob.md")]
    resolved = resolve_invalidate(store, contradiction.id, "user_bob", today=TODAY)
    assert resolved.data["severity"] == "high"


def test_unreadable_records_are_skipped(store: MemoryStore, contradiction: conflicts.Conflict,
                                        ) -> None:
    (store.state_dir / "conflicts" / "broken.json").write_text("{not json")
    (store.state_dir / "conflicts" / "odd.json").write_text('{"kind": "weird"}')
    assert [r.id for r in records(store)] == [contradiction.id]


def test_unknown_id_is_a_clear_error(store: MemoryStore) -> None:
    with pytest.raises(ConflictNotFound, match="conflicts list"):
        conflicts.load(store.state_dir, "nope")
    with pytest.raises(ConflictNotFound):
        conflicts.load(store.state_dir, "../../etc/passwd")


# -- contradictions and invalidation ------------------------------------------------------


def test_contradiction_names_both_memories(contradiction: conflicts.Conflict,
                                           store: MemoryStore) -> None:
    assert contradiction.memories == ("user_alice.md", "user_bob.md")
    assert contradiction.reason == "tea or coffee?"
    again = conflicts.contradict(store, "user_bob", "user_alice", "tea or coffee?")
    assert again.id == contradiction.id


def test_contradiction_needs_two_existing_memories(store: MemoryStore) -> None:
    with pytest.raises(InvalidName, match="itself"):
        conflicts.contradict(store, "user_alice", "USER_ALICE.md", "self")
    with pytest.raises(MemoryNotFound) as missing:
        conflicts.contradict(store, "user_alice", "user_nobody", "x")
    assert missing.value.name == "user_nobody.md" and missing.value.directory == store.directory
    assert not conflicts.folder(store.state_dir).exists()


def test_a_contradiction_whose_other_side_was_archived_is_moot_and_stays_open(
    store: MemoryStore, contradiction: conflicts.Conflict,
) -> None:
    from sagemem.history.archive import archive_memory, restore_memory

    assert contradictions.disputed(store) == {"user_alice.md", "user_bob.md"}
    archive_memory(store, "user_bob", "Bob moved away")
    [record] = records(store)
    assert record.status == "open" and record.data == contradiction.data  # the record stays
    assert contradictions.moot_sides(store, record) == ("user_bob.md",)
    assert contradictions.disputed(store) == set()
    restore_memory(store, "user_bob")  # back from the archive, it disputes again
    assert contradictions.disputed(store) == {"user_alice.md", "user_bob.md"}


def test_a_contradiction_naming_a_deleted_memory_disputes_nothing(
    store: MemoryStore, contradiction: conflicts.Conflict,
) -> None:
    (store.directory / "user_bob.md").unlink()
    assert contradictions.moot_sides(store, records(store)[0]) == ("user_bob.md",)
    assert contradictions.disputed(store) == set()


def test_without_the_memory_folder_no_contradiction_is_called_moot(
    store: MemoryStore, contradiction: conflicts.Conflict, tmp_path: Path,
) -> None:
    store.directory.rename(tmp_path / "moved")
    assert contradictions.moot_sides(store, contradiction) == ()


def test_invalidate_adds_only_the_fields(store: MemoryStore,
                                         contradiction: conflicts.Conflict) -> None:
    before = store.get("user_alice")
    resolved = resolve_invalidate(store, contradiction.id, "user_alice",
                                  superseded_by="user_bob", today=TODAY, now=NOW)
    after = store.get("user_alice")
    assert after.text == ALICE.replace(
        "---\nAlice", "invalid_at: 2026-11-30\nsuperseded_by: user_bob.md\n---\nAlice")
    assert after.body == before.body and after.updated == before.updated
    assert (resolved.status, resolved.decision, resolved.data["appliedVersion"]) == (
        "resolved", "invalidate", after.revision)
    assert resolved.data["decidedAt"] == "2026-11-30T12:00:00+00:00"
    assert open_contradictions(store.state_dir) == []


def test_invalidating_twice_changes_nothing(store: MemoryStore,
                                            contradiction: conflicts.Conflict) -> None:
    resolve_invalidate(store, contradiction.id, "user_alice", today=TODAY)
    memory_bytes = (store.directory / "user_alice.md").read_bytes()
    record_bytes = (store.state_dir / "conflicts" / f"{contradiction.id}.json").read_bytes()
    later = date(2026, 12, 5)
    resolve_invalidate(store, contradiction.id, "user_alice", today=later)
    assert (store.directory / "user_alice.md").read_bytes() == memory_bytes
    assert (store.state_dir / "conflicts" / f"{contradiction.id}.json").read_bytes() == \
        record_bytes


def test_undo_removes_exactly_those_fields(store: MemoryStore,
                                           contradiction: conflicts.Conflict) -> None:
    resolve_invalidate(store, contradiction.id, "user_alice",
                       superseded_by="user_bob", today=TODAY)
    undone = resolve_invalidate(store, contradiction.id, "user_alice", undo=True)
    assert (store.directory / "user_alice.md").read_text() == ALICE
    assert (undone.status, undone.decision) == ("open", "undo_invalidate")
    assert undone.data["history"][0]["decision"] == "invalidate"
    assert open_contradictions(store.state_dir) == [("user_alice.md", "user_bob.md")]
    again = resolve_invalidate(store, contradiction.id, "user_alice", undo=True)
    assert again.data == undone.data


def test_undo_keeps_a_superseded_by_the_user_wrote(store: MemoryStore,
                                                   contradiction: conflicts.Conflict) -> None:
    memory = store.get("user_alice")
    store.write(memory.file, fields={"superseded_by": "user_bob.md"},
                expected_revision=memory.revision)
    before = (store.directory / "user_alice.md").read_text()
    resolve_invalidate(store, contradiction.id, "user_alice",
                       superseded_by="user_bob", today=TODAY)
    resolve_invalidate(store, contradiction.id, "user_alice", undo=True)
    assert (store.directory / "user_alice.md").read_text() == before


def test_invalidate_refuses_a_name_outside_the_pair(store: MemoryStore,
                                                    contradiction: conflicts.Conflict) -> None:
    write_memory(store.directory, "user_carol.md", ALICE)
    with pytest.raises(ResolutionRefused, match="not one of"):
        resolve_invalidate(store, contradiction.id, "user_carol")
    assert conflicts.load(store.state_dir, contradiction.id).status == "open"


def test_invalidate_failure_keeps_the_record_open(store: MemoryStore,
                                                  contradiction: conflicts.Conflict) -> None:
    edit_by_hand(store, "user_alice.md", "---\ndescription: [broken\n---\nbody\n")
    with pytest.raises(ResolutionRefused, match="stays open"):
        resolve_invalidate(store, contradiction.id, "user_alice", today=TODAY)
    assert conflicts.load(store.state_dir, contradiction.id).status == "open"
    with pytest.raises(ResolutionRefused, match="superseded-by"):
        resolve_invalidate(store, contradiction.id, "user_bob", superseded_by="nope")


# -- keeping one side ---------------------------------------------------------------------


@pytest.fixture
def stale(store: MemoryStore) -> conflicts.Conflict:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", ALICE.replace("tea", "green tea"))
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + "Mine.\n", memory.revision)
    return conflicts.load(store.state_dir, info.value.conflict_id or "")


def test_keep_disk_leaves_the_file(store: MemoryStore, stale: conflicts.Conflict) -> None:
    before = (store.directory / "user_alice.md").read_bytes()
    resolved = resolve_keep(store, stale.id, "disk", now=NOW)
    assert (store.directory / "user_alice.md").read_bytes() == before
    assert (resolved.status, resolved.decision) == ("resolved", "keep_disk")
    assert resolved.data["appliedVersion"] == stale.side("disk")["revision"]


def test_keep_mine_is_a_guarded_write(store: MemoryStore, stale: conflicts.Conflict) -> None:
    resolved = resolve_keep(store, stale.id, "mine")
    assert store.get("user_alice").text == ALICE + "Mine.\n"
    assert resolved.data["appliedVersion"] == store.get("user_alice").revision
    assert resolve_keep(store, stale.id, "mine").data == resolved.data  # a no-op
    with pytest.raises(ResolutionRefused, match="already resolved"):
        resolve_keep(store, stale.id, "disk")


def test_keep_mine_failure_keeps_the_record_open(store: MemoryStore,
                                                 stale: conflicts.Conflict) -> None:
    edit_by_hand(store, "user_alice.md", "changed again\n")
    with pytest.raises(ResolutionRefused, match="stale_version"):
        resolve_keep(store, stale.id, "mine")
    assert conflicts.load(store.state_dir, stale.id).status == "open"
    assert (store.directory / "user_alice.md").read_text() == "changed again\n"
    assert len(records(store)) == 1


def test_keep_mine_of_stale_fields_sets_them_on_the_disk_version(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", ALICE.replace("tea", "green tea"))
    with pytest.raises(StaleRevision) as info:
        store.write("user_alice", fields={"valid_at": TODAY}, expected_revision=memory.revision)
    resolve_keep(store, info.value.conflict_id or "", "mine")
    assert store.get("user_alice").valid_at == TODAY
    assert "green tea" in store.get("user_alice").text


def test_keep_mine_of_fields_whose_memory_was_deleted_is_refused_not_a_crash(
    store: MemoryStore
) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", ALICE.replace("tea", "green tea"))
    with pytest.raises(StaleRevision) as info:
        store.write("user_alice", fields={"valid_at": TODAY}, expected_revision=memory.revision)
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    data = dict(record.data)
    data["disk"] = {**data["disk"], "revision": None}  # as recorded when the file was gone
    conflicts.save(store, data, create=False)
    with pytest.raises(ResolutionRefused, match="deleted since"):
        resolve_keep(store, record.id, "mine")


def test_keep_mine_of_a_merge_stays_refused(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    with pytest.raises(UnresolvedMerge) as info:
        store.write(memory.file, "<<<<<<< a\n", memory.revision)
    with pytest.raises(ResolutionRefused, match="unresolved_merge"):
        resolve_keep(store, info.value.conflict_id or "", "mine")


def test_keep_is_refused_for_a_contradiction(store: MemoryStore,
                                             contradiction: conflicts.Conflict) -> None:
    with pytest.raises(ResolutionRefused, match="--invalidate"):
        resolve_keep(store, contradiction.id, "disk")
    assert conflicts.load(store.state_dir, contradiction.id).status == "open"


def test_invalidate_is_refused_for_a_write_conflict(store: MemoryStore,
                                                    stale: conflicts.Conflict) -> None:
    with pytest.raises(ResolutionRefused, match="--keep"):
        resolve_invalidate(store, stale.id, "user_alice")


def test_delete_removes_the_record(store: MemoryStore, stale: conflicts.Conflict) -> None:
    conflicts.delete(store, stale.id)
    assert records(store) == []
    with pytest.raises(ConflictNotFound):
        conflicts.delete(store, stale.id)


def test_a_save_landing_while_the_new_bytes_are_synced_is_not_overwritten(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = store.get("user_alice")
    real = atomic_mod.write_new

    def editor_saves_meanwhile(tmp: Path, chunks: Iterable[bytes], *, mode: int = 0o644,
                               sync: bool = True) -> None:
        real(tmp, chunks, mode=mode, sync=sync)
        edit_by_hand(store, "user_alice.md", "saved by an editor\n")

    monkeypatch.setattr(atomic_mod, "write_new", editor_saves_meanwhile)
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + "mine\n", memory.revision)
    monkeypatch.undo()
    assert (store.directory / "user_alice.md").read_text() == "saved by an editor\n"
    record = conflicts.load(store.state_dir, info.value.conflict_id or "")
    assert record.side("disk")["text"] == "saved by an editor\n"
    assert not [p for p in store.directory.iterdir() if p.name.endswith(".sagemem-tmp")]


def test_create_records_a_write_conflict_found_elsewhere(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    record = conflicts.create(store, "stale_version", memory.file, writer="consolidation",
                              reason="merge", disk=(memory.revision, memory.text),
                              mine={"based_on": "0" * 64, "text": "merged\n"}, now=NOW)
    assert record.id.startswith("20261130T120000000000Z-")
    assert (record.writer, record.side("mine")["text"]) == ("consolidation", "merged\n")
    with pytest.raises(ValueError):
        conflicts.create(store, "contradiction", memory.file, writer="cli", reason=None,
                         disk=(None, None), mine={})


def test_undo_restores_validity_fields_the_memory_already_had(store: MemoryStore) -> None:
    original = ("---\ndescription: about alice\nsuperseded_by: user_old.md\n"
                "invalid_at: 2099-01-01\n---\nAlice likes tea.\n")
    edit_by_hand(store, "user_alice.md", original)
    record = conflicts.contradict(store, "user_alice", "user_bob", "which?", now=NOW)
    resolve_invalidate(store, record.id, "user_alice", superseded_by="user_bob")
    assert "superseded_by: user_bob.md" in (store.directory / "user_alice.md").read_text()
    resolve_invalidate(store, record.id, "user_alice", undo=True)
    assert (store.directory / "user_alice.md").read_text() == original


def test_undo_of_a_file_without_frontmatter_gives_back_the_same_bytes(
    store: MemoryStore,
) -> None:
    edit_by_hand(store, "user_alice.md", "just a note\n")
    record = conflicts.contradict(store, "user_alice", "user_bob", "which?", now=NOW)
    resolve_invalidate(store, record.id, "user_alice")
    resolve_invalidate(store, record.id, "user_alice", undo=True)
    assert (store.directory / "user_alice.md").read_text() == "just a note\n"


def test_undo_after_a_later_edit_keeps_that_edit(store: MemoryStore) -> None:
    record = conflicts.contradict(store, "user_alice", "user_bob", "which?", now=NOW)
    resolve_invalidate(store, record.id, "user_alice")
    text = (store.directory / "user_alice.md").read_text()
    edit_by_hand(store, "user_alice.md", text + "A later line.\n")
    resolve_invalidate(store, record.id, "user_alice", undo=True)
    after = store.get("user_alice")
    assert after.invalid_at is None and after.body.endswith("A later line.\n")


def test_a_setext_heading_underline_is_no_merge_marker(store: MemoryStore) -> None:
    memory = store.get("user_alice")
    written = store.write(memory.file, memory.text + "\nSummary\n=======\n", memory.revision)
    record = conflicts.contradict(store, "user_alice", "user_bob", "which?", now=NOW)
    resolve_invalidate(store, record.id, "user_alice")
    assert store.get("user_alice").body.endswith("Summary\n=======\n")
    assert written.revision != memory.revision


def test_unwritable_conflicts_folder_is_a_clear_error(store: MemoryStore) -> None:
    store.state_dir.mkdir(parents=True, exist_ok=True)
    (store.state_dir / "conflicts").write_text("not a folder")
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", ALICE.replace("tea", "green tea"))
    with pytest.raises(WriteFailed):
        store.write(memory.file, memory.text + "Mine.\n", memory.revision)


def test_creating_from_fields_alone_is_refused_up_front(store: MemoryStore) -> None:
    with pytest.raises(TypeError, match="content"):
        store.write("user_new.md", fields={"description": "x"}, expected_revision=None)


# -- collapsing repeated refusals ----------------------------------------------------------

def refuse(store: MemoryStore, *, now: datetime, text: str = "mine\n",
           run_id: str | None = None, expected: str = "1" * 64) -> str:
    return conflicts.create(store, "stale_version", "user_alice.md", writer="library",
                            reason="retry loop", disk=("2" * 64, "disk\n"),
                            mine={"based_on": expected, "text": text}, now=now,
                            run_id=run_id).id


def test_repeated_refusals_through_the_store_collapse_into_one_record_with_a_count(
        store: MemoryStore) -> None:
    memory = store.get("user_alice")
    edit_by_hand(store, "user_alice.md", "edited\n")
    for _ in range(5):
        with pytest.raises(StaleRevision):
            store.write(memory.file, memory.text + "mine\n", memory.revision)
    [record] = records(store)
    assert record.count == 5 and record.data["lastSeen"] >= record.created


def test_identical_refusals_within_the_window_collapse_and_later_ones_do_not(
        store: MemoryStore) -> None:
    first = refuse(store, now=NOW)
    assert refuse(store, now=NOW + conflicts.COLLAPSE_WINDOW / 2) == first
    assert refuse(store, now=NOW + conflicts.COLLAPSE_WINDOW) == first  # from the last one
    later = refuse(store, now=NOW + conflicts.COLLAPSE_WINDOW * 3)
    assert later != first
    assert [r.count for r in records(store)] == [3, 1]


def test_one_run_id_collapses_across_the_window_and_another_run_does_not(
        store: MemoryStore) -> None:
    first = refuse(store, now=NOW, run_id="run-7")
    assert refuse(store, now=NOW + timedelta(days=1), run_id="run-7") == first
    assert refuse(store, now=NOW + timedelta(days=1, seconds=1), run_id="run-8") != first
    assert refuse(store, now=NOW, run_id=None) != first


@pytest.mark.parametrize("change", [{"text": "other\n"}, {"expected": "3" * 64}])
def test_a_refusal_with_another_text_or_revision_is_its_own_record(
        store: MemoryStore, change: dict[str, str]) -> None:
    first = refuse(store, now=NOW)
    assert refuse(store, now=NOW, **change) != first
    assert [r.count for r in records(store)] == [1, 1]


def test_a_resolved_record_absorbs_no_repeat(store: MemoryStore) -> None:
    first = refuse(store, now=NOW)
    resolve_keep(store, first, "disk")
    assert refuse(store, now=NOW) != first


# -- deleting many -------------------------------------------------------------------------

@pytest.fixture
def queue(store: MemoryStore) -> dict[str, str]:
    """An old resolved record, an old open one, a new resolved one, a new contradiction."""
    old = {"old_resolved": refuse(store, now=NOW - timedelta(days=40), text="a\n"),
           "old_open": refuse(store, now=NOW - timedelta(days=40), text="b\n"),
           "new_resolved": refuse(store, now=NOW - timedelta(days=1), text="c\n")}
    for name in ("old_resolved", "new_resolved"):
        resolve_keep(store, old[name], "disk")
    old["contradiction"] = conflicts.contradict(store, "user_alice", "user_bob", "?",
                                                now=NOW).id
    return old


@pytest.mark.parametrize(("filters", "deleted"), [
    ({"status": "resolved"}, {"old_resolved", "new_resolved"}),
    ({"status": "open"}, {"old_open", "contradiction"}),
    ({"older_than": timedelta(days=30)}, {"old_resolved", "old_open"}),
    ({"status": "resolved", "older_than": timedelta(days=30)}, {"old_resolved"}),
])
def test_delete_many_removes_exactly_the_records_that_match_every_filter(
        store: MemoryStore, queue: dict[str, str], filters: dict[str, object],
        deleted: set[str]) -> None:
    gone = conflicts.delete_many(store, now=NOW, **filters)  # type: ignore[arg-type]
    assert {r.id for r in gone} == {queue[n] for n in deleted}
    assert {r.id for r in records(store)} == {queue[n] for n in set(queue) - deleted}


def test_delete_many_without_a_filter_is_refused(store: MemoryStore,
                                                 queue: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        conflicts.delete_many(store, now=NOW)
    assert len(records(store)) == 4


def test_delete_many_spares_a_record_that_changed_after_it_was_listed(
        store: MemoryStore, queue: dict[str, str]) -> None:
    listed = conflicts.matching(store.state_dir, status="open", now=NOW)
    conflicts.delete(store, queue["old_open"])
    gone = conflicts.delete_many(store, status="open", now=NOW, only=[r.id for r in listed])
    assert [r.id for r in gone] == [queue["contradiction"]]
