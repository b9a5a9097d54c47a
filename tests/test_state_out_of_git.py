"""The state directory never travels: whichever layout puts it inside a git working
tree, and whether or not ``init`` ran in that clone, ``git add -A`` leaves it out —
its own ``.gitignore`` (``*``) says so, with no line in any file of the user's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.git_clones import git_env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, text=True, capture_output=True,
                          timeout=120, check=False)


def _repository(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    top = tmp_path / "project"
    top.mkdir()
    _run(["git", "-c", "init.defaultBranch=main", "init", "-q"], top, env)
    return top, env


def _tracked_after_add(top: Path, env: dict[str, str]) -> list[str]:
    _run(["git", "add", "-A"], top, env)
    return _run(["git", "ls-files"], top, env).stdout.splitlines()


def test_a_state_directory_beside_the_folder_is_never_added_even_without_init(
        tmp_path: Path) -> None:
    top, env = _repository(tmp_path)
    memory = top / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory index\n")  # a clone: the folder came in
    done = _run([sys.executable, "-m", "sagemem", "--dir", str(memory), "new", "--type",
                 "user", "--name", "Desk", "--description", "d", "--body", "x"], top, env)
    assert done.returncode == 0, done.stderr
    assert (top / ".sage-mem").is_dir()  # the default layout: beside the folder
    tracked = _tracked_after_add(top, env)
    assert "memory/user_desk.md" in tracked
    assert not [path for path in tracked if path.startswith(".sage-mem")], tracked
    assert not (top / ".gitignore").exists()  # nothing of the user's was needed


def test_a_state_directory_given_inside_the_repository_is_never_added(
        tmp_path: Path) -> None:
    top, env = _repository(tmp_path)
    state = top / "tools" / "sm-state"
    done = _run([sys.executable, "-m", "sagemem", "--dir", str(top / "notes"),
                 "--state-dir", str(state), "init"], top, env)
    assert done.returncode == 0, done.stderr
    assert (state / ".gitignore").read_bytes().endswith(b"*\n")
    assert not [p for p in _tracked_after_add(top, env) if p.startswith("tools/sm-state")]


def test_a_gitignore_the_user_put_in_the_state_directory_is_kept(tmp_path: Path) -> None:
    from sagemem.files.state import claim

    state, memory = tmp_path / "state", tmp_path / "memory"
    state.mkdir()
    memory.mkdir()
    (state / ".gitignore").write_text("mine\n")
    claim(state, memory)
    assert (state / ".gitignore").read_text() == "mine\n"
