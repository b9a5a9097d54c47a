"""merge_index: MEMORY.md merged as the list it is, one line per memory file.

Each list line is known by the file it links (compared as file names are, ``name_key``):

- a line either side added is kept: ours' lines in ours' order, each line only theirs
  added placed after the nearest line before it in theirs that the result keeps, or after
  the result's last list line when none is;
- a line present in the base that one side removed is dropped, even when the other side
  changed its hook: that is how an archive or delete on one side shows, and the hook is
  only a pointer — the memory file's own merge keeps the edit;
- a line both sides changed to different text (two new hooks for one memory, or two
  sides adding the same file with different lines) is a conflict, marked around that line
  — never one hook kept silently: the hook is a memory's summary, and which one is right
  is the user's call;
- two lines linking one file are one: the first stays.

The other lines (headings, prose) stay ours when theirs did not change them (or changed
them as ours did); when theirs changed them the list cannot be laid over both texts, and
the whole file is merged by ``git merge-file`` instead.
"""

from __future__ import annotations

from ..files.indexfile import entries
from ..files.paths import name_key
from .merge_text import MergeConflict, MergeResult, markers, merge_file, newline_of, pick

_Line = tuple[str | None, str]  # the file a list line links (None for prose), its text


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
    newline = newline_of(ours)
    merged, conflicts = _merge_lines(_links(b), o, _links(t), newline)
    _insert_theirs(merged, _links(b), _links(o), t)
    return MergeResult(_joined(merged, newline, ours), tuple(conflicts))


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    for line in text.splitlines(keepends=True):
        found = entries(line)
        lines.append((name_key(found[0].target.removeprefix("./")) if found else None, line))
    return lines


def _prose(lines: list[_Line]) -> list[str]:
    return [text for key, text in lines if key is None]


def _links(lines: list[_Line]) -> dict[str, str]:
    """Each linked file's first line."""
    found: dict[str, str] = {}
    for key, text in lines:
        if key is not None:
            found.setdefault(key, text)
    return found


def _merge_lines(base: dict[str, str], ours: list[_Line], theirs: dict[str, str],
                 newline: str) -> tuple[list[_Line], list[MergeConflict]]:
    """Ours' lines, each list line merged with theirs' line for the same file."""
    merged: list[_Line] = []
    conflicts: list[MergeConflict] = []
    seen: set[str] = set()
    for key, text in ours:
        if key is None:
            merged.append((None, text))
            continue
        if key in seen or (key in base and key not in theirs):
            continue
        seen.add(key)
        other = text if _same_entry(text, theirs.get(key)) else theirs.get(key)
        resolved, line = pick(base.get(key), text, other)
        if resolved:
            merged.append((key, line or ""))
        else:
            conflicts.append(MergeConflict(f"index line for {key}", text, theirs.get(key)))
            merged.append((key, markers(text, theirs.get(key), newline)))
    return merged, conflicts


def _same_entry(line: str, other: str | None) -> bool:
    """Two lines that say the same (title, file, hook), spelt differently (``./x.md``,
    another dash, a line break): one line, not a conflict."""
    if other is None:
        return False
    mine, yours = entries(line), entries(other)
    return bool(mine and yours) and (mine[0].title, mine[0].hook) == (yours[0].title,
                                                                      yours[0].hook)


def _insert_theirs(merged: list[_Line], base: dict[str, str], ours: dict[str, str],
                   theirs: list[_Line]) -> None:
    """Put each line only theirs added after its nearest kept predecessor in theirs."""
    anchor: str | None = None
    for key, text in theirs:
        if key is None:
            continue
        if key not in base and key not in ours and not _holds(merged, key):
            merged.insert(_after(merged, anchor), (key, text))
        if _holds(merged, key):
            anchor = key


def _holds(merged: list[_Line], key: str) -> bool:
    return any(k == key for k, _ in merged)


def _after(merged: list[_Line], anchor: str | None) -> int:
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
