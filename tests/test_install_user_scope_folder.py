"""A user-scope install runs in every project, so it names a memory folder only when the
user named one (``--dir``, ``SAGE_MEM_DIR``): a folder the working directory chose (its
git project's) written into it would send every other project to this one's memories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def install(tmp_path: Path, *args: str, memory: Path | None = None) -> str:
    home, project = tmp_path / "home", tmp_path / "project"
    for folder in (home, project / ".git"):
        folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SAGE_MEM_DIR", "SAGE_MEM_STATE_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    env["HOME"] = str(home)
    if memory is not None:
        env["SAGE_MEM_DIR"] = str(memory)
    done = subprocess.run([sys.executable, "-m", "sagemem", "install", *args, "--user",
                           "--yes"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.mark.parametrize("host", ["claude-code", "cursor", "gemini"])
def test_a_folder_chosen_by_the_git_project_is_not_written_into_a_user_entry(
        tmp_path: Path, host: str) -> None:
    said = install(tmp_path, host)
    written = "".join(p.read_text() for p in (tmp_path / "home").rglob("*")
                      if p.is_file() and p.suffix == ".json")
    assert "SAGE_MEM_DIR" not in written and "--dir" not in written
    assert "the folder follows each project" in said


def test_a_folder_the_user_named_is_written_into_the_user_entry(tmp_path: Path) -> None:
    memory = tmp_path / "notes"
    memory.mkdir()
    install(tmp_path, "claude-code", memory=memory)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert settings["env"]["SAGE_MEM_DIR"] == str(memory)
