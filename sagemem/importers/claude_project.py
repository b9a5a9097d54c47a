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

The root and the name come from ``files/gitroot.py``, the one walk up to ``.git`` (git is
never run; a ``.git`` file is followed to a main tree only past git's back-link check).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SagememError
from ..files.gitroot import claude_project_key as project_key
from ..files.gitroot import find_dot_git, main_tree
from ..files.memory import parse
from ..files.paths import INDEX_FILE, read_regular

MAX_KEY_CHARS = 200


def project_root(cwd: Path) -> Path:
    """The project Claude Code files ``cwd``'s auto memory under: the main working tree
    of the git repository holding it (every linked worktree shares it), else ``cwd``."""
    dot_git = find_dot_git(cwd)
    return Path(os.path.abspath(cwd)) if dot_git is None else main_tree(dot_git)


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
