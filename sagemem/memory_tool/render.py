"""What ``view`` and ``str_replace`` show: the folder listing, numbered lines, snippets.

The shapes are the documented ones (``messages.py`` cites them): a listing line is
``<size>\\t<path>``, a numbered line is the number right-aligned in six columns, a tab,
the line. Every line of memory text is shown through ``controls.visible`` and every name
through ``visible_name``: the model's client may print the result, and an ``ESC[2J`` in
a memory must not clear anyone's screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..files.controls import visible, visible_name
from . import messages
from .paths import ROOT

LINE_NUMBER_WIDTH = 6  # [docs] view: "6 characters, right-aligned with space padding"
SNIPPET_CONTEXT = 2
"""Lines shown around a change, before and after ([sdk] str_replace shows two)."""
_UNITS = ("K", "M", "G")


def human_size(size: int) -> str:
    """``512B``, ``1.5K``, ``2.0M``: the documented "human-readable sizes"."""
    if size < 1024:
        return f"{size}B"
    value = float(size)
    for unit in _UNITS:
        value /= 1024
        if value < 1024 or unit == _UNITS[-1]:
            break
    return f"{value:.1f}{unit}"


def listing(files: Sequence[tuple[str, int]]) -> str:
    """The folder as the documented directory view: the root with the total size of
    what is listed, then each file (sagemem's folder is flat: one level is all)."""
    total = sum(size for _, size in files)
    lines = [messages.LISTING_HEADER.format(path=ROOT), f"{human_size(total)}\t{ROOT}"]
    lines += [f"{human_size(size)}\t{ROOT}/{visible_name(name)}" for name, size in files]
    return "\n".join(lines)


def numbered(lines: Sequence[str], first: int) -> list[str]:
    """``lines`` numbered from ``first``, each shown safely."""
    return [f"{number:>{LINE_NUMBER_WIDTH}}\t{visible(line)}"
            for number, line in enumerate(lines, start=first)]


def file_view(path: str, lines: Sequence[str], start: int, end: int) -> str:
    """The documented file view of lines ``start``..``end`` (1-based, inclusive)."""
    header = messages.FILE_HEADER.format(path=path)
    return "\n".join([header, *numbered(lines[start - 1:end], start)])


def snippet(lines: Sequence[str], first: int, last: int) -> str:
    """The changed lines ``first``..``last`` with SNIPPET_CONTEXT lines either side."""
    start = max(1, first - SNIPPET_CONTEXT)
    end = min(len(lines), last + SNIPPET_CONTEXT)
    return "\n".join([messages.EDITED, *numbered(lines[start - 1:end], start)])
