"""merge_memory: one memory file merged as a memory — its frontmatter field by field,
its body line by line with git's own merge.

The frontmatter is cut into one *unit* per top-level key: the key's lines as
``files/edit_spans.py`` finds them, with the blank lines and comments that introduce it
(lines before the first key go with the first key, lines after the last key are the
tail). Each unit takes the three-way rule of ``merge_text.pick``: a key each side changed
differently — or one side changed and the other deleted — is a conflict, marked around
that key's lines — but for ``updated`` (``LATEST_WINS``) the later date wins. A nested
mapping is one unit: two sides editing ``metadata`` differently conflict even on
different sub-keys (seeing them as one value is the safe reading).

Bytes no side touched stay exactly ours: the result is ours' units in ours' order, with
theirs' changed or added units spliced in. A side whose frontmatter is missing or cannot
be located with certainty (``UneditableFrontmatter``: a key written twice, a ``<<``
merge) makes the whole file one text for ``git merge-file``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from ..errors import UneditableFrontmatter
from ..files.body import in_line_endings
from ..files.edit_spans import compose, find_entry, line_start
from ..files.memory import load_yaml, split
from .merge_text import MergeConflict, MergeResult, markers, merge_file, newline_of, pick

_TAIL = "\x00tail"  # the unit of lines after the last key: no YAML key can be spelt so
LATEST_WINS = ("updated",)
"""Fields both sides set on every write (``remember`` stamps ``updated``): two edits of
one memory on two machines would always conflict on it, and no fact is lost by keeping
the later day — the merged memory was touched on both."""


@dataclass(frozen=True)
class _Parts:
    """A memory file cut for merging: the opening ``---`` line, the frontmatter's units
    in order (key → text), the closing line and the body."""

    opening: str
    units: dict[str, str]
    closing: str
    body: str


def merge_memory(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge three versions of one memory file; the result keeps ours' bytes wherever
    theirs did not change them. Conflicts come back marked in the text, git's way."""
    if ours == theirs or base == theirs:
        return MergeResult(ours)
    if base == ours:
        return MergeResult(theirs)
    cut = [_parts(text) for text in (base, ours, theirs)]
    b, o, t = cut
    if b is None or o is None or t is None:
        return merge_file(base, ours, theirs, "file")
    newline = newline_of(ours, theirs)
    heads = [_same_or_changed(b.opening, o.opening, t.opening, newline),
             _same_or_changed(b.closing, o.closing, t.closing, newline)]
    if heads[0] is None or heads[1] is None:
        return merge_file(base, ours, theirs, "file")
    front, conflicts = _merge_units(b.units, o.units, t.units, newline)
    body = merge_file(b.body, o.body, t.body, "body", newline)
    return MergeResult(heads[0] + front + heads[1] + body.text,
                       (*conflicts, *body.conflicts))


def _same_or_changed(base: str, ours: str, theirs: str, newline: str) -> str | None:
    resolved, text = pick(base, ours, theirs)
    if not resolved or text is None:
        return None
    return text if text == ours else in_line_endings(text, newline)


def _parts(text: str) -> _Parts | None:
    """The file cut into units, or None when its frontmatter cannot be cut with certainty."""
    where = split(text)
    if where.frontmatter is None:
        return None
    try:
        units = _units(where.frontmatter, newline_of(text))
    except UneditableFrontmatter:
        return None
    return _Parts(text[:where.fm_start], units, text[where.fm_end:where.body_start],
                  text[where.body_start:])


def _units(block_text: str, newline: str) -> dict[str, str]:
    """Each top-level key's text (from where the previous key's lines end to where its own
    end), then the tail; raises ``UneditableFrontmatter`` for a block not cut cleanly."""
    block = compose(block_text, newline, "memory")
    root, limit = block.root, len(block.starts)
    keys = [k.value for k, _ in root.value] if root is not None else []
    if any(not isinstance(k, str) for k in keys):
        raise UneditableFrontmatter("memory", "a key is not plain text")
    units: dict[str, str] = {}
    begin = 0
    for key in keys:
        entry = find_entry(block, root, limit, key)
        assert entry is not None  # the key came from this very mapping
        end = line_start(block, entry.end)
        units[key] = block_text[begin:end]
        begin = end
    units[_TAIL] = block_text[begin:]
    return units


def _merge_units(base: dict[str, str], ours: dict[str, str], theirs: dict[str, str],
                 newline: str) -> tuple[str, list[MergeConflict]]:
    """The frontmatter merged unit by unit, in ours' order with theirs' new keys after
    the key they follow in theirs (or first, when they lead it); a unit taken from theirs
    takes ours' line ending."""
    order = _order(base, ours, theirs)
    parts: list[str] = []
    conflicts: list[MergeConflict] = []
    for key in order:
        resolved, text = pick(base.get(key), ours.get(key), theirs.get(key))
        if not resolved and key in LATEST_WINS:
            resolved, text = _later(key, ours.get(key), theirs.get(key))
        if resolved:
            parts.append("" if text is None else
                         text if text == ours.get(key) else in_line_endings(text, newline))
            continue
        where = "frontmatter after the last field" if key == _TAIL else f"field '{key}'"
        conflicts.append(MergeConflict(where, ours.get(key), theirs.get(key)))
        parts.append(_marked(ours.get(key), theirs.get(key), newline))
    return "".join(parts), conflicts


def _later(key: str, ours: str | None, theirs: str | None) -> tuple[bool, str | None]:
    """For a ``LATEST_WINS`` field both sides set: the side with the later date, its
    lines as written; unresolved when either is gone or is not a date."""
    dates = [_date_in(key, text) for text in (ours, theirs)]
    if dates[0] is None or dates[1] is None:
        return False, None
    return True, ours if dates[0] >= dates[1] else theirs


def _date_in(key: str, text: str | None) -> date | None:
    """The date a unit's ``key: value`` holds (a datetime's date), or None."""
    if text is None:
        return None
    try:
        loaded = load_yaml(text)
    except Exception:  # any YAML error: not a date to compare, so the conflict stands
        return None
    value = loaded.get(key) if isinstance(loaded, dict) else None
    if isinstance(value, datetime):
        return value.date()
    return value if isinstance(value, date) else None


def _marked(ours: str | None, theirs: str | None, newline: str) -> str:
    """The markers around the key's own lines: the comment or blank lines both sides
    still share before it stay outside, as git keeps a hunk's common lines out."""
    theirs = None if theirs is None else in_line_endings(theirs, newline)
    mine = (ours or "").splitlines(keepends=True)
    yours = (theirs or "").splitlines(keepends=True)
    common = 0
    while common < min(len(mine), len(yours)) - 1 and mine[common] == yours[common]:
        common += 1
    return "".join(mine[:common]) + markers(
        "".join(mine[common:]) if ours is not None else None,
        "".join(yours[common:]) if theirs is not None else None, newline)


def _order(base: dict[str, str], ours: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """Ours' keys, then each key only theirs has placed after its predecessor in theirs;
    the tail always last."""
    order = [k for k in ours if k != _TAIL]
    previous: str | None = None
    for key in theirs:
        if key == _TAIL:
            continue
        if key not in order:
            at = order.index(previous) + 1 if previous in order else 0
            order.insert(at, key)
        previous = key
    return [*order, _TAIL]
