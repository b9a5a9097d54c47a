"""sagemem install git: the folder's .gitattributes and the repository's local git config,
written once, shown by --dry-run, taken out byte for byte by --undo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.gitsync.install import ATTRIBUTE, MARK, driver_command
from tests.git_clones import git_env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose ``mem/`` folder holds one memory."""
    (tmp_path / "home").mkdir()
    top = tmp_path / "repo"
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(top)],
                   env=git_env(tmp_path / "home"), check=True)
    (top / "mem").mkdir()
    (top / "mem" / "x.md").write_text("---\nname: X\n---\nx\n")
    return top


def _sagemem(repo: Path, *args: str, folder: str = "mem") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(repo / folder),
                           "install", "git", *args], cwd=repo, text=True, capture_output=True,
                          env=git_env(repo.parent / "home"), timeout=60, check=False)


def _config(repo: Path, key: str) -> str | None:
    done = subprocess.run(["git", "config", "--local", "--get", key], cwd=repo, text=True,
                          capture_output=True, env=git_env(repo.parent / "home"), check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def test_install_writes_the_attributes_and_the_driver(repo: Path) -> None:
    done = _sagemem(repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "mem" / ".gitattributes").read_text() == f"{MARK}\n{ATTRIBUTE}\n"
    assert _config(repo, "merge.sagemem.driver") == driver_command(sys.executable)
    assert sys.executable in driver_command()  # git runs it without the venv on PATH
    assert _config(repo, "merge.sagemem.name")


def test_a_second_install_changes_nothing_and_says_so(repo: Path) -> None:
    _sagemem(repo)
    before = (repo / "mem" / ".gitattributes").read_bytes()
    again = _sagemem(repo)
    assert again.returncode == 0 and again.stdout == ""
    assert "nothing to change" in again.stderr
    assert (repo / "mem" / ".gitattributes").read_bytes() == before


def test_dry_run_prints_the_changes_and_changes_nothing(repo: Path) -> None:
    done = _sagemem(repo, "--dry-run")
    assert done.returncode == 0
    assert "would write" in done.stdout
    assert "would set git config merge.sagemem.driver" in done.stdout
    assert not (repo / "mem" / ".gitattributes").exists()
    assert _config(repo, "merge.sagemem.driver") is None


def test_undo_removes_a_gitattributes_install_created(repo: Path) -> None:
    _sagemem(repo)
    done = _sagemem(repo, "--undo")
    assert done.returncode == 0, done.stderr
    assert not (repo / "mem" / ".gitattributes").exists()
    assert _config(repo, "merge.sagemem.driver") is None
    assert _config(repo, "merge.sagemem.name") is None


@pytest.mark.parametrize("existing", [b"*.png binary\n", b"*.png binary", b"",
                                      b"*.txt text\r\n*.png binary\r\n"])
def test_undo_leaves_an_existing_gitattributes_byte_for_byte(repo: Path, existing: bytes
                                                              ) -> None:
    path = repo / "mem" / ".gitattributes"
    path.write_bytes(existing)
    _sagemem(repo)
    assert ATTRIBUTE in path.read_text()
    _sagemem(repo, "--undo")
    assert path.read_bytes() == existing


def test_undo_keeps_lines_a_person_added_after_install(repo: Path) -> None:
    _sagemem(repo)
    path = repo / "mem" / ".gitattributes"
    path.write_bytes(path.read_bytes() + b"*.png binary\n")
    _sagemem(repo, "--undo")
    assert path.read_bytes() == b"*.png binary\n"


def test_undo_keeps_a_line_added_after_install_on_a_file_without_a_final_newline(
        repo: Path) -> None:
    """install had to add a line break before its lines; a line added after them must
    not be joined to the line before (it would become part of a comment)."""
    path = repo / "mem" / ".gitattributes"
    path.write_bytes(b"*.png binary\n# mine")
    _sagemem(repo)
    path.write_bytes(path.read_bytes() + b"*.jpg binary\n")
    _sagemem(repo, "--undo")
    assert path.read_bytes() == b"*.png binary\n# mine\n*.jpg binary\n"


def test_undo_with_nothing_installed_says_so(repo: Path) -> None:
    done = _sagemem(repo, "--undo")
    assert done.returncode == 0 and "nothing to undo" in done.stderr


def test_a_folder_outside_any_repository_is_one_error_naming_git_init(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "plain" / "mem").mkdir(parents=True)
    done = _sagemem(tmp_path / "plain")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert "git init" in done.stderr and done.stderr.count("\n") == 1


def test_a_symlinked_gitattributes_is_refused_untouched(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"*.png binary\n")
    (repo / "mem" / ".gitattributes").symlink_to(outside)
    done = _sagemem(repo)
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    assert outside.read_bytes() == b"*.png binary\n"
    assert _config(repo, "merge.sagemem.driver") is None


def test_a_linked_worktree_is_wired_in_its_repository(repo: Path, tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=repo, env=env, check=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "worktree", "add", "-q", str(linked)], cwd=repo, env=env, check=True,
                   capture_output=True)
    assert (linked / ".git").is_file()
    done = _sagemem(linked)
    assert done.returncode == 0, done.stderr
    assert (linked / "mem" / ".gitattributes").is_file()
    assert _config(linked, "merge.sagemem.driver") == driver_command(sys.executable)


def test_install_again_upgrades_a_driver_command_from_before_the_dashes(repo: Path) -> None:
    _sagemem(repo)
    old = f"{sys.executable} -m sagemem merge-driver %O %A %B %P"
    subprocess.run(["git", "config", "--local", "merge.sagemem.driver", old], cwd=repo,
                   env=git_env(repo.parent / "home"), check=True)
    done = _sagemem(repo)
    assert done.returncode == 0, done.stderr
    assert "set git config merge.sagemem.driver" in done.stdout
    assert _config(repo, "merge.sagemem.driver") == driver_command(sys.executable)
    assert " merge-driver -- %O %A %B %P" in driver_command(sys.executable)
