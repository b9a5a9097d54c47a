"""The journal: a multi-file operation killed half way is reported by the next command and
finished by ``recover`` — its log line written once, MEMORY.md in step, never left half
done in silence."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.cli import main
from sagemem.errors import UnfinishedOperation, UnsafeFile, WriteFailed
from sagemem.history import journal
from sagemem.history.archive import archive_memory, purge_memory, restore_memory
from sagemem.history.archive_log import read_log
from sagemem.history.recover import recover
from sagemem.history.rollback import rollback, rollback_history
from sagemem.history.snapshots import create_snapshot
from sagemem.store import MemoryStore

INDEX = "# Memory index\n\n- [A](project_a.md) — a\n- [B](user_b.md) — b\n"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(INDEX)
    (memory / "project_a.md").write_text("---\nname: A\ndescription: a\n---\nbody a\n")
    (memory / "user_b.md").write_text("---\nname: B\ndescription: b\n---\nbody b\n")
    return MemoryStore(memory, tmp_path / "state")


def cli(store: MemoryStore, *args: str) -> list[str]:
    return ["--dir", str(store.directory), "--state-dir", str(store.state_dir), *args]


KILLER = """
import importlib, os, sys
owner_path, attribute, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
module, _, cls = owner_path.partition(":")
owner = importlib.import_module(module)
owner = getattr(owner, cls) if cls else owner
original = getattr(owner, attribute)
calls = 0
def dying(*args, **kwargs):
    global calls
    calls += 1
    if calls > after:
        os._exit(9)  # kill -9 as far as the files can tell: no cleanup runs
    return original(*args, **kwargs)
setattr(owner, attribute, dying)
from sagemem.cli.main import main
sys.exit(main(sys.argv[4:]))
"""


def killed(store: MemoryStore, owner: str, attribute: str, *args: str, after: int = 0
           ) -> None:
    """Run ``sagemem ARGS`` in a process that dies at the ``after+1``-th call of
    ``owner.attribute``."""
    done = subprocess.run([sys.executable, "-c", KILLER, owner, attribute, str(after),
                           *cli(store, *args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 9, done.stderr


def run(capsys: pytest.CaptureFixture[str], store: MemoryStore, *args: str
        ) -> tuple[int, str, str]:
    code = main(cli(store, *args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def index_text(store: MemoryStore) -> str:
    return (store.directory / "MEMORY.md").read_text()


# -- the journal itself --------------------------------------------------------------------

def test_begin_writes_an_intent_that_pending_reads_back_and_finish_removes(
        tmp_path: Path) -> None:
    intent = journal.begin(tmp_path, "archive", {"file": "project_a.md"})
    assert journal.pending(tmp_path) == ([intent], [])
    assert "archive of project_a.md" in (journal.pending_notice(tmp_path) or "")
    journal.finish(tmp_path, intent)
    assert journal.pending(tmp_path) == ([], [])
    assert journal.pending_notice(tmp_path) is None


def test_a_torn_or_garbled_intent_is_reported_as_damaged_not_a_crash(tmp_path: Path) -> None:
    folder = tmp_path / journal.JOURNAL_DIR
    folder.mkdir()
    (folder / "torn.json").write_bytes(b'{"id": "torn", "operat')
    (folder / "odd.json").write_text('{"id": "odd", "operation": "format disk", "args": {}}')
    intents, damaged = journal.pending(tmp_path)
    assert intents == [] and sorted(d.path.name for d in damaged) == ["odd.json", "torn.json"]
    assert "2 unreadable journal entries" in (journal.pending_notice(tmp_path) or "")


def test_a_symlinked_intent_is_refused_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"id": "x", "operation": "archive", "started": "t",
                                     "args": {}}))
    folder = tmp_path / "state" / journal.JOURNAL_DIR
    folder.mkdir(parents=True)
    (folder / "x.json").symlink_to(elsewhere)
    intents, damaged = journal.pending(tmp_path / "state")
    assert intents == [] and len(damaged) == 1 and "symlink" in damaged[0].problem


def test_a_symlinked_journal_directory_is_refused_for_reading_and_writing(
        tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / journal.JOURNAL_DIR).symlink_to(tmp_path / "other")
    assert "symlink" in journal.pending(tmp_path)[1][0].problem
    with pytest.raises(UnsafeFile):
        journal.begin(tmp_path, "archive", {"file": "a.md"})


def test_an_archive_whose_intent_cannot_be_written_does_not_start(store: MemoryStore) -> None:
    store.state_dir.mkdir()
    (store.state_dir / journal.JOURNAL_DIR).write_text("a file, not a folder")
    with pytest.raises(WriteFailed):
        archive_memory(store, "project_a", "old")
    assert (store.directory / "project_a.md").exists() and index_text(store) == INDEX


def test_finished_operations_leave_no_intent(store: MemoryStore) -> None:
    snapshot = create_snapshot(store)
    archive_memory(store, "project_a", "old")
    restore_memory(store, "project_a")
    archive_memory(store, "user_b", "old")
    purge_memory(store, "user_b")
    rollback(store, snapshot.id, scope="all")
    assert journal.pending(store.state_dir) == ([], [])
    assert recover(store) == []


# -- killed archive, restore, purge --------------------------------------------------------

def test_killed_archive_is_reported_by_list_and_finished_by_recover(
        store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    killed(store, "sagemem.files.folder:MemoryFolder", "update_index",
           "archive", "project_a", "--reason", "old", "--yes")
    assert (store.archive_dir / "project_a.md").exists()
    assert "project_a.md" in index_text(store) and read_log(store.state_dir)[0] == []
    code, out, err = run(capsys, store, "list")
    assert code == 0 and "interrupted operation is not finished: archive of project_a.md" \
        in err and "recover" in err
    code, out, err = run(capsys, store, "recover")
    assert code == 0 and out.startswith("finished") and err == ""
    assert "project_a.md" not in index_text(store)
    events = read_log(store.state_dir)[0]
    assert [(e.action, e.file, e.reason) for e in events] == [("archive", "project_a.md",
                                                               "old")]
    assert run(capsys, store, "list")[2] == ""  # nothing pending any more


def test_killed_archive_after_its_log_line_is_not_logged_twice(store: MemoryStore) -> None:
    killed(store, "sagemem.history.journal", "finish",
           "archive", "project_a", "--reason", "old", "--yes")
    [done] = recover(store)
    assert done.outcome == "finished" and "already in step" in done.detail
    assert len(read_log(store.state_dir)[0]) == 1 and journal.pending(store.state_dir)[0] == []


def test_killed_archive_before_the_move_changed_nothing(store: MemoryStore) -> None:
    killed(store, "sagemem.history.archive", "move_file",
           "archive", "project_a", "--reason", "old", "--yes")
    [done] = recover(store)
    assert done.outcome == "not_started"
    assert index_text(store) == INDEX and read_log(store.state_dir)[0] == []
    assert journal.pending(store.state_dir) == ([], [])


def test_killed_restore_is_finished_with_its_memory_md_line(store: MemoryStore) -> None:
    archive_memory(store, "project_a", "old")
    killed(store, "sagemem.files.folder:MemoryFolder", "update_index",
           "restore", "project_a", "--yes")
    assert (store.directory / "project_a.md").exists() and "project_a" not in index_text(store)
    [done] = recover(store)
    assert done.outcome == "finished" and "[A](project_a.md) — a" in index_text(store)
    assert [e.action for e in read_log(store.state_dir)[0]] == ["archive", "restore"]


def test_killed_purge_is_logged_and_finished(store: MemoryStore) -> None:
    archive_memory(store, "project_a", "old")
    killed(store, "sagemem.history.archive_log", "append", "purge", "project_a", "--yes")
    assert not (store.archive_dir / "project_a.md").exists()  # renamed aside, not logged
    assert [e.action for e in read_log(store.state_dir)[0]] == ["archive"]
    [done] = recover(store)
    assert done.outcome == "finished" and os.listdir(store.archive_dir) == []
    assert [e.action for e in read_log(store.state_dir)[0]] == ["archive", "purge"]


# -- killed rollback -----------------------------------------------------------------------

def many(store: MemoryStore, count: int, body: str) -> None:
    for i in range(count):
        (store.directory / f"project_{i:03}.md").write_text(f"---\nname: {i}\n---\n{body}\n")


def digests(store: MemoryStore) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in store.directory.iterdir() if p.is_file()}


def test_killed_rollback_is_finished_by_recover_with_its_line_and_original_undo(
        store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    many(store, 10, "old")
    snapshot = create_snapshot(store)
    before = digests(store)
    many(store, 10, "new")
    (store.directory / "project_extra.md").write_text("added since\n")
    killed(store, "sagemem.history.rollback", "_restore",
           "rollback", snapshot.id, "--scope", "all", "--yes", after=4)
    assert digests(store) != before and rollback_history(store) == []  # half done
    code, _, err = run(capsys, store, "search", "old")
    assert f"rollback of {snapshot.id}" in err
    code, out, err = run(capsys, store, "recover", "--json")
    assert code == 0, err
    [entry] = json.loads(out)["recovered"]
    assert entry["outcome"] == "finished" and entry["rollback"]["recovered"] is True
    assert digests(store) == before and (store.archive_dir / "project_extra.md").exists()
    [line] = rollback_history(store)
    assert line["snapshot"] == snapshot.id and line["recovered"] is True
    intentional_undo = line["protection"]
    rollback(store, intentional_undo, scope="all")  # the undo shown at first still works
    assert digests(store)["project_000.md"] != before["project_000.md"]
    assert (store.directory / "project_extra.md").exists()


def test_recover_leaves_a_file_edited_since_the_killed_rollback_alone(
        store: MemoryStore) -> None:
    many(store, 6, "old")
    snapshot = create_snapshot(store)
    many(store, 6, "new")
    killed(store, "sagemem.history.rollback", "_restore",
           "rollback", snapshot.id, "--yes", after=1)
    (store.directory / "project_005.md").write_text("edited after the kill\n")
    [done] = recover(store)
    assert done.rollback is not None
    assert [(s.file, s.code) for s in done.rollback.skipped] == [("project_005.md",
                                                                  "conflict")]
    assert (store.directory / "project_005.md").read_text() == "edited after the kill\n"
    assert "old" in (store.directory / "project_004.md").read_text()
    assert len(rollback_history(store)) == 1


def test_recover_with_nothing_pending_says_so(store: MemoryStore,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, store, "recover") == (0, "nothing to recover\n", "")


def test_recover_reports_a_damaged_intent_and_exits_1(
        store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    folder = store.state_dir / journal.JOURNAL_DIR
    folder.mkdir(parents=True)
    (folder / "torn.json").write_bytes(b"{")
    code, out, _ = run(capsys, store, "recover")
    assert code == 1 and out.startswith("needs_you") and "torn.json" in out


# -- a pending intent blocks the next multi-file operation ---------------------------------

def test_a_second_rollback_is_refused_while_an_interrupted_one_is_pending(
        store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    many(store, 10, "old")
    snapshot = create_snapshot(store)
    many(store, 10, "new")
    killed(store, "sagemem.history.rollback", "_restore",
           "rollback", snapshot.id, "--scope", "all", "--yes", after=4)
    snapshots_before = sorted(os.listdir(store.state_dir / "snapshots"))
    with pytest.raises(UnfinishedOperation) as caught:
        rollback(store, snapshot.id, scope="all")
    assert f"rollback of {snapshot.id}" in str(caught.value)
    assert "sagemem recover" in str(caught.value)
    assert sorted(os.listdir(store.state_dir / "snapshots")) == snapshots_before  # no new
    code, out, err = run(capsys, store, "rollback", snapshot.id, "--scope", "all", "--yes")
    assert code == 1 and "undo" not in out and "error:" in err and "recover" in err
    assert sorted(os.listdir(store.state_dir / "snapshots")) == snapshots_before


@pytest.mark.parametrize("operation", ["archive", "restore", "purge"])
def test_archive_restore_and_purge_are_refused_while_an_operation_is_pending(
        store: MemoryStore, operation: str) -> None:
    archive_memory(store, "user_b", "old")
    journal.begin(store.state_dir, "rollback", {"snapshot": "s", "scope": "all",
                                                "protection": "p", "time": "t"})
    act = {"archive": lambda: archive_memory(store, "project_a", "old"),
           "restore": lambda: restore_memory(store, "user_b"),
           "purge": lambda: purge_memory(store, "user_b")}[operation]
    with pytest.raises(UnfinishedOperation):
        act()
    assert (store.directory / "project_a.md").exists()
    assert (store.archive_dir / "user_b.md").exists()
    assert [e.action for e in read_log(store.state_dir)[0]] == ["archive"]


# -- a failed operation that changed nothing leaves no intent ------------------------------

@pytest.fixture
def immutable(store: MemoryStore):  # type: ignore[no-untyped-def]
    """The memory folder made immutable (chattr +i): nothing can be linked in or out."""
    flag = subprocess.run(["chattr", "+i", str(store.directory)], capture_output=True)
    if flag.returncode != 0:
        pytest.skip("chattr +i is not available here")
    yield store
    subprocess.run(["chattr", "-i", str(store.directory)], check=True)


@pytest.mark.parametrize("with_archive_dir", [False, True])
def test_an_archive_that_fails_before_changing_anything_leaves_no_intent(
        store: MemoryStore, with_archive_dir: bool, request: pytest.FixtureRequest) -> None:
    if with_archive_dir:
        store.archive_dir.mkdir()
    request.getfixturevalue("immutable")
    with pytest.raises(WriteFailed):
        archive_memory(store, "project_a", "old")
    assert journal.pending(store.state_dir) == ([], [])
    assert (store.directory / "project_a.md").exists() and index_text(store) == INDEX
    assert not (store.archive_dir / "project_a.md").exists()


def test_a_restore_that_fails_before_changing_anything_leaves_no_intent(
        store: MemoryStore, request: pytest.FixtureRequest) -> None:
    archive_memory(store, "project_a", "old")
    request.getfixturevalue("immutable")
    with pytest.raises(WriteFailed):
        restore_memory(store, "project_a")
    assert journal.pending(store.state_dir) == ([], [])
    assert (store.archive_dir / "project_a.md").exists()


# -- the recovered line reports the whole rollback -----------------------------------------

def test_the_recovered_line_counts_what_the_killed_run_did_too(store: MemoryStore) -> None:
    many(store, 10, "old")
    snapshot = create_snapshot(store)
    many(store, 10, "new")
    (store.directory / "project_extra.md").write_text("added since\n")
    killed(store, "sagemem.history.rollback", "_restore",
           "rollback", snapshot.id, "--scope", "all", "--yes", after=4)
    [done] = recover(store)
    assert done.outcome == "finished" and done.rollback is not None
    [line] = rollback_history(store)
    assert line["counts"]["restored"] == 10 and line["counts"]["moved"] == 1
    assert sorted(line["restored"]) == [f"project_{i:03}.md" for i in range(10)]
    assert line["moved"] == ["project_extra.md"] and line["skipped"] == []
    assert line["counts"]["unchanged"] == 3  # MEMORY.md, project_a, user_b: as planned


def test_recover_logs_a_rollback_whose_line_failed_with_what_it_restored(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.history import rollback as rollback_module
    many(store, 5, "old")
    snapshot = create_snapshot(store)
    many(store, 5, "new")
    monkeypatch.setattr(rollback_module, "append_history", lambda *_: "disk full")
    report = rollback(store, snapshot.id)
    assert len(report.restored) == 5 and report.history_error == "disk full"
    monkeypatch.undo()
    [done] = recover(store)
    assert done.outcome == "finished"
    [line] = rollback_history(store)
    assert line["recovered"] is True and line["counts"]["restored"] == 5
    assert line["protection"] == report.protection_id


# -- a kill while the intent record itself is written (issue 20, friction) ------------------

def leftovers(store: MemoryStore) -> list[str]:
    folder = journal.journal_dir(store.state_dir)
    return sorted(n for n in os.listdir(folder) if n.endswith(".sagemem-tmp"))


def kill_while_the_intent_is_written(store: MemoryStore) -> None:
    """An archive killed between writing its intent's temporary file and linking it (the
    first links are the state directory's own .gitignore and its owner file, the third
    the intent)."""
    killed(store, "sagemem.files.atomic", "_link_new",
           "archive", "project_a", "--reason", "old", "--yes", after=2)
    [left] = leftovers(store)
    assert left.startswith(".") and "-archive-" in left
    assert journal.pending(store.state_dir) == ([], [])  # no record: nothing was begun


def test_recover_removes_the_temporary_file_of_an_intent_a_kill_cut_short(
        store: MemoryStore, capsys: pytest.CaptureFixture[str]) -> None:
    kill_while_the_intent_is_written(store)
    (journal.journal_dir(store.state_dir) / "notes.txt").write_text("not sagemem's")
    code, out, err = run(capsys, store, "recover")
    assert (code, out, err) == (0, "nothing to recover\n", "")
    assert leftovers(store) == []
    assert os.listdir(journal.journal_dir(store.state_dir)) == ["notes.txt"]
    assert (store.directory / "project_a.md").exists()  # the archive never began


def test_the_next_operation_removes_the_temporary_file_of_a_cut_short_intent(
        store: MemoryStore) -> None:
    kill_while_the_intent_is_written(store)
    archive_memory(store, "project_a", reason="old")
    assert leftovers(store) == [] and (store.archive_dir / "project_a.md").exists()


def test_only_sagemem_temporaries_of_the_journal_are_removed(tmp_path: Path) -> None:
    folder = journal.journal_dir(tmp_path)
    folder.mkdir(parents=True)
    ours = ".20261201T000000.000000Z-archive-abcdef.json.0123abcd.sagemem-tmp"
    kept = ["x.sagemem-tmp", ".x.json.nothex!!.sagemem-tmp", ".x.json.0123abcd.tmp"]
    for name in [ours, *kept]:
        (folder / name).write_text("")
    os.symlink(tmp_path / "elsewhere", folder / ".y.json.0123abcd.sagemem-tmp")
    assert journal.remove_leftovers(tmp_path) == [ours]
    assert sorted(os.listdir(folder)) == sorted([*kept, ".y.json.0123abcd.sagemem-tmp"])
