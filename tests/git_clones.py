"""Two clones of one bare remote, for the tests that run real git with sagemem's merge
driver: git and sagemem run as a shell runs them, HOME in the test's tmp_path so the
user's git config never joins in."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

INDEX = "# Memory index\n\n- [Alpha](alpha.md) — the first\n- [Beta](beta.md) — the second\n"
ALPHA = ("---\nname: Alpha\ndescription: the first\ntype: project\n# why it matters\n"
         "priority: low\n---\nline one\nline two\nline three\nline four\nline five\n")
BETA = "---\nname: Beta\ndescription: the second\ntype: user\n---\nBeta's body.\n"


def git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "SAGE_MEM_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="t@example.com",
               SAGE_MEM_SEMANTIC="off", SAGE_MEM_GLOBAL_DIR="off")
    return env


@dataclass(frozen=True)
class Clone:
    """One working copy, its memory folder at ``mem/``."""

    top: Path
    env: dict[str, str]

    @property
    def mem(self) -> Path:
        return self.top / "mem"

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["git", *args], cwd=self.top, env=self.env, text=True,
                              capture_output=True, timeout=120, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {done.stdout}{done.stderr}")
        return done

    def sagemem(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(self.mem), *args],
                              cwd=self.top, env=self.env, text=True, capture_output=True,
                              timeout=120, check=False)

    def write(self, name: str, text: str) -> None:
        (self.mem / name).write_bytes(text.encode("utf-8"))

    def read(self, name: str) -> str:
        return (self.mem / name).read_bytes().decode("utf-8")

    def commit(self, message: str) -> None:
        self.git("add", "-A", "mem")
        self.git("commit", "-q", "-m", message)


def two_clones(tmp_path: Path, *, install: bool = True) -> tuple[Clone, Clone]:
    """A bare remote holding ``mem/`` (MEMORY.md, alpha.md, beta.md), cloned twice, each
    clone with ``sagemem install git`` run (unless ``install`` is False)."""
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare",
                    str(tmp_path / "remote.git")], env=env, check=True)
    first = _clone(tmp_path, "one", env)
    first.mem.mkdir()
    (first.top / ".gitignore").write_text(".sage-mem/\n")
    for name, text in (("MEMORY.md", INDEX), ("alpha.md", ALPHA), ("beta.md", BETA)):
        first.write(name, text)
    first.git("add", "-A")
    first.git("commit", "-q", "-m", "the folder")
    if install:  # the folder's .gitattributes is committed and travels with it
        _install(first)
        first.commit("install git")
    first.git("push", "-q", "origin", "main")
    second = _clone(tmp_path, "two", env)
    if install:  # the git config is each clone's own
        _install(second)
    return first, second


def _install(clone: Clone) -> None:
    done = clone.sagemem("install", "git")
    assert done.returncode == 0, done.stderr


def _clone(tmp_path: Path, name: str, env: dict[str, str]) -> Clone:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "clone", "-q",
                    str(tmp_path / "remote.git"), str(tmp_path / name)],
                   env=env, check=True, capture_output=True)
    clone = Clone(tmp_path / name, env)
    clone.git("config", "pull.rebase", "false")
    return clone
