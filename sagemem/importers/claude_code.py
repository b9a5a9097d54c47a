"""Claude Code's memories read into a Batch: the CLAUDE.md hierarchy, split into
memories by section, and the project's auto-memory folder, copied as it is.

What is read follows Claude Code's docs (https://code.claude.com/docs/en/memory):
``~/.claude/CLAUDE.md`` and ``~/.claude/rules/*.md`` (the user's), ``CLAUDE.md`` and
``.claude/CLAUDE.md`` in the project root and each folder down to the working
directory, ``.claude/rules/**/*.md`` (rules, with optional ``paths:`` frontmatter) and
``CLAUDE.local.md`` (the project's, for one person), each with its ``@path`` imports
(``claude_imports``); the folders above the project root are not read — they are not
what the user pointed at. Each file is cut into sections (``sections``), each section
typed by the rules of ``classify`` (a rule file's section that no rule types is
``feedback``: a rule is an instruction), named ``<type>_<slug>.md`` from its heading,
described by its first sentence and marked ``source: claude-code:<file>#<anchor>``.

The auto-memory folder (``claude_project``) already holds sagemem's format, so each of
its memories is taken byte for byte: an identical copy stays identical to its original
(a re-import or a later comparison sees the same revision), and where it came from is
said in the origin, not written into the copy. ``adopt`` points sagemem at the folder
in place instead. Nothing here writes a file of the source.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ..errors import ImportSourceError, SagememError
from ..files.memory import load_yaml, parse, split
from ..files.paths import INDEX_FILE, check_new_name
from ..transfer.incoming import Batch, Incoming, Skipped
from .claude_imports import Collector
from .claude_project import auto_memory_dir, format_problem, project_root
from .section_memories import Gathered, SectionFile, add_sections
from .source import markdown_files, try_read

SOURCE = "claude-code"
PROJECT_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")


def read_batch(path: Path | None, *, home: Path, cwd: Path) -> Batch:
    """Claude Code's memories as a Batch: with no ``path``, the hierarchy Claude Code
    loads in ``cwd`` and the project's auto-memory folder; with a ``path``, that
    CLAUDE.md file, that project folder, or that auto-memory folder."""
    home = Path(os.path.abspath(home))
    if path is None:
        root = project_root(cwd)
        collector = _hierarchy(root, Path(os.path.abspath(cwd)), home)
        return _batch(collector, auto_memory_dir(root, home))
    target = Path(os.path.abspath(path.expanduser()))
    if target.is_file():
        collector = Collector((target.parent, home / ".claude"), home)
        collector.add(target, target.name)
        return _batch(collector, None)
    if not target.is_dir():
        raise ImportSourceError(target, "does not exist; point at a CLAUDE.md file, a "
                                        "project folder or an auto-memory folder")
    if (target / INDEX_FILE).is_file() and not _has_claude_files(target):
        return _batch(Collector((target,), home), target)
    return _batch(_project(target, home), None)


def adopt(cwd: Path, home: Path) -> Path:
    """The project's auto-memory folder, checked to be in sagemem's format and recorded
    as this project's memory folder (``files.scopes.use_folder``), so sagemem works on
    it in place; ImportSourceError when there is none or it is not that format."""
    root = project_root(cwd)
    folder = auto_memory_dir(root, Path(os.path.abspath(home)))
    if folder is None:
        raise ImportSourceError(home / ".claude" / "projects", f"no auto-memory folder for "
                                f"{root}; Claude Code has written none for this project")
    problem = format_problem(folder)
    if problem is not None:
        raise ImportSourceError(folder, f"not in sagemem's format: {problem}; import it "
                                        "with --copy instead")
    from ..files.scopes import use_folder  # the scopes room's map of project folders

    recorded: Path = use_folder(root, folder, home=home)
    return recorded


def _has_claude_files(folder: Path) -> bool:
    return any((folder / name).is_file() for name in PROJECT_FILES)


def _hierarchy(root: Path, cwd: Path, home: Path) -> Collector:
    collector = Collector((root, home / ".claude"), home)
    user = home / ".claude"
    _add_if_file(collector, user / "CLAUDE.md", "~/.claude/CLAUDE.md")
    for rule in _rule_files(user / "rules", collector, "~/.claude/rules"):
        collector.add(rule, "~/.claude/" + rule.relative_to(user).as_posix())
    _add_project(collector, root, cwd)
    return collector


def _project(root: Path, home: Path) -> Collector:
    collector = Collector((root, home / ".claude"), home)
    _add_project(collector, root, root)
    return collector


def _add_project(collector: Collector, root: Path, cwd: Path) -> None:
    folders = [root]
    if cwd != root and cwd.is_relative_to(root):
        for part in cwd.relative_to(root).parts:
            folders.append(folders[-1] / part)
    for folder in folders:
        for name in PROJECT_FILES[:2]:
            _add_if_file(collector, folder / name, (folder / name).relative_to(root).as_posix())
    for rule in _rule_files(root / ".claude" / "rules", collector, ".claude/rules"):
        collector.add(rule, rule.relative_to(root).as_posix())
    for folder in folders:
        local = folder / "CLAUDE.local.md"
        _add_if_file(collector, local, local.relative_to(root).as_posix())


def _add_if_file(collector: Collector, path: Path, label: str) -> None:
    if path.is_file() or path.is_symlink():
        collector.add(path, label)


def _rule_files(folder: Path, collector: Collector, label: str) -> list[Path]:
    """The rule files under ``folder``; a symlinked rules folder is not entered, and
    is listed as skipped like a symlinked CLAUDE.md (never left out unsaid)."""
    if folder.is_symlink():
        collector.skipped.append(Skipped(label, "a symlinked folder, which an import "
                                                "never enters"))
        return []
    if not folder.is_dir():
        return []
    return markdown_files(folder)[0]


def _batch(collector: Collector, auto_dir: Path | None) -> Batch:
    into = Gathered(skipped=list(collector.skipped), notes=list(collector.notes))
    if auto_dir is not None:  # first: their names are theirs, sections number around them
        _auto_memories(auto_dir, into)
    for source in collector.files:
        text, first_line, paths = _without_frontmatter(source.text)
        is_rule = "/rules/" in f"/{source.label}"
        preface = None if paths is None else f"Applies to files matching {paths}."
        add_sections(SOURCE, SectionFile(source.label, text, first_line,
                                         "feedback" if is_rule else None, preface), into)
    return Batch(SOURCE, tuple(into.items), tuple(into.skipped), into.all_notes())


def _without_frontmatter(text: str) -> tuple[str, int, str | None]:
    """A rule file's text without its frontmatter, the line its body starts on, and its
    ``paths:`` globs as text (None when it names none)."""
    parts = split(text)
    if parts.frontmatter is None:
        return text, 1, None
    try:
        loaded = load_yaml(parts.frontmatter)
    except yaml.YAMLError:  # a broken block only loses its globs; the body is kept
        loaded = None
    globs = loaded.get("paths") if isinstance(loaded, dict) else None
    if isinstance(globs, str):
        globs = [globs]
    if not isinstance(globs, list):
        globs = []
    shown = ", ".join(f"`{g}`" for g in globs if isinstance(g, str))
    first = text.count("\n", 0, parts.body_start) + 1
    return text[parts.body_start:], first, shown or None


def _auto_memories(folder: Path, into: Gathered) -> None:
    for path in sorted(folder.glob("*.md")):
        if path.name == INDEX_FILE:
            continue
        origin = f"auto memory: {path.name}"
        text = try_read(path, origin)
        if isinstance(text, Skipped):
            into.skipped.append(text)
            continue
        reason = _auto_refusal(path.name, text)
        if reason is not None:
            into.skipped.append(Skipped(origin, reason))
            continue
        into.names.claim_exact(path.name)
        into.items.append(Incoming(name=path.name, text=text, origin=origin))


def _auto_refusal(name: str, text: str) -> str | None:
    try:
        check_new_name(name)
    except SagememError as exc:
        return str(exc)
    if not parse(text.encode("utf-8"), name).has_frontmatter:
        return "no frontmatter (---) block: not an auto-memory file"
    return None
