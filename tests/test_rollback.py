"""Rollback: back to a snapshot byte for byte, nothing deleted, itself undoable."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemem.errors import SnapshotDamaged, SnapshotNotFound, UnsafeFile, WriteFailed
from sagemem.files.init import init_directory
from sagemem.history import rollback as rollback_mod
from sagemem.history import rollback_log
from sagemem.history.archive import LOCKS_FILE, archive_memory
from sagemem.history.rollback import (
    HISTORY_FILE,
    apply_rollback,
    plan_rollback,
    rollback,
    rollback_history,
)
from sagemem.history.snapshots import Snapshot, create_snapshot, list_snapshots
from sagemem.store import MemoryStore
from sagemem.writes.conflicts import load


def make_store(root: Path) -> MemoryStore:
    memory = root / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory index\n\n- [A](project_a.md) — a\n")
    (memory / "project_a.md").write_text("---\nname: A\n---\nbody a\n")
    (memory / "user_b.md").write_text("---\nname: B\n---\nbody b\n")
    return MemoryStore(memory, root / "state")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return make_store(tmp_path)


def top_level(store: MemoryStore) -> dict[str, str]:
    """sha256 of every top-level file: what 'byte-identical' is checked with."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in store.directory.iterdir() if p.is_file()}


def archived(store: MemoryStore) -> dict[str, bytes]:
    folder = store.archive_dir
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


def edit(store: MemoryStore) -> None:
    (store.directory / "project_a.md").write_text("---\nname: A\n---\nbody a, edited\n")
    (store.directory / "user_b.md").unlink()
    (store.directory / "project_new.md").write_text("a new memory\n")


def test_touched_restores_changed_and_removed_files_and_leaves_added_ones(
        store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    report = rollback(store, snapshot.id, scope="touched")
    assert sorted(report.restored) == ["project_a.md", "user_b.md"]
    assert report.moved == () and report.left == ("project_new.md",)
    assert (store.directory / "project_new.md").read_text() == "a new memory\n"
    assert (store.directory / "user_b.md").read_text() == "---\nname: B\n---\nbody b\n"


def test_all_takes_the_directory_back_and_moves_extra_files_to_archive(
        store: MemoryStore) -> None:
    before = top_level(store)
    snapshot = create_snapshot(store)
    edit(store)
    report = rollback(store, snapshot.id, scope="all")
    assert top_level(store) == before
    assert report.moved == ("project_new.md",)
    assert archived(store) == {"project_new.md": b"a new memory\n"}


def test_a_rollback_can_itself_be_rolled_back(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    edited = top_level(store)
    report = rollback(store, snapshot.id, scope="all")
    assert report.protection_id is not None
    kinds = {s.id: s.kind for s in list_snapshots(store).snapshots}
    assert kinds[report.protection_id] == "protection"
    rollback(store, report.protection_id, scope="all")
    assert top_level(store) == edited


def test_an_archive_name_already_taken_is_skipped_and_counted_never_overwritten(
        store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    store.archive_dir.mkdir()
    (store.archive_dir / "Project_New.md").write_text("the older one\n")
    report = rollback(store, snapshot.id, scope="all")
    assert [(s.file, s.code) for s in report.skipped] == [("project_new.md", "collision")]
    assert (store.archive_dir / "Project_New.md").read_text() == "the older one\n"
    assert (store.directory / "project_new.md").read_text() == "a new memory\n"


def test_a_locked_memory_is_never_moved_but_its_old_bytes_may_be_restored(
        store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    store.state_dir.mkdir(exist_ok=True)
    locks = {"version": 1, "locked": {"project_new.md": {}, "project_a.md": {}}}
    (store.state_dir / LOCKS_FILE).write_text(json.dumps(locks))
    report = rollback(store, snapshot.id, scope="all")
    assert [(s.file, s.code) for s in report.skipped] == [("project_new.md", "locked")]
    assert "project_a.md" in report.restored
    assert (store.directory / "project_new.md").exists()


def test_an_edit_between_plan_and_apply_is_refused_recorded_and_skipped(
        store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    plan = plan_rollback(store, snapshot.id, scope="all")
    (store.directory / "project_a.md").write_text("typed meanwhile\n")
    (store.directory / "user_b.md").write_text("created meanwhile\n")
    (store.directory / "project_new.md").write_text("grown meanwhile\n")
    report = apply_rollback(store, plan)
    assert {s.file: s.code for s in report.skipped} == {
        "project_a.md": "conflict", "user_b.md": "conflict", "project_new.md": "conflict"}
    assert (store.directory / "project_a.md").read_text() == "typed meanwhile\n"
    assert (store.directory / "user_b.md").read_text() == "created meanwhile\n"
    assert (store.directory / "project_new.md").read_text() == "grown meanwhile\n"
    conflict_id = next(s.conflict_id for s in report.skipped if s.file == "project_a.md")
    assert conflict_id is not None
    record = load(store.state_dir, conflict_id)
    assert record.data["disk"]["text"] == "typed meanwhile\n"


def test_exact_bytes_come_back_even_with_merge_markers_or_over_the_size_limit(
        store: MemoryStore) -> None:
    marked = b"---\nname: M\n---\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"
    (store.directory / "project_m.md").write_bytes(marked)
    snapshot = create_snapshot(store)
    (store.directory / "project_m.md").write_text("resolved\n")
    (store.directory / "MEMORY.md").write_text("# rewritten\n")
    small = MemoryStore(store.directory, store.state_dir, max_bytes=10)
    report = rollback(small, snapshot.id, scope="touched")
    assert sorted(report.restored) == ["MEMORY.md", "project_m.md"]
    assert (store.directory / "project_m.md").read_bytes() == marked
    assert (store.directory / "MEMORY.md").read_text().startswith("# Memory index")


def test_dry_run_reports_the_same_and_changes_nothing(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    edited, snapshots = top_level(store), list_snapshots(store).snapshots
    dry = rollback(store, snapshot.id, scope="all", dry_run=True)
    assert top_level(store) == edited and list_snapshots(store).snapshots == snapshots
    assert not (store.state_dir / HISTORY_FILE).exists() and dry.protection_id is None
    real = rollback(store, snapshot.id, scope="all")
    assert (sorted(dry.restored), dry.moved) == (sorted(real.restored), real.moved)


def test_a_damaged_snapshot_is_never_used_and_nothing_changes(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    (snapshot.path / "user_b.md").write_text("bit rot\n")
    edited = top_level(store)
    with pytest.raises(SnapshotDamaged):
        rollback(store, snapshot.id, scope="all")
    assert top_level(store) == edited and not store.archive_dir.exists()


def test_an_unknown_snapshot_is_an_error(store: MemoryStore) -> None:
    with pytest.raises(SnapshotNotFound):
        rollback(store, "20991231T000000.000000Z")


def test_every_rollback_appends_one_history_line(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    first = rollback(store, snapshot.id, scope="all")
    rollback(store, snapshot.id, scope="touched")
    history = rollback_history(store)
    assert [h["scope"] for h in history] == ["all", "touched"]
    assert history[0]["protection"] == first.protection_id
    assert history[0]["counts"]["restored"] == 2 and history[0]["moved"] == ["project_new.md"]


def test_a_symlink_is_neither_replaced_nor_moved(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not ours\n")
    snapshot = create_snapshot(store)
    (store.directory / "user_b.md").unlink()
    (store.directory / "user_b.md").symlink_to(outside)
    (store.directory / "link_new.md").symlink_to(outside)
    report = rollback(store, snapshot.id, scope="all")
    assert {s.file: s.code for s in report.skipped} == {"user_b.md": "unreadable",
                                                       "link_new.md": "unreadable"}
    assert (store.directory / "user_b.md").is_symlink() and outside.read_text() == "not ours\n"


def test_a_file_the_snapshot_could_not_copy_is_left_alone(store: MemoryStore,
                                                          tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("not ours\n")
    (store.directory / "odd.md").symlink_to(tmp_path / "outside.md")
    snapshot = create_snapshot(store)
    (store.directory / "odd.md").unlink()
    (store.directory / "odd.md").write_text("a real file now\n")
    report = rollback(store, snapshot.id, scope="all")
    assert [(s.file, s.code) for s in report.skipped] == [("odd.md", "not_captured")]
    assert (store.directory / "odd.md").read_text() == "a real file now\n"


def test_a_file_the_protection_snapshot_lacks_is_neither_replaced_nor_moved(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    real = rollback_mod.write_snapshot

    def losing_two(store: MemoryStore, **kwargs: Any) -> Snapshot:
        made = real(store, **kwargs)
        lost = ("project_a.md", "project_new.md")
        return dataclasses.replace(made, files=tuple(f for f in made.files
                                                     if f.name not in lost))

    monkeypatch.setattr(rollback_mod, "write_snapshot", losing_two)
    report = rollback(store, snapshot.id, scope="all")
    assert {s.file: s.code for s in report.skipped} == {"project_a.md": "not_protected",
                                                       "project_new.md": "not_protected"}
    assert report.restored == ("user_b.md",)
    assert (store.directory / "project_a.md").read_text() == "---\nname: A\n---\nbody a, edited\n"
    assert (store.directory / "project_new.md").read_text() == "a new memory\n"


# -- the proof: random edits, rollback all, byte-identical; then undo, byte-identical -------

NAMES = st.sampled_from(["project_a.md", "user_b.md", "feedback_c.md", "reference_d.md",
                         "MEMORY.md"])
EDIT = st.tuples(st.sampled_from(["write", "delete"]), NAMES, st.binary(max_size=64))


def start_archive(store: MemoryStore) -> dict[str, bytes]:
    """A non-empty archive/: one memory archived long ago, and a byte-identical duplicate
    of a live one (what a rollback used to leave behind)."""
    store.archive_dir.mkdir()
    files = {"project_old.md": b"archived long ago\n",
             "user_b.md": (store.directory / "user_b.md").read_bytes()}
    for name, data in files.items():
        (store.archive_dir / name).write_bytes(data)
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(EDIT, max_size=12))
def test_rollback_all_is_exact_and_undoable_for_any_edit_sequence(
        edits: list[tuple[str, str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = make_store(Path(tmp))
        at_start = start_archive(store)
        at_snapshot = top_level(store)
        snapshot_bytes = {n: (store.directory / n).read_bytes() for n in at_snapshot}
        snapshot = create_snapshot(store)
        for action, name, data in edits:
            path = store.directory / name
            if action == "write":
                path.write_bytes(data)
            elif path.exists():
                path.unlink()
        edited = {n: (store.directory / n).read_bytes() for n in top_level(store)}
        extra = {n: edited[n] for n in set(edited) - set(at_snapshot)}
        # a removed user_b.md comes back out of archive/, not as a second copy
        rolled_back = {**{n: d for n, d in at_start.items()
                          if n != "user_b.md" or "user_b.md" in edited}, **extra}
        # the undo moves a file the rollback had to create into archive/ (nothing is
        # deleted); the second rollback then takes it back out of there, not a copy
        recreated = {n: d for n, d in snapshot_bytes.items() if n not in edited}
        undone = {**at_start, **recreated}
        for _ in range(2):  # roll back, undo; then the same again from where the undo left
            report = rollback(store, snapshot.id, scope="all")
            assert top_level(store) == at_snapshot and archived(store) == rolled_back
            assert report.skipped == ()
            if not (report.restored or report.moved):  # nothing changed: nothing to protect
                assert report.protection_id is None
                break
            assert report.protection_id is not None
            undo = rollback(store, report.protection_id, scope="all")
            assert undo.skipped == ()
            assert {n: (store.directory / n).read_bytes() for n in top_level(store)} == edited
            assert archived(store) == undone
        shutil.rmtree(store.state_dir)


# -- failure paths and the git working tree -------------------------------------------------

def test_an_unwritable_state_directory_changes_nothing(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    edited = top_level(store)
    shutil.rmtree(store.state_dir / "locks")
    (store.state_dir / "locks").write_text("not a folder")
    with pytest.raises(WriteFailed):
        rollback(store, snapshot.id, scope="all")
    assert top_level(store) == edited


def test_a_symlinked_history_file_is_refused_before_anything_changes(
        store: MemoryStore, tmp_path: Path) -> None:
    snapshot = create_snapshot(store)
    edit(store)
    edited = top_level(store)
    (tmp_path / "elsewhere").write_text("")
    (store.state_dir / HISTORY_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeFile):
        rollback(store, snapshot.id, scope="all")
    assert top_level(store) == edited and (tmp_path / "elsewhere").read_text() == ""


GIT = shutil.which("git")


def git(folder: Path, *args: str) -> str:
    """Only the test runs git, to check what sagemem left; sagemem itself never does."""
    assert GIT is not None
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ.get("PATH", "")}
    return subprocess.run([GIT, *args], cwd=folder, env=env, check=True, text=True,
                          capture_output=True).stdout


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_in_a_git_tree_only_the_files_meant_to_change_show_as_changed(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    init_directory(memory, memory / ".sage-mem")
    (memory / "project_a.md").write_text("a\n")
    (memory / "user_b.md").write_text("b\n")
    git(memory, "init", "-q")
    git(memory, "add", "-A")
    git(memory, "commit", "-qm", "start")
    store = MemoryStore(memory, memory / ".sage-mem")
    snapshot = create_snapshot(store)
    assert snapshot.git is not None and snapshot.git.commit == git(memory, "rev-parse",
                                                                   "HEAD").strip()
    assert git(memory, "status", "--porcelain") == ""
    (memory / "project_a.md").write_text("edited\n")
    (memory / "project_new.md").write_text("new\n")
    rollback(store, snapshot.id, scope="all")
    assert git(memory, "status", "--porcelain", "-uall") == "?? archive/project_new.md\n"


# -- review findings -------------------------------------------------------------------------

def test_an_oversized_current_file_is_protected_and_the_undo_brings_it_back(
        store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    big = os.urandom(4 * 1024 * 1024)
    (store.directory / "project_a.md").write_bytes(big)
    report = rollback(store, snapshot.id, scope="all")
    assert report.restored == ("project_a.md",) and report.protection_id is not None
    rollback(store, report.protection_id, scope="all")
    assert (store.directory / "project_a.md").read_bytes() == big


@pytest.mark.parametrize("bad", ["../evil.md", "/tmp/sagemem-evil.md", "sub/evil.md",
                                 ".hidden.md", "evil.txt"])
def test_a_manifest_naming_a_file_outside_the_directory_is_damaged_and_never_used(
        store: MemoryStore, bad: str) -> None:
    snapshot = create_snapshot(store)
    manifest = json.loads((snapshot.path / "manifest.json").read_text())
    data = b"escaped\n"
    manifest["files"].append({"name": bad, "size": len(data),
                              "sha256": hashlib.sha256(data).hexdigest()})
    (snapshot.path / "manifest.json").write_text(json.dumps(manifest))
    outside = (store.directory / bad).resolve()
    with pytest.raises(SnapshotDamaged):
        rollback(store, snapshot.id, scope="all")
    assert not outside.exists()
    assert list_snapshots(store).unreadable == (snapshot.id,)


def test_a_manifest_naming_one_file_twice_is_damaged(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    manifest = json.loads((snapshot.path / "manifest.json").read_text())
    manifest["files"].append(manifest["files"][0])
    (snapshot.path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotDamaged):
        rollback(store, snapshot.id, scope="all")


def test_rolling_back_an_archive_moves_the_file_back_out_and_the_undo_is_exact(
        store: MemoryStore) -> None:
    at_snapshot = top_level(store)
    snapshot = create_snapshot(store)
    archive_memory(store, "project_a", "x")
    after_archive, in_archive = top_level(store), archived(store)
    report = rollback(store, snapshot.id, scope="all")
    assert top_level(store) == at_snapshot and archived(store) == {}
    assert report.skipped == () and report.protection_id is not None
    undo = rollback(store, report.protection_id, scope="all")
    assert undo.skipped == ()
    assert top_level(store) == after_archive and archived(store) == in_archive


def test_a_file_archive_already_holds_byte_for_byte_is_not_archived_twice(
        store: MemoryStore) -> None:
    at_snapshot = top_level(store)
    snapshot = create_snapshot(store)
    (store.directory / "project_new.md").write_text("same bytes\n")
    store.archive_dir.mkdir()
    (store.archive_dir / "project_new.md").write_text("same bytes\n")
    edited = top_level(store)
    report = rollback(store, snapshot.id, scope="all")
    assert report.moved == ("project_new.md",) and report.skipped == ()
    assert top_level(store) == at_snapshot
    assert archived(store) == {"project_new.md": b"same bytes\n"}
    assert report.protection_id is not None
    rollback(store, report.protection_id, scope="all")
    assert top_level(store) == edited


def test_a_new_file_differing_only_in_case_is_never_overwritten(store: MemoryStore) -> None:
    (store.directory / "Project_X.md").write_text("the old one\n")
    snapshot = create_snapshot(store)
    (store.directory / "project_x.md").write_text("a separate new one\n")
    report = rollback(store, snapshot.id, scope="all")
    assert (store.directory / "Project_X.md").read_text() == "the old one\n"
    assert archived(store) == {"project_x.md": b"a separate new one\n"}
    assert report.moved == ("project_x.md",) and report.restored == ()


def test_a_snapshot_file_whose_name_now_has_another_spelling_is_ambiguous(
        store: MemoryStore) -> None:
    (store.directory / "Project_X.md").write_text("the old one\n")
    snapshot = create_snapshot(store)
    (store.directory / "Project_X.md").unlink()
    (store.directory / "project_x.md").write_text("a different file\n")
    report = rollback(store, snapshot.id, scope="all")
    assert {s.file: s.code for s in report.skipped} == {"Project_X.md": "ambiguous",
                                                       "project_x.md": "ambiguous"}
    assert (store.directory / "project_x.md").read_text() == "a different file\n"
    assert not (store.directory / "Project_X.md").exists() and archived(store) == {}


def test_a_failed_history_line_still_returns_the_report_and_says_so(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = create_snapshot(store)
    edit(store)

    def refuse(path: Path, line: bytes) -> None:
        raise WriteFailed(path, "disk full")

    monkeypatch.setattr(rollback_log, "append_line", refuse)
    report = rollback(store, snapshot.id, scope="all")
    assert sorted(report.restored) == ["project_a.md", "user_b.md"]
    assert report.protection_id is not None
    assert report.history_error is not None and "disk full" in report.history_error
    assert "nothing was changed" not in report.history_error


def test_history_is_read_through_the_safe_path(store: MemoryStore, tmp_path: Path) -> None:
    store.state_dir.mkdir()
    (tmp_path / "elsewhere").write_text('{"scope": "all"}\n')
    (store.state_dir / HISTORY_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeFile):
        rollback_history(store)


def test_a_rollback_with_nothing_to_do_takes_no_protection_snapshot_but_is_logged(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    store.directory.mkdir()
    (store.directory / "project_a.md").write_text("a\n")
    taken = create_snapshot(store)
    report = rollback(store, taken.id, scope="all")
    assert (report.restored, report.moved, report.protection_id) == ((), (), None)
    assert [s.id for s in list_snapshots(store).snapshots] == [taken.id]
    assert [h["protection"] for h in rollback_history(store)] == [None]


def test_a_read_only_file_is_reported_and_never_replaced(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    path = store.directory / "project_a.md"
    path.write_text("---\nname: A\n---\nkept by its owner\n")
    path.chmod(0o444)
    report = rollback(store, snapshot.id, scope="touched")
    assert path.read_text() == "---\nname: A\n---\nkept by its owner\n"
    [skip] = [s for s in report.skipped if s.file == "project_a.md"]
    assert skip.code == "failed" and "read-only (mode 0444)" in skip.reason
