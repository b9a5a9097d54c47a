"""The state directory kept out of git by ``init``, in every layout of files/state.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sagemem.files.init import init_directory
from sagemem.files.state import default_state_dir, own_state_dir


def repository(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    return path


def ignored(top: Path, path: Path) -> bool:
    done = subprocess.run(["git", "check-ignore", "-q", "--", f"{path}/"], cwd=top,
                          capture_output=True, check=False)
    return done.returncode == 0


def test_init_in_a_project_ignores_the_state_dir_at_the_project_root(tmp_path: Path) -> None:
    top = repository(tmp_path / "project")
    memory = top / "memory"
    state = default_state_dir(memory)
    assert state == top / ".sage-mem"
    init_directory(memory, state)
    assert (top / ".gitignore").read_text() == "/.sage-mem/\n"
    assert ignored(top, state) and not ignored(top, memory)


def test_init_of_a_subfolder_ignores_the_state_dir_in_its_parent(tmp_path: Path) -> None:
    top = repository(tmp_path / "project")
    memory = top / "docs" / "memory"
    init_directory(memory, default_state_dir(memory))
    assert (top / "docs" / ".gitignore").read_text() == "/.sage-mem/\n"
    assert ignored(top, top / "docs" / ".sage-mem")


def test_a_folders_own_state_dir_is_ignored_with_the_whole_shared_one(tmp_path: Path) -> None:
    top = repository(tmp_path / "project")
    init_directory(top / "work", default_state_dir(top / "work"))
    personal = top / "personal"
    state = default_state_dir(personal)
    assert state == own_state_dir(personal)  # the shared one is work's
    report = init_directory(personal, state)
    assert (top / ".gitignore").read_text() == "/.sage-mem/\n"  # one line serves both
    assert top / ".gitignore" in report.existed
    assert ignored(top, state)


def test_an_explicit_state_dir_in_the_tree_is_ignored_in_its_parent(tmp_path: Path) -> None:
    top = repository(tmp_path / "project")
    state = top / "var" / "sage state"
    init_directory(top / "memory", state)
    assert (top / "var" / ".gitignore").read_text() == "/sage state/\n"
    assert ignored(top, state)


def test_an_existing_gitignore_is_appended_to_never_rewritten(tmp_path: Path) -> None:
    top = repository(tmp_path / "project")
    (top / ".gitignore").write_text("*.pyc")
    report = init_directory(top / "memory", top / ".sage-mem")
    assert (top / ".gitignore").read_text() == "*.pyc\n/.sage-mem/\n"
    assert [u.added for u in report.updated] == ["/.sage-mem/"]


def test_outside_any_repository_no_gitignore_is_written(tmp_path: Path) -> None:
    init_directory(tmp_path / "memory", tmp_path / ".sage-mem")
    assert not (tmp_path / ".gitignore").exists()
