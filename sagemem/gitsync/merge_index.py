"""merge_index: MEMORY.md merged as the list it is, one line per memory file.

Each list line is known by the file it links (compared as file names are, ``name_key``)
and which of that file's links it is in its text, counted from the top: an index may
link one memory under two headings, and each of those lines merges on its own (keyed by
the file alone, the second line vanished and theirs' additions went under the first):

- a line either side added is kept: ours' lines in ours' order, each line only theirs
  added placed after the nearest line before it in theirs that the result keeps, or after
  the result's last list line when none is; it takes ours' line ending;
- a line present in the base that one side removed is dropped, even when the other side
  changed its hook: that is how an archive or delete on one side shows, and the hook is
  only a pointer — the memory file's own merge keeps the edit;
- a line both sides changed to different text (two new hooks for one memory, or two
  sides adding the same file with different lines) is a conflict, marked around that line
  — never one hook kept silently: the hook is a memory's summary, and which one is right
  is the user's call;
- a line a side added for a file the result already links is one with that line: the
  first stays (lines the base already had twice stay twice).

The other lines (headings, prose) stay ours when theirs did not change them (or changed
them as ours did); when theirs changed them the list cannot be laid over both texts, and
the whole file is merged by ``git merge-file`` instead.
"""

from __future__ import annotations

from ..files.body import in_line_endings
from ..files.indexfile import entries
from ..files.paths import name_key
from .merge_text import MergeConflict, MergeResult, markers, merge_file, newline_of, pick

_Key = tuple[str, int]  # the file a list line links, and which of its links it is
_Line = tuple[_Key | None, str]  # a line's key (None for prose), its text


def merge_index(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge three versions of MEMORY.md; ours' bytes stay wherever theirs changed
    nothing, conflicts come back marked in the text."""
    if ours == theirs or base == theirs:
        return MergeResult(ours)
    if base == ours:
        return MergeResult(theirs)
    b, o, t = (_lines(text) for text in (base, ours, theirs))
    if _prose(t) not in (_prose(b), _prose(o)):
        return merge_file(base, ours, theirs, "index")
    newline = newline_of(ours, theirs)
    theirs_links = {key: in_line_endings(text, newline) for key, text in _links(t).items()}
    merged, conflicts = _merge_lines(_links(b), o, theirs_links, newline)
    _insert_theirs(merged, _links(b), _links(o),
                   [(key, theirs_links[key]) for key, _ in t if key is not None])
    return MergeResult(_joined(merged, newline, ours), tuple(conflicts))


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    seen: dict[str, int] = {}
    for line in text.splitlines(keepends=True):
        found = entries(line)
        if not found:
            lines.append((None, line))
            continue
        file = name_key(found[0].target.removeprefix("./"))
        seen[file] = seen.get(file, -1) + 1
        lines.append(((file, seen[file]), line))
    return lines


def _prose(lines: list[_Line]) -> list[str]:
    return [text for key, text in lines if key is None]


def _links(lines: list[_Line]) -> dict[_Key, str]:
    return {key: text for key, text in lines if key is not None}


def _merge_lines(base: dict[_Key, str], ours: list[_Line], theirs: dict[_Key, str],
                 newline: str) -> tuple[list[_Line], list[MergeConflict]]:
    """Ours' lines, each list line merged with theirs' line of the same key."""
    merged: list[_Line] = []
    conflicts: list[MergeConflict] = []
    for key, text in ours:
        if key is None:
            merged.append((None, text))
            continue
        if (key in base and key not in theirs) or _duplicate(merged, base, key):
            continue
        other = text if _same_entry(text, theirs.get(key)) else theirs.get(key)
        resolved, line = pick(base.get(key), text, other)
        if resolved:
            merged.append((key, line or ""))
        else:
            conflicts.append(MergeConflict(f"index line for {key[0]}", text, theirs.get(key)))
            merged.append((key, markers(text, theirs.get(key), newline)))
    return merged, conflicts


def _duplicate(merged: list[_Line], base: dict[_Key, str], key: _Key) -> bool:
    """A line the base did not have, for a file the result already links: one line."""
    return key not in base and any(k is not None and k[0] == key[0] for k, _ in merged)


def _same_entry(line: str, other: str | None) -> bool:
    """Two lines that say the same (title, file, hook), spelt differently (``./x.md``,
    another dash, a line break): one line, not a conflict."""
    if other is None:
        return False
    mine, yours = entries(line), entries(other)
    return bool(mine and yours) and (mine[0].title, mine[0].hook) == (yours[0].title,
                                                                      yours[0].hook)


def _insert_theirs(merged: list[_Line], base: dict[_Key, str], ours: dict[_Key, str],
                   theirs: list[tuple[_Key, str]]) -> None:
    """Put each line only theirs added after the nearest line before it in theirs that
    the result holds."""
    anchor: _Key | None = None
    for key, text in theirs:
        if key not in base and key not in ours and not _holds(merged, key):
            if _duplicate(merged, base, key):
                continue
            merged.insert(_after(merged, anchor), (key, text))
        if _holds(merged, key):
            anchor = key


def _holds(merged: list[_Line], key: _Key) -> bool:
    return any(k == key for k, _ in merged)


def _after(merged: list[_Line], anchor: _Key | None) -> int:
    """Where a line goes: after the anchor's line, else after the last list line, else at
    the end."""
    keys = [k for k, _ in merged]
    if anchor is not None and anchor in keys:
        return keys.index(anchor) + 1
    listed = [i for i, k in enumerate(keys) if k is not None]
    return listed[-1] + 1 if listed else len(merged)


def _joined(merged: list[_Line], newline: str, ours: str) -> str:
    """The lines as one text: a line that now has another after it gets its newline
    back; the last keeps ours' ending (with or without a final newline)."""
    texts = [text for _, text in merged]
    for i in range(len(texts) - 1):
        if not texts[i].endswith(("\n", "\r")):
            texts[i] += newline
    if texts and ours.endswith("\n") and not texts[-1].endswith("\n"):
        texts[-1] += newline
    return "".join(texts)
