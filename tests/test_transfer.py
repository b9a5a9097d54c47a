"""The library side of moving memories: ``export_folder``, ``read_export`` and the one
apply path every import uses, ``apply_batch``, with any source's Batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemem.errors import ExportTargetRefused, NotAnExport
from sagemem.history import ledger
from sagemem.history.locks import lock_memory, locked_names
from sagemem.history.snapshots import list_snapshots
from sagemem.store import MemoryStore
from sagemem.transfer.apply import apply_batch
from sagemem.transfer.export import export_folder, export_text, write_export
from sagemem.transfer.incoming import Batch, Incoming
from sagemem.transfer.read_export import parse_export, read_export
from sagemem.writes.caps import Caps
from sagemem.writes.conflicts import list_conflicts

SECRET = "sk-proj-4fT9qLm2Xv7RbN8kP3wZ1cY6hJ5dS0aE"


def memory_text(title: str, body: str) -> str:
    return f"---\nname: {title}\ndescription: about {title}\ntype: user\n---\n{body}\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# Memory index\n\n- [A](user_a.md) — about A\n")
    (folder / "user_a.md").write_text(memory_text("A", "alpha body"))
    return MemoryStore(folder, tmp_path / "state")


def batch(*items: Incoming, source: str = "mem0") -> Batch:
    return Batch(source, items)


def test_same_name_and_text_is_unchanged_and_writes_nothing(store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("user_a.md", memory_text("A", "alpha body"),
                                               "mem0: 1")))
    assert [p.file for p in report.unchanged] == ["user_a.md"]
    assert report.snapshot is None and not (store.state_dir / "snapshots").exists()


def test_another_text_under_a_known_name_is_a_conflict_never_an_overwrite(
        store: MemoryStore) -> None:
    before = (store.directory / "user_a.md").read_bytes()
    report = apply_batch(store, batch(Incoming("user_a", memory_text("A", "other"), "m:1")))
    assert (store.directory / "user_a.md").read_bytes() == before
    [record] = list_conflicts(store.state_dir)
    assert report.conflicted[0].conflict_id == record.id
    assert record.side("mine")["text"] == memory_text("A", "other")
    assert record.side("disk")["text"] == before.decode()


def test_a_new_name_is_created_with_its_index_line_and_a_snapshot_first(
        store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("user_b.md", memory_text("B", "beta"), "m:2")))
    assert [p.file for p in report.created] == ["user_b.md"]
    assert (store.directory / "user_b.md").read_text() == memory_text("B", "beta")
    index = (store.directory / "MEMORY.md").read_text()
    assert "- [A](user_a.md) — about A" in index and "(user_b.md)" in index
    assert [s.id for s in list_snapshots(store).snapshots] == [report.snapshot]


def test_secrets_are_redacted_on_the_way_in_and_a_second_import_is_unchanged(
        store: MemoryStore) -> None:
    item = Incoming("user_key.md", memory_text("Key", f"the key is {SECRET}"), "m:3")
    first = apply_batch(store, batch(item))
    assert SECRET not in (store.directory / "user_key.md").read_text()
    assert any("redacted" in note for note in first.notes)
    assert [p.file for p in apply_batch(store, batch(item)).unchanged] == ["user_key.md"]


def test_an_exact_duplicate_body_under_a_new_name_is_skipped(store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("user_copy.md", memory_text("Copy",
                                                                           "alpha  body"),
                                               "m:4")))
    assert not report.created and "user_a.md" in report.skipped[0].reason
    assert not (store.directory / "user_copy.md").exists()


def test_the_layer_caps_refuse_a_large_body_as_a_skip_with_its_reason(tmp_path: Path,
                                                                      store: MemoryStore
                                                                      ) -> None:
    small = MemoryStore(store.directory, store.state_dir, caps=Caps(hard_body_bytes=10))
    report = apply_batch(small, batch(Incoming("user_big.md", memory_text("Big", "x" * 50),
                                               "m:5")))
    assert not report.created and report.skipped[0].origin == "m:5"
    assert not (store.directory / "user_big.md").exists()


def test_a_name_the_folder_cannot_take_is_skipped(store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("../escape.md", "x", "m:6"),
                                      Incoming("MEMORY.md", "x", "m:7")))
    assert [s.origin for s in report.skipped] == ["m:6", "m:7"] and not report.created


def test_dry_run_reports_the_same_plan_and_writes_nothing(store: MemoryStore) -> None:
    items = batch(Incoming("user_b.md", memory_text("B", "beta"), "m:2"),
                  Incoming("user_a.md", memory_text("A", "changed"), "m:1"))
    preview = apply_batch(store, items, dry_run=True)
    assert ([p.file for p in preview.created], [p.file for p in preview.conflicted]) == \
        (["user_b.md"], ["user_a.md"])
    assert sorted(p.name for p in store.directory.iterdir()) == ["MEMORY.md", "user_a.md"]
    assert not list_conflicts(store.state_dir)


def test_replace_overwrites_archives_the_rest_and_copies_the_index(store: MemoryStore) -> None:
    (store.directory / "user_gone.md").write_text(memory_text("Gone", "gone body"))
    exported = Batch("export", (Incoming("user_a.md", memory_text("A", "new"), "e:a"),),
                     index="# Memory index\n\n- [A](user_a.md) — about A\n")
    report = apply_batch(store, exported, mode="replace")
    assert (store.directory / "user_a.md").read_text() == memory_text("A", "new")
    assert report.archived == ("user_gone.md",)
    assert (store.directory / "archive" / "user_gone.md").exists()
    assert (store.directory / "MEMORY.md").read_text() == exported.index
    assert report.snapshot is not None


def test_replace_leaves_a_locked_memory_as_it_is(store: MemoryStore) -> None:
    lock_memory(store, "user_a.md")
    before = (store.directory / "user_a.md").read_bytes()
    report = apply_batch(store, batch(Incoming("user_a.md", memory_text("A", "new"), "e:a")),
                         mode="replace")
    assert (store.directory / "user_a.md").read_bytes() == before
    assert "locked" in report.skipped[0].reason


def test_archived_and_locked_items_land_in_archive_and_are_locked(store: MemoryStore) -> None:
    apply_batch(store, batch(Incoming("user_old.md", memory_text("Old", "old body"), "e:o",
                                      archived=True, locked=True)))
    assert (store.directory / "archive" / "user_old.md").exists()
    assert "user_old.md" in locked_names(store)
    assert "user_old.md" not in (store.directory / "MEMORY.md").read_text()


def test_the_export_holds_every_memory_its_lock_ledger_and_index(store: MemoryStore) -> None:
    lock_memory(store, "user_a.md")
    from datetime import datetime, timezone

    ledger.record(store.state_dir, "read", ["user_a.md"], datetime.now(timezone.utc))
    document = export_folder(store)
    assert (document["format"], document["format_version"]) == ("sagemem-export", 1)
    [item] = document["memories"]
    assert (item["file"], item["locked"], item["ledger"]["read"]) == ("user_a.md", True, 1)
    assert item["text"] == (store.directory / "user_a.md").read_text()
    assert document["index"]["text"] == (store.directory / "MEMORY.md").read_text()
    assert "conflicts" not in document and "conflicts" in export_folder(store, conflicts=True)


def test_a_file_that_is_not_utf8_travels_in_base64_and_is_skipped_on_import(
        store: MemoryStore, tmp_path: Path) -> None:
    (store.directory / "user_bin.md").write_bytes(b"---\nname: B\n---\n\xff\xfe\n")
    document = export_folder(store)
    [binary] = [m for m in document["memories"] if m["file"] == "user_bin.md"]
    assert binary["encoding"] == "base64" and "text" not in binary
    read = parse_export(export_text(document), tmp_path / "e.json")
    assert [s.origin for s in read.skipped] == ["export: user_bin.md"]


def test_a_memory_whose_text_no_longer_matches_its_revision_is_skipped(
        store: MemoryStore, tmp_path: Path) -> None:
    document = export_folder(store)
    document["memories"][0]["text"] += "tampered"
    read = parse_export(json.dumps(document), tmp_path / "e.json")
    assert not read.items and "revision" in read.skipped[0].reason


@pytest.mark.parametrize(("text", "reason"), [
    ('{"format": "sagemem-export", "format_version": 2, "memories": []}', "newer"),
    ('{"format": "sagemem-export", "format_version": 1, "memo', "cut short"),
    ('["a list"]', "not an object"),
    ('{"format": "other", "format_version": 1}', "format"),
])
def test_what_is_not_a_readable_export_is_refused_whole(tmp_path: Path, text: str,
                                                        reason: str) -> None:
    (tmp_path / "e.json").write_text(text)
    with pytest.raises(NotAnExport, match=reason):
        read_export(tmp_path / "e.json")


def test_an_export_is_never_written_inside_the_memory_folder(store: MemoryStore) -> None:
    with pytest.raises(ExportTargetRefused):
        write_export(export_folder(store), store.directory / "backup.json", store)
    assert not (store.directory / "backup.json").exists()


def test_an_import_that_only_records_conflicts_takes_no_snapshot(store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("user_a.md", memory_text("A", "other"), "m")))
    assert report.conflicted and report.snapshot is None
    assert not (store.state_dir / "snapshots").exists()


def test_replace_moves_a_memory_to_archive_when_the_export_has_it_archived(
        store: MemoryStore) -> None:
    text = (store.directory / "user_a.md").read_text()
    report = apply_batch(store, batch(Incoming("user_a.md", text, "e:a", archived=True)),
                         mode="replace")
    assert [p.file for p in report.replaced] == ["user_a.md"]
    assert (store.directory / "archive" / "user_a.md").read_text() == text
    assert not (store.directory / "user_a.md").exists()


def test_the_export_leaves_out_a_symlink_and_names_it(store: MemoryStore,
                                                      tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("---\nname: Out\n---\nsecret plans\n")
    (store.directory / "user_link.md").symlink_to(tmp_path / "outside.md")
    document = export_folder(store)
    assert [m["file"] for m in document["memories"]] == ["user_a.md"]
    assert [s["file"] for s in document["skipped"]] == ["user_link.md"]
    assert "secret plans" not in export_text(document)


def test_the_index_is_not_copied_when_a_memory_could_not_be_written(tmp_path: Path) -> None:
    from sagemem.files.init import init_directory

    init_directory(tmp_path / "fresh", tmp_path / "fresh-state")
    fresh = MemoryStore(tmp_path / "fresh", tmp_path / "fresh-state",
                        caps=Caps(hard_body_bytes=20))
    exported = Batch("export", (Incoming("user_s.md", memory_text("S", "short"), "e:s"),
                                Incoming("user_l.md", memory_text("L", "l" * 40), "e:l")),
                     index="# Memory index\n\n- [S](user_s.md) — s\n- [L](user_l.md) — l\n")
    report = apply_batch(fresh, exported)
    assert [p.file for p in report.created] == ["user_s.md"]
    index = (fresh.directory / "MEMORY.md").read_text()
    assert "(user_s.md)" in index and "user_l.md" not in index
    assert any("not copied" in note for note in report.notes)


def test_the_report_shows_control_characters_in_names_and_reasons_as_text(
        store: MemoryStore) -> None:
    from sagemem.transfer.report import report_text

    report = apply_batch(store, Batch("mem0", (Incoming("bad\x1b[2J.md", "x", "m:\x1b]0;t\x07"),)))
    text = "\n".join(report_text(report))
    assert "\x1b" not in text and "\x07" not in text and "m:" in text


def test_an_export_item_is_created_even_when_its_body_is_another_memorys(
        store: MemoryStore) -> None:
    item = Incoming("user_copy.md", memory_text("Copy", "alpha body"), "export: user_copy.md")
    report = apply_batch(store, Batch("export", (item,)))
    assert [p.file for p in report.created] == ["user_copy.md"] and not report.skipped


def test_another_tools_batch_skips_a_body_it_already_brought(store: MemoryStore) -> None:
    report = apply_batch(store, batch(Incoming("user_x.md", memory_text("X", "same"), "m:1"),
                                      Incoming("user_y.md", memory_text("Y", "same"), "m:2")))
    assert [p.file for p in report.created] == ["user_x.md"]
    assert [s.origin for s in report.skipped] == ["m:2"]
    assert "user_x.md" in report.skipped[0].reason


def test_the_index_is_not_copied_when_the_plan_skipped_a_memory(tmp_path: Path) -> None:
    from sagemem.files.init import init_directory

    init_directory(tmp_path / "fresh", tmp_path / "fresh-state")
    fresh = MemoryStore(tmp_path / "fresh", tmp_path / "fresh-state")
    exported = Batch("export", (Incoming("user_s.md", memory_text("S", "short"), "e:s"),
                                Incoming("bad/name.md", memory_text("B", "bad"), "e:b")),
                     index="# Memory index\n\n- [S](user_s.md) — s\n- [B](bad/name.md) — b\n")
    report = apply_batch(fresh, exported)
    assert [p.file for p in report.created] == ["user_s.md"]
    assert [s.origin for s in report.skipped] == ["e:b"]
    index = (fresh.directory / "MEMORY.md").read_text()
    assert "(user_s.md)" in index and "bad/name.md" not in index
    assert any("not copied" in note for note in report.notes)


def test_a_name_holding_a_secret_is_skipped_already_in_a_dry_run(store: MemoryStore) -> None:
    token = "ghp_4fT9qLm2Xv7RbN8kP3wZ1cY6hJ5dS0aEabcd"
    item = Incoming(f"reference_{token}.md", memory_text("T", "a token"), "m:5")
    report = apply_batch(store, batch(item), dry_run=True)
    assert not report.created and "holds a secret" in report.skipped[0].reason
    assert token not in report.skipped[0].reason


def test_an_import_reports_monotonic_progress_up_to_its_new_memories(
        store: MemoryStore) -> None:
    items = [Incoming(f"user_n{n:03}.md", memory_text(f"N{n}", f"note {n}"), f"m:{n}")
             for n in range(250)]
    calls: list[tuple[int, int, str]] = []
    report = apply_batch(store, batch(*items),
                         progress=lambda done, total, what: calls.append((done, total, what)))
    assert len(report.created) == 250
    imported = [(d, t) for d, t, w in calls if w == "importing"]
    assert imported == [(100, 250), (200, 250), (250, 250)]
    copied = [d for d, _, w in calls if w == "snapshot"]
    assert copied == sorted(copied)  # the rollback point's copies, counted up
