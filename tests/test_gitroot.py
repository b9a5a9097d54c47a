"""The one walk up to ``.git`` (files/gitroot.py): a real linked worktree leads to its main
tree; a ``.git`` file that fails git's back-link check — a submodule's, a forged one —
is a project of its own. Real ``git worktree add`` where git writes the files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sagemem.files.gitroot import (
    MAX_PARENTS,
    claude_project_key,
    common_dir,
    find_dot_git,
    git_dir,
    main_tree,
)

needs_git = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True)
                               .returncode != 0, reason="needs git")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit (a worktree needs one)."""
    path = tmp_path / "victim"
    path.mkdir()
    git("init", "-q", cwd=path)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=path)
    return path


@pytest.fixture
def worktree(repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "feature"
    git("worktree", "add", "-q", str(path), "-b", "feature", cwd=repo)
    return path


def forged(folder: Path, gitdir: str, commondir: str | None = None) -> Path:
    """A folder as an archive could unpack it: ``.git`` = ``gitdir: …``, and optionally
    a git directory of its own whose ``commondir`` claims another repository."""
    folder.mkdir(parents=True)
    (folder / ".git").write_text(f"gitdir: {gitdir}\n")
    if commondir is not None:
        (folder / gitdir).mkdir(parents=True)
        (folder / gitdir / "commondir").write_text(commondir + "\n")
    return folder / ".git"


@needs_git
def test_a_real_linked_worktree_leads_to_the_main_tree(repo: Path, worktree: Path) -> None:
    (worktree / "docs").mkdir()
    dot_git = find_dot_git(worktree / "docs")
    assert dot_git == worktree / ".git"
    assert main_tree(dot_git) == repo
    assert git_dir(dot_git) == repo / ".git" / "worktrees" / "feature"
    assert common_dir(repo / ".git" / "worktrees" / "feature") == repo / ".git"


@needs_git
def test_a_main_tree_and_its_subfolders_are_their_own(repo: Path) -> None:
    (repo / "src" / "pkg").mkdir(parents=True)
    dot_git = find_dot_git(repo / "src" / "pkg")
    assert dot_git == repo / ".git" and main_tree(dot_git) == repo


@needs_git
def test_a_forged_commondir_does_not_lead_to_another_repository(repo: Path,
                                                                tmp_path: Path) -> None:
    dot_git = forged(tmp_path / "unpacked", "fake", str(repo / ".git"))
    assert main_tree(dot_git) == tmp_path / "unpacked"


@needs_git
def test_a_git_file_naming_another_trees_worktree_fails_the_back_link(
        repo: Path, worktree: Path, tmp_path: Path) -> None:
    # the git directory is a real <commondir>/worktrees/<name>, but its gitdir names the
    # real worktree's .git file, not this one
    dot_git = forged(tmp_path / "unpacked", str(repo / ".git" / "worktrees" / "feature"))
    assert main_tree(dot_git) == tmp_path / "unpacked"
    assert main_tree(worktree / ".git") == repo


def test_a_relative_back_link_is_followed(tmp_path: Path) -> None:
    # worktree.useRelativePaths (git 2.48): both files hold paths relative to their folder
    linked = tmp_path / "main" / ".git" / "worktrees" / "wt"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    (linked / "gitdir").write_text("../../../../wt/.git\n")
    dot_git = forged(tmp_path / "wt", "../main/.git/worktrees/wt")
    assert main_tree(dot_git) == tmp_path / "main"


def test_a_submodules_git_file_is_its_own_tree(tmp_path: Path) -> None:
    modules = tmp_path / "parent" / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    dot_git = forged(tmp_path / "parent" / "lib", "../.git/modules/lib")
    assert git_dir(dot_git) == modules and common_dir(modules) is None
    assert main_tree(dot_git) == tmp_path / "parent" / "lib"


def test_an_unreadable_git_file_is_its_own_tree(tmp_path: Path) -> None:
    dot_git = forged(tmp_path / "broken", "/no/such/place")
    assert git_dir(dot_git) is None and main_tree(dot_git) == tmp_path / "broken"
    (tmp_path / "broken" / ".git").write_bytes(b"\xff\xfe")
    assert main_tree(dot_git) == tmp_path / "broken"


def test_the_walk_stops_after_max_parents_folders(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path.joinpath(*["d"] * MAX_PARENTS)
    deep.mkdir(parents=True)
    assert find_dot_git(deep.parent) == tmp_path / ".git"
    assert find_dot_git(deep) != tmp_path / ".git"


def test_claude_project_key_is_claude_codes_rule() -> None:
    assert claude_project_key(Path("/home/u/my_app.v2")) == "-home-u-my-app-v2"
    assert claude_project_key(Path("/home/u/日本")) == "-home-u---"
