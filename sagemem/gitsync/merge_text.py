"""What a merge gives back, and the two ways text is merged: git's own three-way merge of
lines (``git merge-file``, never a diff3 of ours) and the rule for one unit of text.

A *unit* is whatever the merges compare whole: a frontmatter entry's lines, an index
line. Its rule is the one git applies to a hunk — unchanged on one side takes the other,
the same change on both is one change, different changes are a conflict — applied to text
that may be absent (a key or line one side deleted).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import MergeFailed
from ..files.body import in_line_endings

OURS, THEIRS, BASE = "ours", "theirs", "base"
MARKER_SIZE = 7


@dataclass(frozen=True)
class MergeConflict:
    """One place the merge could not decide: what it is (``field 'x'``, ``body``, ``index
    line for x.md``) and each side's text of it (None where that side has none)."""

    where: str
    ours: str | None
    theirs: str | None


@dataclass(frozen=True)
class MergeResult:
    """The merged text (with git's conflict markers where ``conflicts`` say) and the
    conflicts; clean when there are none."""

    text: str
    conflicts: tuple[MergeConflict, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.conflicts


def pick(base: str | None, ours: str | None, theirs: str | None) -> tuple[bool, str | None]:
    """The three-way rule for one unit: ``(True, text)`` when it resolves (None = gone),
    ``(False, None)`` when both sides changed it differently."""
    if ours == theirs or base == theirs:
        return True, ours
    if base == ours:
        return True, theirs
    return False, None


def markers(ours: str | None, theirs: str | None, newline: str) -> str:
    """Git's conflict block around two sides' lines (either may be empty or absent)."""
    def lines(text: str | None) -> str:
        if not text:
            return ""
        return text if text.endswith(("\n", "\r")) else text + newline
    return (f"{'<' * MARKER_SIZE} {OURS}{newline}{lines(ours)}{'=' * MARKER_SIZE}{newline}"
            f"{lines(theirs)}{'>' * MARKER_SIZE} {THEIRS}{newline}")


def newline_of(*texts: str) -> str:
    """The line ending the first of ``texts`` that has one mostly uses (``\\r\\n`` or
    ``\\n``): the one lines brought in from theirs take, so a CRLF file stays CRLF."""
    for text in texts:
        crlf, lf = text.count("\r\n"), text.count("\n")
        if lf:
            return "\r\n" if crlf > lf - crlf else "\n"
    return "\n"


def merge_file(base: str, ours: str, theirs: str, where: str = "text",
               newline: str | None = None) -> MergeResult:
    """Git's three-way line merge of whole texts (``git merge-file -p``): its result, with
    its markers, and one conflict standing for all of them when it found any. When ours
    breaks every line with one ending (``newline``, else its own), base and theirs are
    spelt with it first: theirs' lines must not bring LF into a CRLF file (nor a line
    differ only by its ending)."""
    newline = newline or newline_of(ours)
    uniform = in_line_endings(ours, newline) == ours
    if uniform:
        base, theirs = in_line_endings(base, newline), in_line_endings(theirs, newline)
    data = merge_file_bytes(base.encode("utf-8"), ours.encode("utf-8"),
                            theirs.encode("utf-8"))
    text, conflicted = data[0].decode("utf-8", errors="surrogateescape"), data[1]
    if uniform:  # git spells its markers LF when the lines around them give no CRLF
        text = in_line_endings(text, newline)
    return MergeResult(text, (MergeConflict(where, ours, theirs),) if conflicted else ())


def merge_file_bytes(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
    """``git merge-file -p`` over three temporary files: the merged bytes and whether it
    left conflict markers. Raises ``MergeFailed`` when git cannot be run or fails."""
    with tempfile.TemporaryDirectory(prefix="sagemem-merge-") as tmp:
        paths = [Path(tmp, name) for name in (OURS, BASE, THEIRS)]
        for path, data in zip(paths, (ours, base, theirs), strict=True):
            path.write_bytes(data)
        argv = ["git", "merge-file", "-p", "-L", OURS, "-L", BASE, "-L", THEIRS,
                *(os.fspath(p) for p in paths)]
        try:
            done = subprocess.run(argv, capture_output=True, check=False, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MergeFailed(f"git merge-file could not run ({type(exc).__name__})") from None
    if done.returncode < 0 or done.returncode > 127:
        raise MergeFailed(f"git merge-file failed: {_first_line(done.stderr)}")
    return done.stdout, done.returncode > 0


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text.splitlines()[0] if text else "no message"
