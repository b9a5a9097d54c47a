"""Where Claude Code keeps a project's auto memory, and whether a folder is one.

Claude Code's docs (https://code.claude.com/docs/en/memory, "Auto memory"): each
project's notes live in ``~/.claude/projects/<project>/memory/`` — a ``MEMORY.md``
index and one Markdown file per topic — and ``<project>`` is derived from the git
repository, so every worktree and subfolder of one repository shares a folder; outside
a repository the working directory is used. The name is that absolute path with every
character outside ``[A-Za-z0-9]`` made ``-`` (``/home/u/app`` → ``-home-u-app``), the
rule Claude Code's ``sanitizePath`` applies (as slopus/happy's
``normalizePathForKey`` documents it); a name over 200 characters is cut there and
given a hash suffix, which is found here by its prefix rather than recomputed.

git is never run (it would execute the repository's hooks and config): ``.git`` is
read as plain files, as ``history/githead.py`` does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import SagememError
from ..files.memory import parse
from ..files.paths import INDEX_FILE, read_regular

MAX_PARENTS = 64
MAX_KEY_CHARS = 200
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def project_root(cwd: Path) -> Path:
    """The project Claude Code files ``cwd``'s auto memory under: the main working tree
    of the git repository holding it (a linked worktree's ``.git`` file is followed to
    the repository's common directory), else ``cwd`` itself."""
    cwd = Path(os.path.abspath(cwd))
    for folder in [cwd, *cwd.parents][:MAX_PARENTS]:
        git = folder / ".git"
        if git.is_dir():
            return folder
        if git.is_file():
            return _main_tree(git) or folder
    return cwd


def _main_tree(git_file: Path) -> Path | None:
    text = _small_text(git_file)
    if text is None or not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:"):].strip())
    git_dir = git_dir if git_dir.is_absolute() else git_file.parent / git_dir
    common = _small_text(git_dir / "commondir")
    if common is None:
        return None
    common_dir = Path(os.path.abspath(git_dir / common))
    return common_dir.parent if common_dir.name == ".git" else None


def _small_text(path: Path) -> str | None:
    try:
        return read_regular(path, 64 * 1024).data.decode("utf-8").strip()
    except (SagememError, UnicodeDecodeError):
        return None


def project_key(root: Path) -> str:
    """Claude Code's folder name for a project root: ``/home/u/app`` → ``-home-u-app``."""
    return _NOT_ALNUM.sub("-", str(root))


def auto_memory_dir(root: Path, home: Path) -> Path | None:
    """``<home>/.claude/projects/<project>/memory`` for the project at ``root``, when
    that folder exists (a real folder, not a link); None otherwise."""
    projects = home / ".claude" / "projects"
    key = project_key(root)
    name = key if len(key) <= MAX_KEY_CHARS else _long_key(projects, key)
    if name is None:
        return None
    folder = projects / name / "memory"
    return folder if _real_dir(projects / name) and _real_dir(folder) else None


def _long_key(projects: Path, key: str) -> str | None:
    """The one entry named ``key[:200]-<hash>``, or None (none, or several)."""
    prefix = key[:MAX_KEY_CHARS] + "-"
    try:
        with os.scandir(projects) as entries:
            found = [e.name for e in entries if e.name.startswith(prefix)]
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def format_problem(folder: Path) -> str | None:
    """Why ``folder`` is not an auto-memory folder in sagemem's format (a ``MEMORY.md``
    and top-level ``.md`` memories that each open with frontmatter), or None when it is."""
    if not (folder / INDEX_FILE).is_file():
        return f"it has no {INDEX_FILE}"
    for path in sorted(folder.glob("*.md")):
        if path.name == INDEX_FILE:
            continue
        try:
            memory = parse(read_regular(path).data, path.name)
        except SagememError as exc:
            return f"{path.name} cannot be read ({exc})"
        if not memory.has_frontmatter:
            return f"{path.name} has no frontmatter (---) block"
    return None
