"""``init`` in a git project: the folder came from the project rule, so it says so —
never the ``export SAGE_MEM_DIR=…`` line, which would pin every project to this one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.git_clones import git_env


def test_init_in_a_git_project_names_the_project_rule_not_an_export(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    project = tmp_path / "app"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
    done = subprocess.run([sys.executable, "-m", "sagemem", "init"], cwd=project, env=env,
                          text=True, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "export SAGE_MEM_DIR" not in done.stderr
    assert "git project" in done.stderr and str(project) in done.stderr.replace("\n    ", " ")


def test_init_outside_a_project_still_says_how_to_find_the_folder(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    done = subprocess.run([sys.executable, "-m", "sagemem", "init", str(tmp_path / "notes")],
                          cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "next: export SAGE_MEM_DIR=" in done.stderr
