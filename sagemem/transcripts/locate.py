"""Where this project's Claude Code transcripts are: ``<home>/projects/<key>/*.jsonl``.

Claude Code names a session's folder after the directory it was started in, every
character outside ``[A-Za-z0-9]`` made ``-`` (``files/gitroot.claude_project_key``), so a
session started in a subfolder or a linked worktree of the project has a folder of its
own. ``project_folders`` takes, in order and once each: the working directory, the
folder Claude Code names in ``CLAUDE_PROJECT_DIR`` (set for the hooks it runs), the
working tree holding them and that tree's main tree. A key over 200 characters is cut
there by Claude Code and given a hash suffix; it is found by that prefix when one folder
alone has it. Folders and files that are symlinks are never followed: a link planted in
``~/.claude/projects`` must not make sagemem read, and quote, a file elsewhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..config import Settings
from ..files.gitroot import claude_project_key, find_dot_git, main_tree

MAX_KEY_CHARS = 200
MAX_FILES = 20
"""The newest transcripts searched: a recent decision is in a recent session, and each
file costs a read within the hook's time budget."""
MAX_LISTED = 10_000
"""Directory entries looked at in one project folder: a folder of a million files must
not cost the prompt hook a million ``lstat`` calls."""
SUFFIX = ".jsonl"


def project_folders(claude_home: Path, cwd: Path, project_dir: str | None = None
                    ) -> tuple[Path, ...]:
    """The existing, real (not linked) transcript folders of the project at ``cwd``."""
    folders: list[Path] = []
    for root in _roots(cwd, project_dir):
        folder = _folder(claude_home / "projects", claude_project_key(root))
        if folder is not None and folder not in folders:
            folders.append(folder)
    return tuple(folders)


def _roots(cwd: Path, project_dir: str | None) -> list[Path]:
    """The directories a session of this project may have been started in."""
    roots = [Path(os.path.abspath(cwd))]
    if project_dir and project_dir.strip() and os.path.isabs(project_dir.strip()):
        roots.append(Path(os.path.abspath(project_dir.strip())))
    for root in list(roots):
        dot_git = find_dot_git(root)
        if dot_git is not None:
            roots += [dot_git.parent, main_tree(dot_git)]
    return list(dict.fromkeys(roots))


def _folder(projects: Path, key: str) -> Path | None:
    if len(key) > MAX_KEY_CHARS:
        found = _long_key(projects, key)
        if found is None:
            return None
        key = found
    folder = projects / key
    return folder if _real_dir(folder) else None


def _long_key(projects: Path, key: str) -> str | None:
    """The one folder named ``key[:200]-<hash>``, or None (none, or several)."""
    prefix = key[:MAX_KEY_CHARS] + "-"
    try:
        with os.scandir(projects) as entries:
            found = [e.name for _, e in zip(range(MAX_LISTED), entries, strict=False)
                     if e.name.startswith(prefix)]
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def newest_transcripts(folders: Iterable[Path], *, limit: int = MAX_FILES,
                       skip_session: str | None = None) -> list[Path]:
    """The ``limit`` newest regular ``*.jsonl`` files of ``folders`` by modification time,
    newest first; links, subagents' ``agent-*.jsonl`` (sidechains) and the transcript of
    ``skip_session`` (the session asking: its turns are already in its context) left out."""
    found: list[tuple[float, Path]] = []
    for folder in folders:
        found += _listed(folder, skip_session)
    found.sort(key=lambda item: item[0], reverse=True)
    return [path for _, path in found[:limit]]


def _listed(folder: Path, skip_session: str | None) -> list[tuple[float, Path]]:
    listed = []
    try:
        with os.scandir(folder) as entries:
            for _, entry in zip(range(MAX_LISTED), entries, strict=False):
                if not _is_transcript(entry.name, skip_session):
                    continue
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    listed.append((st.st_mtime, folder / entry.name))
    except OSError:
        return listed
    return listed


def _is_transcript(name: str, skip_session: str | None) -> bool:
    return (name.endswith(SUFFIX) and not name.startswith((".", "agent-"))
            and name[: -len(SUFFIX)] != skip_session)


def transcript_folders(settings: Settings, cwd: Path | None = None,
                       env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The transcript folders the settings allow for the project at ``cwd`` (default: this
    process's working directory — Claude Code runs its hooks and MCP servers in the
    project, and names it in ``CLAUDE_PROJECT_DIR`` of ``env``, default this process's);
    none when ``transcripts`` is off or the settings name no Claude Code folder. A server
    answering for another process passes that process's ``cwd`` and ``env``: its own
    would quote another project's past sessions."""
    if not settings.transcripts or settings.claude_home is None:
        return ()
    try:
        here = Path.cwd() if cwd is None else cwd
    except OSError:  # the working directory was deleted: no project to recall
        return ()
    env = os.environ if env is None else env
    return project_folders(settings.claude_home, here, env.get("CLAUDE_PROJECT_DIR"))
