"""Snapshots: verified copies that sort by time, rotation, damage detection, git HEAD."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagemem.errors import InvalidName, SnapshotDamaged, SnapshotNotFound, UnsafeFile, WriteFailed
from sagemem.files.init import Updated, init_directory
from sagemem.history.githead import GitHead, git_head
from sagemem.history.snapshot_diff import compare, snapshot_diff
from sagemem.history.snapshots import (
    MANIFEST_FILE,
    create_snapshot,
    damaged_files,
    list_snapshots,
    load_snapshot,
    rotate_snapshots,
    rotation_victims,
    snapshots_folder,
    verify_snapshot,
)
from sagemem.store import MemoryStore

T0 = datetime(2026, 11, 30, 3, 35, 12, 123456, tzinfo=timezone.utc)
INDEX = b"# Memory index\n\n- [A](project_a.md) \xe2\x80\x94 a\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_bytes(INDEX)
    (memory / "project_a.md").write_text("---\nname: A\n---\nbody a\n")
    (memory / "user_b.md").write_text("---\nname: B\n---\nbody b\n")
    return MemoryStore(memory, tmp_path / "state")


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_create_copies_every_memory_and_the_index_with_a_manifest(store: MemoryStore) -> None:
    snapshot = create_snapshot(store, label="before cleanup", now=T0)
    assert snapshot.id == "20261130T033512.123456Z"
    copied = tree(snapshot.path)
    assert copied.pop(MANIFEST_FILE) and copied == tree(store.directory)
    manifest = json.loads((snapshot.path / MANIFEST_FILE).read_text())
    assert manifest["label"] == "before cleanup" and manifest["kind"] == "manual"
    by_name = {f["name"]: f for f in manifest["files"]}
    assert set(by_name) == {"MEMORY.md", "project_a.md", "user_b.md"}
    assert by_name["MEMORY.md"] == {"name": "MEMORY.md", "size": len(INDEX),
                                    "sha256": hashlib.sha256(INDEX).hexdigest()}


def test_create_records_reason_and_run_id_of_another_operation(store: MemoryStore) -> None:
    snapshot = create_snapshot(store, kind="auto", reason="audit --fix", run_id="run-7")
    loaded = load_snapshot(store, snapshot.id)
    assert (loaded.kind, loaded.reason, loaded.run_id) == ("auto", "audit --fix", "run-7")
    assert loaded == snapshot


def test_create_refuses_an_unknown_kind(store: MemoryStore) -> None:
    with pytest.raises(ValueError):
        create_snapshot(store, kind="weekly")


def test_ids_sort_by_time_and_stay_unique_within_one_instant(store: MemoryStore) -> None:
    ids = [create_snapshot(store, now=T0).id for _ in range(3)]
    ids.append(create_snapshot(store, now=T0 + timedelta(seconds=1)).id)
    assert len(set(ids)) == 4 and ids == sorted(ids)
    assert [s.id for s in list_snapshots(store).snapshots] == ids


def test_creating_changes_nothing_in_the_memory_directory(store: MemoryStore) -> None:
    before = sorted(os.listdir(store.directory)), tree(store.directory)
    create_snapshot(store)
    assert (sorted(os.listdir(store.directory)), tree(store.directory)) == before


def test_a_symlink_is_not_copied_but_named(store: MemoryStore, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("outside\n")
    (store.directory / "link.md").symlink_to(tmp_path / "secret.md")
    snapshot = create_snapshot(store)
    assert {s.name for s in snapshot.skipped} == {"link.md"}
    assert not (snapshot.path / "link.md").exists()


def test_a_file_with_an_invalid_name_is_reported_not_copied_with_its_name_visible(
        store: MemoryStore) -> None:
    for name in ("bad\x1b[2Jname.md", "two\nlines.md", "rtl\u202egnp.md"):
        (store.directory / name).write_text("hidden\n")
    os.close(os.open(os.path.join(os.fsencode(store.directory), b"raw\xff.md"),
                     os.O_CREAT | os.O_WRONLY))
    snapshot = create_snapshot(store)
    shown = {s.name: s.reason for s in snapshot.skipped}
    assert set(shown) == {"bad\\x1b[2Jname.md", "two\\x0alines.md", "rtl\\u202egnp.md",
                          "raw\\xff.md"}
    assert all("name" in reason for reason in shown.values())
    assert {s.name for s in load_snapshot(store, snapshot.id).skipped} == set(shown)
    assert damaged_files(snapshot) == () and len(snapshot.files) == 3


def test_a_file_over_the_size_limit_is_copied_whole(store: MemoryStore) -> None:
    """A snapshot's purpose is exact bytes: the size gate is for reading memories."""
    huge = os.urandom(store.max_bytes * 3)
    (store.directory / "huge.md").write_bytes(huge)
    snapshot = create_snapshot(store)
    assert snapshot.skipped == () and (snapshot.path / "huge.md").read_bytes() == huge
    assert verify_snapshot(load_snapshot(store, snapshot.id)) == snapshot


def test_progress_reports_each_file(store: MemoryStore) -> None:
    calls: list[tuple[int, int]] = []
    create_snapshot(store, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (3, 3)


def test_a_leftover_partial_is_not_listed_and_is_cleaned_by_the_next_create(
        store: MemoryStore) -> None:
    partial = snapshots_folder(store) / ".20261130T000000.000000Z.partial"
    partial.mkdir(parents=True)
    (partial / "project_a.md").write_text("half")
    assert list_snapshots(store).snapshots == ()
    create_snapshot(store)
    assert not partial.exists()


def test_rotation_keeps_the_newest_and_never_counts_protection_snapshots(
        store: MemoryStore) -> None:
    protection = create_snapshot(store, kind="protection", now=T0)
    made = [create_snapshot(store, keep=2, now=T0 + timedelta(seconds=n)).id
            for n in range(1, 5)]
    kept = [s.id for s in list_snapshots(store).snapshots]
    assert kept == [protection.id, *made[-2:]]


def test_rotation_never_removes_the_snapshot_just_made(store: MemoryStore) -> None:
    newer = create_snapshot(store, now=T0 + timedelta(hours=1))
    older = create_snapshot(store, keep=1, now=T0)  # a clock set back
    assert {s.id for s in list_snapshots(store).snapshots} == {newer.id, older.id}


def test_keep_zero_keeps_every_snapshot(store: MemoryStore) -> None:
    made = [create_snapshot(store, keep=0, now=T0 + timedelta(seconds=n)) for n in range(4)]
    assert all(s.rotated == () for s in made)
    assert rotation_victims(store, 0) == ()
    assert [s.id for s in list_snapshots(store).snapshots] == [s.id for s in made]


@pytest.mark.parametrize("keep", [-1, -5])
def test_negative_keep_is_refused_before_anything_is_written_or_removed(
        store: MemoryStore, keep: int) -> None:
    made = [create_snapshot(store, now=T0 + timedelta(seconds=n)).id for n in range(3)]
    for call in (lambda: create_snapshot(store, keep=keep),
                 lambda: rotate_snapshots(store, keep), lambda: rotation_victims(store, keep)):
        with pytest.raises(ValueError, match="keep"):
            call()
    assert [s.id for s in list_snapshots(store).snapshots] == made


def test_a_file_changed_inside_a_snapshot_makes_it_damaged(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    (snapshot.path / "user_b.md").write_text("tampered\n")
    (snapshot.path / "MEMORY.md").unlink()
    assert set(damaged_files(snapshot)) == {"MEMORY.md", "user_b.md"}
    with pytest.raises(SnapshotDamaged) as caught:
        verify_snapshot(snapshot)
    assert set(caught.value.files) == {"MEMORY.md", "user_b.md"}


def test_the_damage_message_agrees_with_the_number_of_files() -> None:
    assert "(a.md no longer matches its manifest)" in str(SnapshotDamaged("x", ["a.md"]))
    assert "(a.md, b.md no longer match its" in str(SnapshotDamaged("x", ["a.md", "b.md"]))


def test_an_unreadable_manifest_is_listed_as_damaged(store: MemoryStore) -> None:
    good = create_snapshot(store, now=T0)
    bad = create_snapshot(store, now=T0 + timedelta(seconds=1))
    (bad.path / MANIFEST_FILE).write_text("{not json")
    listing = list_snapshots(store)
    assert [s.id for s in listing.snapshots] == [good.id] and listing.unreadable == (bad.id,)
    with pytest.raises(SnapshotDamaged):
        load_snapshot(store, bad.id)


@pytest.mark.parametrize(("manifest", "why"), [
    pytest.param(b"{not json", "cannot be read: it is not valid JSON at line 1", id="not-json"),
    pytest.param(b"\xff{}", "cannot be read: it is not UTF-8", id="not-utf8"),
    pytest.param(b"{}", "cannot be read: it has no 'files' field", id="no-files"),
    pytest.param(None, "cannot be read: it is missing", id="missing"),
])
def test_an_unreadable_manifest_says_why_not_that_files_differ(
    store: MemoryStore, manifest: bytes | None, why: str
) -> None:
    snapshot = create_snapshot(store)
    if manifest is None:
        (snapshot.path / MANIFEST_FILE).unlink()
    else:
        (snapshot.path / MANIFEST_FILE).write_bytes(manifest)
    with pytest.raises(SnapshotDamaged) as caught:
        load_snapshot(store, snapshot.id)
    assert f"(its manifest.json {why}" in str(caught.value)
    assert "no longer matches" not in str(caught.value)


def test_load_accepts_a_unique_prefix_only(store: MemoryStore) -> None:
    first = create_snapshot(store, now=T0)
    create_snapshot(store, now=T0 + timedelta(days=1))
    assert load_snapshot(store, "20261130T").id == first.id
    with pytest.raises(SnapshotNotFound, match="give more"):
        load_snapshot(store, "2026")
    with pytest.raises(SnapshotNotFound):
        load_snapshot(store, "nope")
    with pytest.raises(SnapshotNotFound):
        load_snapshot(store, "")


def test_unknown_id_without_any_snapshot(store: MemoryStore) -> None:
    with pytest.raises(SnapshotNotFound):
        load_snapshot(store, "20261130T033512.123456Z")


@contextlib.contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """``folder`` that refuses new entries, for root too: root ignores a directory's mode,
    so as root it is made immutable (``chattr +i``, as test_degraded_reading does)."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    try:
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    except OSError:
        done = None
    if done is None or done.returncode != 0:
        pytest.skip("as root, a folder is unwritable only with chattr +i, not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True, check=True)


def test_an_unwritable_state_directory_is_a_clear_error(store: MemoryStore) -> None:
    first = create_snapshot(store)  # the lock and snapshots folders exist
    with unwritable(snapshots_folder(store)), pytest.raises(WriteFailed) as refused:
        create_snapshot(store, now=datetime.now(timezone.utc) + timedelta(seconds=1))
    assert str(snapshots_folder(store)) in str(refused.value.path)
    listing = list_snapshots(store)
    assert ([s.id for s in listing.snapshots], listing.unreadable) == ([first.id], ())


def test_a_symlinked_snapshots_folder_is_refused(store: MemoryStore, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    store.state_dir.mkdir()
    (store.state_dir / "snapshots").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeFile):
        create_snapshot(store)
    assert list((tmp_path / "elsewhere").iterdir()) == []


# -- what differs ---------------------------------------------------------------------------

def test_compare_names_changed_added_and_removed_files(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    (store.directory / "project_a.md").write_text("changed\n")
    (store.directory / "user_b.md").unlink()
    (store.directory / "project_new.md").write_text("new\n")
    result = compare(store, snapshot)
    assert (result.changed, result.added, result.removed, result.unchanged) == (
        ("project_a.md",), ("project_new.md",), ("user_b.md",), 1)


def test_diff_is_unified_from_the_snapshot_to_now(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    (store.directory / "project_a.md").write_text("---\nname: A\n---\nbody A2\n")
    diff = snapshot_diff(store, snapshot)
    assert f"--- snapshot/{snapshot.id}/project_a.md" in diff
    assert "-body a\n+body A2\n" in diff
    assert snapshot_diff(store, snapshot, "user_b") == ""
    assert snapshot_diff(store, snapshot, "project_a") == diff


def test_diff_of_an_unknown_name_is_an_error(store: MemoryStore) -> None:
    from sagemem.errors import MemoryNotFound

    snapshot = create_snapshot(store)
    with pytest.raises(MemoryNotFound):
        snapshot_diff(store, snapshot, "nothing_here")


def test_diff_refuses_a_name_outside_the_memory_directory(store: MemoryStore,
                                                          tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("secret\n")
    snapshot = create_snapshot(store)
    for bad in ("../outside", "../outside.md", str(tmp_path / "outside.md")):
        with pytest.raises(InvalidName):
            snapshot_diff(store, snapshot, bad)


def test_diff_of_memory_md_is_allowed(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    (store.directory / "MEMORY.md").write_text("# rewritten\n")
    assert "+# rewritten\n" in snapshot_diff(store, snapshot, "MEMORY.md")


# -- git --------------------------------------------------------------------------------------

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_manifest_records_head_of_a_git_working_tree(store: MemoryStore) -> None:
    git = store.directory / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    snapshot = create_snapshot(store)
    assert snapshot.git == GitHead(SHA, "refs/heads/main")
    assert json.loads((snapshot.path / MANIFEST_FILE).read_text())["git"] == {
        "head": SHA, "ref": "refs/heads/main"}


def test_git_head_reads_packed_refs_and_detached_heads(tmp_path: Path) -> None:
    git = tmp_path / "repo" / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{SHA} refs/heads/main\n")
    assert git_head(tmp_path / "repo" / "memory") == GitHead(SHA, "refs/heads/main")
    (git / "HEAD").write_text(SHA + "\n")
    assert git_head(tmp_path / "repo") == GitHead(SHA, None)


def test_git_head_follows_a_worktree_git_file_to_the_common_dir(tmp_path: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    worktree_git = main_git / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "HEAD").write_text("ref: refs/heads/feature\n")
    (worktree_git / "commondir").write_text("../..\n")
    (main_git / "refs" / "heads").mkdir(parents=True)
    (main_git / "refs" / "heads" / "feature").write_text(SHA)
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {worktree_git}\n")
    assert git_head(checkout) == GitHead(SHA, "refs/heads/feature")


def test_git_head_is_null_when_unreadable_and_none_outside_git(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert git_head(tmp_path / "plain") is None
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / ".git").write_text("gitdir: /no/such/place\n")
    assert git_head(tmp_path / "broken") == GitHead(None, None)
    unborn = tmp_path / "unborn" / ".git"
    unborn.mkdir(parents=True)
    (unborn / "HEAD").write_text("ref: refs/heads/main\n")
    assert git_head(tmp_path / "unborn") == GitHead(None, "refs/heads/main")


def test_init_ignores_a_state_directory_inside_the_memory_directory(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    report = init_directory(memory, memory / ".sage-mem")
    assert (memory / ".gitignore").read_text() == "/.sage-mem/\n"
    assert memory / ".gitignore" in report.created
    again = init_directory(memory, memory / ".sage-mem")
    assert memory / ".gitignore" in again.existed
    assert (memory / ".gitignore").read_text() == "/.sage-mem/\n"


def test_init_appends_to_an_existing_gitignore_never_overwriting(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / ".gitignore").write_text("*.swp")
    report = init_directory(memory, memory / "state")
    assert (memory / ".gitignore").read_text() == "*.swp\n/state/\n"
    assert report.updated == (Updated(memory / ".gitignore", "/state/"),)
    assert memory / ".gitignore" not in report.created
    (memory / ".gitignore").write_text("state/\n")
    init_directory(memory, memory / "state")
    assert (memory / ".gitignore").read_text() == "state/\n"


def test_init_writes_no_gitignore_for_a_state_directory_outside(tmp_path: Path) -> None:
    init_directory(tmp_path / "memory", tmp_path / ".sage-mem")
    assert not (tmp_path / "memory" / ".gitignore").exists()


def test_init_leaves_a_symlinked_gitignore_alone_and_says_so(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (tmp_path / "elsewhere").write_text("mine\n")
    (memory / ".gitignore").symlink_to(tmp_path / "elsewhere")
    report = init_directory(memory, memory / "state")
    assert (tmp_path / "elsewhere").read_text() == "mine\n"
    assert (memory / "state").is_dir() and (memory / "MEMORY.md").is_file()
    assert len(report.warnings) == 1 and report.warnings[0].startswith(".gitignore left alone")


@pytest.mark.parametrize("state", ["a[1]", "st*ar", "why?", "back\\slash", "trailing "])
def test_the_gitignore_line_matches_exactly_the_state_directory(
    tmp_path: Path, state: str
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the pattern is checked by git itself")
    memory = tmp_path / "memory"
    memory.mkdir()
    subprocess.run(["git", "init", "-q", str(memory)], check=True)
    init_directory(memory, memory / state)
    (memory / "a1").mkdir()  # what an unescaped `a[1]` would hide instead

    def ignored(name: str) -> bool:
        return subprocess.run(["git", "-C", str(memory), "check-ignore", "-q", name + "/x"]
                              ).returncode == 0

    assert ignored(state) and not ignored("a1")


@pytest.mark.parametrize("bad_name", ["project_\tb.md", "project_\u202eb.md",
                                      os.fsdecode(b"project_\xff.md")])
def test_a_file_the_store_refuses_to_name_is_not_part_of_a_snapshot(
    tmp_path: Path, bad_name: str
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_a.md").write_text("a\n")
    (memory / bad_name).write_text("bad\n")
    store = MemoryStore(memory, tmp_path / "state")
    snapshot = create_snapshot(store)
    assert [f.name for f in snapshot.files] == ["project_a.md"]
    assert verify_snapshot(load_snapshot(store, snapshot.id)) == snapshot
    assert (memory / bad_name).read_text() == "bad\n"
