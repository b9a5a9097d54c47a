"""CLAUDE.md's ``@path`` imports, followed the way Claude Code documents them
(https://code.claude.com/docs/en/memory, "Import additional files"): a path after
``@`` is relative to the importing file, absolute, or ``~/`` for the home folder;
imports inside code spans and code blocks are not evaluated; imported files may import
others, at most ``MAX_IMPORT_DEPTH`` hops deep.

Stricter than Claude Code on two points, since a CLAUDE.md may come from a repository
someone else wrote: an import is read only when it lies under a root the user pointed
at — the project (or the folder of the CLAUDE.md named) and ``~/.claude``, Claude
Code's own memory files — however it is spelt, never through a symlink; and only a
Markdown (``.md``) file is read. So ``@~/.netrc`` or ``@~/.ssh/config`` in a cloned
repository's CLAUDE.md reads nothing. The rule is the same for every importing file,
the user's own ``~/.claude/CLAUDE.md`` included: a file it imports from elsewhere in
home is imported by naming it (``sagemem import claude-code ~/notes/prefs.md``). A
cycle, a missing file, a path outside, another kind of file and a chain too deep are
notes in the report, never a crash. Each imported file becomes memories of its own
(split like any CLAUDE.md); the ``@path`` line stays where it was.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..transfer.incoming import Skipped
from .source import MAX_SOURCE_FILES, inside, try_read

MAX_IMPORT_DEPTH = 5
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|/|\.{1,2}/)?[^\s`@]+)")
_FENCED = re.compile(r"^[ ]{0,3}(`{3,}|~{3,}).*?^[ ]{0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_TRAILING = ".,;:!?)]}\"'"


@dataclass(frozen=True)
class SourceFile:
    """A file read for the import: where it is, its text, its label (the path shown in
    ``source:`` and origins: relative to its root, ``~/`` for home), and who imported it."""

    path: Path
    text: str
    label: str
    via: str | None = None


@dataclass
class Collector:
    """The files of one import, read once each, with every import followed that lies
    under ``roots`` (``home`` only says how a path under ``~/.claude`` is shown)."""

    roots: tuple[Path, ...]
    home: Path
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _seen: set[Path] = field(default_factory=set)

    def add(self, path: Path, label: str) -> None:
        """Read ``path`` (a file the hierarchy names) and everything it imports."""
        self._read(Path(os.path.normpath(path)), label, None, ())

    def _read(self, path: Path, label: str, via: str | None, chain: tuple[Path, ...]) -> None:
        if path in self._seen:
            return
        if len(self._seen) >= MAX_SOURCE_FILES:
            self.notes.append(f"{label}: not read, over {MAX_SOURCE_FILES} files")
            return
        self._seen.add(path)
        text = try_read(path, label)
        if isinstance(text, Skipped):
            self.skipped.append(text)
            return
        self.files.append(SourceFile(path, text, label, via))
        for target in imports_in(text):
            self._follow(target, path, label, (*chain, path))

    def _follow(self, target: str, importer: Path, label: str, chain: tuple[Path, ...]) -> None:
        path = self._resolve(target, importer)
        where = f"{label} imports @{target}"
        if len(chain) > MAX_IMPORT_DEPTH:
            self.notes.append(f"{where}: not followed, deeper than {MAX_IMPORT_DEPTH} imports")
        elif path in chain:
            self.notes.append(f"{where}: not followed, an import cycle")
        elif (shown := self._label(path)) is None:
            self.notes.append(f"{where}: not followed, outside the project and ~/.claude")
        elif not path.name.lower().endswith(".md"):
            self.notes.append(f"{where}: not followed, not a Markdown (.md) file")
        elif not path.exists() and not path.is_symlink():
            self.notes.append(f"{where}: not followed, no such file")
        else:
            self._read(path, shown, label, chain)

    def _resolve(self, target: str, importer: Path) -> Path:
        if target.startswith("~/"):
            return Path(os.path.normpath(self.home / target[2:]))
        base = Path(target) if target.startswith("/") else importer.parent / target
        return Path(os.path.normpath(base))

    def _label(self, path: Path) -> str | None:
        """How ``path`` is shown, or None when it lies outside every root (or a
        symlinked folder is on the way)."""
        for root in self.roots:
            if inside(root, path):
                return _shown(root, path, self.home)
        return None


def _shown(root: Path, path: Path, home: Path) -> str:
    if root == home / ".claude":
        return "~/.claude/" + path.relative_to(root).as_posix()
    return path.relative_to(root).as_posix()


def imports_in(text: str) -> list[str]:
    """The ``@path`` imports of ``text``, in order, those in code blocks and code spans
    left out (Claude Code does not evaluate them), trailing punctuation dropped."""
    prose = _CODE_SPAN.sub(" ", _FENCED.sub(" ", text))
    found: list[str] = []
    for match in _IMPORT.finditer(prose):
        target = match.group(1).rstrip(_TRAILING)
        if target and target not in found and ("/" in target or "." in target):
            found.append(target)
    return found
