"""One state directory per memory folder: the owner file, the default resolution, refusals.

The issue's scenario: ``init work; init personal`` in one parent folder used to share
``./.sage-mem`` — personal listed work's snapshots, a rollback copied work's files into
personal, a lock in work blocked an archive in personal.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sagemem.config import load_settings
from sagemem.errors import SagememError, WrongFolder
from sagemem.files.state import OWNER_FILE, default_state_dir, owner_of
from sagemem.history.rollback import plan_rollback
from sagemem.history.snapshots import create_snapshot, list_snapshots
from sagemem.store import MemoryStore
from tests.cli_run import Result

MEMORY = "---\nname: {name}\ndescription: {name}\nmetadata:\n  type: project\n---\n{body}\n"


def sagemem(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    from sagemem.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def add(folder: Path, name: str, body: str) -> None:
    (folder / name).write_text(MEMORY.format(name=name[:-3], body=body))


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    return tmp_path / "notes"


@pytest.fixture
def two_folders(parent: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """``sagemem init work; sagemem init personal`` in one parent folder, each with a
    memory of the same name."""
    work, personal = parent / "work", parent / "personal"
    for folder in (work, personal):
        assert sagemem(capsys, "init", str(folder)).code == 0
        add(folder, "project_x.md", f"{folder.name} body")
    return work, personal


# -- the scenario, through the CLI --------------------------------------------------


def test_side_by_side_folders_get_their_own_state_directories(
        two_folders: tuple[Path, Path], parent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, personal = two_folders
    work_state = parent / ".sage-mem"
    personal_state = default_state_dir(personal)
    assert personal_state != work_state and personal_state.parent == work_state / "folders"
    assert owner_of(work_state) == work and owner_of(personal_state) == personal
    shown = json.loads(sagemem(capsys, "--dir", str(personal), "config", "--json").out)
    assert str(personal_state) in json.dumps(shown)


def test_init_says_where_the_second_folders_state_lives(
        parent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sagemem(capsys, "init", str(parent / "work"))
    result = sagemem(capsys, "init", str(parent / "personal"))
    assert str(default_state_dir(parent / "personal")) in result.err
    assert "SAGE_MEM_STATE_DIR" not in result.err  # its default: nothing to export


def test_a_snapshot_of_one_folder_is_not_listed_in_the_other(
        two_folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    work, personal = two_folders
    assert sagemem(capsys, "--dir", str(work), "snapshot", "create").code == 0
    listed = sagemem(capsys, "--dir", str(personal), "snapshot", "list", "--json")
    assert json.loads(listed.out) == []
    assert len(json.loads(sagemem(capsys, "--dir", str(work), "snapshot", "list",
                                  "--json").out)) == 1


def test_a_lock_in_one_folder_does_not_block_an_archive_in_the_other(
        two_folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    work, personal = two_folders
    assert sagemem(capsys, "--dir", str(work), "lock", "project_x").code == 0
    archived = sagemem(capsys, "--dir", str(personal), "archive", "project_x",
                       "--reason", "done", "--yes")
    assert archived.code == 0, archived
    assert (personal / "archive" / "project_x.md").exists()
    assert (work / "project_x.md").exists()


def test_rollback_to_a_snapshot_of_another_folder_is_refused_naming_both(
        two_folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    work, personal = two_folders
    snapshot = create_snapshot(MemoryStore(work))
    foreign = MemoryStore(personal).state_dir / "snapshots" / snapshot.id
    shutil.copytree(snapshot.path, foreign)  # work's snapshot, somehow in personal's state
    before = (personal / "project_x.md").read_bytes()
    result = sagemem(capsys, "--dir", str(personal), "rollback", snapshot.id,
                     "--scope", "all", "--yes")
    assert result.code == 1 and "Traceback" not in result.err
    assert str(work) in result.err and str(personal) in result.err
    assert (personal / "project_x.md").read_bytes() == before
    assert not (personal / "archive").exists()


def test_an_explicit_state_dir_of_another_folder_is_refused_before_anything_is_touched(
        two_folders: tuple[Path, Path], parent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, personal = two_folders
    work_state = parent / ".sage-mem"
    before = sorted(p.relative_to(work_state) for p in work_state.rglob("*"))
    result = sagemem(capsys, "--dir", str(personal), "--state-dir", str(work_state),
                     "archive", "project_x", "--reason", "r", "--yes")
    assert result.code == 1
    assert result.err.startswith("error: ") and result.err.count("\n") == 1
    assert str(work) in result.err and str(personal) in result.err
    assert sorted(p.relative_to(work_state) for p in work_state.rglob("*")) == before
    assert (personal / "project_x.md").exists()


def test_an_explicit_state_dir_of_another_folder_in_the_environment_is_refused(
        two_folders: tuple[Path, Path], parent: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    work, personal = two_folders
    monkeypatch.setenv("SAGE_MEM_STATE_DIR", str(parent / ".sage-mem"))
    result = sagemem(capsys, "--dir", str(personal), "snapshot", "list")
    assert result.code == 1 and "SAGE_MEM_STATE_DIR" in result.err
    assert str(work) in result.err and str(personal) in result.err


# -- the library ------------------------------------------------------------------------------


def test_library_store_with_another_folders_state_dir_is_refused(
        two_folders: tuple[Path, Path], parent: Path) -> None:
    work, personal = two_folders
    with pytest.raises(WrongFolder) as caught:
        MemoryStore(personal, parent / ".sage-mem")
    assert caught.value.owner == work and caught.value.folder == personal
    assert isinstance(caught.value, SagememError)
    with pytest.raises(WrongFolder):
        load_settings(env={}, memory_dir=personal, state_dir=parent / ".sage-mem")


def test_library_default_state_dirs_of_side_by_side_stores_differ(
        two_folders: tuple[Path, Path]) -> None:
    work, personal = two_folders
    assert MemoryStore(work).state_dir != MemoryStore(personal).state_dir
    assert MemoryStore(personal).state_dir == load_settings(env={},
                                                            memory_dir=personal).state_dir


def test_library_plan_rollback_refuses_a_snapshot_of_another_folder(
        two_folders: tuple[Path, Path]) -> None:
    work, personal = two_folders
    snapshot = create_snapshot(MemoryStore(work))
    assert json.loads((snapshot.path / "manifest.json").read_text())["folder"] == str(work)
    store = MemoryStore(personal)
    shutil.copytree(snapshot.path, store.state_dir / "snapshots" / snapshot.id)
    with pytest.raises(WrongFolder) as caught:
        plan_rollback(store, snapshot.id, "all")
    assert caught.value.owner == work and caught.value.folder == personal


def test_the_first_write_claims_an_unowned_state_dir(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    store = MemoryStore(memory, tmp_path / "state")
    assert owner_of(store.state_dir) is None
    create_snapshot(store)
    assert owner_of(store.state_dir) == memory
    assert json.loads((store.state_dir / OWNER_FILE).read_text())["folder"] == str(memory)


# -- the single-folder layout of sage-mem goes on working -----------------------------------


def test_an_existing_state_dir_without_owner_file_keeps_serving_its_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory, state = tmp_path / "memory", tmp_path / ".sage-mem"
    memory.mkdir()
    add(memory, "project_x.md", "old body")
    snapshot = create_snapshot(MemoryStore(memory, state))
    (state / OWNER_FILE).unlink()  # a state directory from before owner files
    manifest = json.loads((snapshot.path / "manifest.json").read_text())
    del manifest["folder"]  # an old snapshot: no folder recorded, still accepted
    (snapshot.path / "manifest.json").write_text(json.dumps(manifest))
    assert MemoryStore(memory).state_dir == state
    assert [s.id for s in list_snapshots(MemoryStore(memory)).snapshots] == [snapshot.id]
    add(memory, "project_x.md", "new body")
    result = sagemem(capsys, "--dir", str(memory), "rollback", snapshot.id, "--yes")
    assert result.code == 0, result
    assert "old body" in (memory / "project_x.md").read_text()
    assert owner_of(state) == memory


# -- a moved or copied folder: its state is not silently swapped for an empty one ----------


def locked(capsys: pytest.CaptureFixture[str], folder: Path) -> Result:
    return sagemem(capsys, "--dir", str(folder), "locks", "--json")


def test_a_moved_folder_warns_of_the_state_it_left_and_is_adopted_by_folder_json(
        two_folders: tuple[Path, Path], parent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, _ = two_folders
    assert sagemem(capsys, "--dir", str(work), "lock", "project_x").code == 0
    job = work.rename(parent / "job")
    result = locked(capsys, job)
    assert result.code == 0 and json.loads(result.out)["locks"] == []  # nothing adopted
    warning = result.err.splitlines()[0]
    assert warning.startswith("warning: ") and result.err.count("\n") == 1
    assert str(parent / ".sage-mem") in warning and str(work) in warning
    assert OWNER_FILE in warning and "--state-dir" in warning
    (parent / ".sage-mem" / OWNER_FILE).write_text(json.dumps({"folder": str(job)}))
    result = locked(capsys, job)
    assert [e["file"] for e in json.loads(result.out)["locks"]] == ["project_x.md"]
    assert result.err == ""


def test_a_copied_folder_warns_of_the_state_it_was_copied_with(
        two_folders: tuple[Path, Path], parent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, personal = two_folders
    for folder in two_folders:
        assert sagemem(capsys, "--dir", str(folder), "lock", "project_x").code == 0
    copy = Path(shutil.copytree(parent, parent.with_name("notes3")))
    copied_state = copy / ".sage-mem" / "folders" / default_state_dir(personal).name
    for folder, state, original in ((copy / "personal", copied_state, personal),
                                    (copy / "work", copy / ".sage-mem", work)):
        result = locked(capsys, folder)
        assert result.code == 0 and json.loads(result.out)["locks"] == []
        assert result.err.startswith("warning: ") and result.err.count("\n") == 1
        assert str(state) in result.err and str(original) in result.err
        (state / OWNER_FILE).write_text(json.dumps({"folder": str(folder)}))
        assert len(json.loads(locked(capsys, folder).out)["locks"]) == 1
    assert locked(capsys, personal).err == ""  # the original is untouched


def test_side_by_side_folders_warn_of_nothing(
        two_folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for folder in two_folders:
        assert locked(capsys, folder).err == ""
