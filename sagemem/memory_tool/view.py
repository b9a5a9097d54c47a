"""A memory as the model sees it — the text it wrote — and the edits it may make to it.

The model numbers lines, counts occurrences and writes ``old_str`` against what it wrote.
When that was a plain text, sagemem put a frontmatter block above it (``text.py``,
recorded in ``generated.py``): ``view``, ``str_replace`` and ``insert`` leave that block
out and keep it on disk, so line 1 is the model's first line (not the ``---`` seven lines
up), an ``insert`` at line 0 lands below the block rather than turning it into body, and
a word of the generated description never makes a ``str_replace`` ambiguous. A file
whose frontmatter the model (or a person) wrote is its whole text.

Either way an edit must leave a memory: ``damage`` says why a result would not be one
(its frontmatter gone from line 1, never closed, not YAML any more, or a hidden block
changed), and the handler refuses it with nothing written. Without this a
``str_replace`` of the closing ``---`` was accepted and the memory dropped out of search.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SagememError
from ..files.edit import set_fields
from ..files.memory import Memory, load_yaml, split
from .text import describe


@dataclass(frozen=True)
class ModelView:
    """``text`` is what the model reads and edits; ``hidden`` the frontmatter block
    sagemem wrote above it ("" when the whole file is the model's)."""

    hidden: str
    text: str

    @property
    def hidden_lines(self) -> int:
        """How many file lines come before the model's line 1."""
        return self.hidden.count("\n") + (1 if self.hidden and self.hidden[-1] != "\n" else 0)

    def file_text(self, edited: str) -> str:
        """The file holding ``edited`` as the model's text, below the hidden block."""
        if self.hidden and not self.hidden.endswith("\n") and edited:
            return self.hidden + "\n" + edited  # a block ending on its `---` keeps its line
        return self.hidden + edited


def model_view(memory: Memory, generated: bool) -> ModelView:
    """What the model sees of ``memory``: the body below a block sagemem ``generated``,
    else the whole file (also when that block is no longer closed: nothing is hidden
    that a person would have to find)."""
    parts = split(memory.text)
    if not generated or parts.frontmatter is None:
        return ModelView("", memory.text)
    return ModelView(memory.text[:parts.body_start], memory.text[parts.body_start:])


def follow_description(memory: Memory, view: ModelView, edited: str, text: str) -> str:
    """``text``, the file after the model's text became ``edited``, with a hidden
    description still made from the first line (nobody reworded it) made from the new
    first line: the model cannot see it to keep it true. A text left without words keeps
    the description it had, until words come back."""
    if not view.hidden or describe(view.text) not in ("", memory.description):
        return text  # a description someone reworded is theirs
    description = describe(edited)
    if description in ("", memory.description):  # a text without words keeps the last
        return text
    try:
        return set_fields(text, {"description": description}, memory.file)
    except SagememError:  # a block a person made uneditable keeps its description
        return text


def damage(before: str, after: str, *, keep_block: bool) -> str | None:
    """Why ``after`` would break the frontmatter ``before`` has, or None if it does not:
    a good block must stay first, closed and YAML (and unchanged when it is the one
    sagemem keeps out of sight: ``keep_block``); a file without one must not gain a
    broken one. A file already broken may be mended or left so."""
    was, now = _health(before), _health(after)
    if was == "ok" and now == "none":
        return "the `---` line that opens it would no longer be line 1"
    if was != "broken" and now not in ("ok", "none"):
        return now
    if keep_block and split(before).frontmatter != split(after).frontmatter:
        return "the block sagemem keeps for it would change"
    return None


def _health(text: str) -> str:
    """``ok``, ``none`` (no frontmatter) or why the block would not read as one."""
    parts = split(text)
    if parts.problem is not None:
        return "the block would never be closed with a `---` line"
    if parts.frontmatter is None:
        return "none"
    try:
        loaded = load_yaml(parts.frontmatter)
    except Exception as exc:  # any YAML or recursion error: the block is no memory's
        problem = str(getattr(exc, "problem", None) or type(exc).__name__)
        return f"the block would not parse as YAML ({' '.join(problem.split())})"
    if loaded is not None and not isinstance(loaded, dict):
        return "the block would not be a mapping of `key: value` fields"
    return "ok"
