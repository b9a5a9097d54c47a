"""A transcript read within bounds: bytes, lines and time, newest content first.

A transcript grows with every tool result a session saw and can reach hundreds of
megabytes; the prompt hook reads it before the user's prompt goes through. So a file is
opened without following a link (``O_NOFOLLOW``, and ``O_NONBLOCK``: a FIFO swapped in
must not hang the hook), only its last ``MAX_FILE_BYTES`` are read (the newest turns; the
cut line at the window's start is dropped), a line over ``MAX_LINE_BYTES`` is skipped
unparsed (a pasted file or a tool's output, never a turn worth quoting), a line that is
not JSON is skipped, and reading stops at the deadline. The file is appended to while we
read (the live session): only the bytes up to its size at ``fstat`` are read, so a
growing file is no error. Line numbers in the window are counted from the window's
start; ``line_number`` makes one absolute, counting the newlines before the window in
chunks, at most ``MAX_COUNTED_BYTES``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .turns import spoken_text

MAX_FILE_BYTES = 2 * 1024 * 1024
"""The tail of one transcript read: a few hundred turns of conversation between the tool
results, and 20 files of it parse well inside the hook's default 5 s budget."""
MAX_TOTAL_BYTES = 8 * 1024 * 1024
"""All files together: 8 MiB of nothing but conversation (no tool output at all) took
1.3 s to read and score on the shared 2-core machine; real transcripts are mostly tool
results, skipped unparsed or unscored."""
MAX_LINE_BYTES = 256 * 1024
MAX_TURN_CHARS = 20_000  # of one turn's text scored and quoted: a pasted log is no answer
MAX_COUNTED_BYTES = 512 * 1024 * 1024
"""Newlines counted before the window, for a citation's line number: past this the file
is left out rather than cited with a line number that is a guess."""
CHUNK = 1 << 20
COUNT_GRACE_BYTES = 8 * CHUNK
"""Counted even past the deadline (a few milliseconds): a hit found just before it keeps
its citation rather than being dropped for want of a line number."""
MAX_ID_CHARS = 80
_NOT_ID = re.compile(r"[^A-Za-z0-9._-]")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True)
class Turn:
    """One spoken line of a transcript: where it is, who said it, when, and the text."""

    path: Path
    window_line: int  # 1-based, counted from the window's first whole line
    window_start: int  # the byte the window starts at in the file (0: the whole file)
    session: str
    role: str
    timestamp: str
    text: str


def read_turns(path: Path, budget: int = MAX_FILE_BYTES, *, deadline: float | None = None
               ) -> tuple[list[Turn], int]:
    """The spoken turns in the last ``budget`` bytes of ``path``, and the bytes read;
    nothing (and 0) for a link, a non-regular file, one that cannot be read, or one too
    large to number its lines."""
    window = _tail(path, budget)
    if window is None:
        return [], 0
    start, data = window
    turns: list[Turn] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if deadline is not None and number % 64 == 0 and time.monotonic() > deadline:
            break
        turn = _turn(path, number, start, raw)
        if turn is not None:
            turns.append(turn)
    return turns, len(data)


def _tail(path: Path, budget: int) -> tuple[int, bytes] | None:
    """(offset, bytes) of the file's last whole lines within ``budget`` bytes."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:  # ELOOP: a link; or gone, or not ours to read
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_COUNTED_BYTES:
            return None
        start = max(st.st_size - budget, 0)
        os.lseek(fd, start, os.SEEK_SET)
        data = _read_at_most(fd, st.st_size - start)
    except OSError:
        return None
    finally:
        os.close(fd)
    if start > 0:  # the first line is cut (or whole by chance: then it is given up)
        cut = data.find(b"\n")
        start, data = (start + cut + 1, data[cut + 1:]) if cut >= 0 else (start, b"")
    return start, data


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    while limit > 0 and (chunk := os.read(fd, min(limit, CHUNK))):
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def _turn(path: Path, number: int, start: int, raw: bytes) -> Turn | None:
    if len(raw) > MAX_LINE_BYTES or not raw.strip():
        return None
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):  # a broken line, or a nesting bomb
        return None
    spoken = spoken_text(line)
    if spoken is None:
        return None
    role, text = spoken
    session = line.get("sessionId")
    stamp = line.get("timestamp")
    return Turn(path, number, start, _session_id(session, path), role,
                stamp if isinstance(stamp, str) else "", text[:MAX_TURN_CHARS])


def _session_id(value: object, path: Path) -> str:
    """The session id a citation names, only of the characters a UUID or a file name is
    made of: a hostile line's id must not carry a newline or an escape into the block."""
    for raw in (value, path.stem):
        if isinstance(raw, str) and (kept := _NOT_ID.sub("", raw)[:MAX_ID_CHARS]):
            return kept
    return "unknown"


def line_number(turn: Turn, *, deadline: float | None = None) -> int | None:
    """The 1-based line of ``turn`` in its file: the newlines before its window counted
    (None when the file is gone, became a link, or the deadline passed)."""
    if turn.window_start == 0:
        return turn.window_line
    try:
        fd = os.open(turn.path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        before = _count_newlines(fd, turn.window_start, deadline)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if before is None else before + turn.window_line


def _count_newlines(fd: int, end: int, deadline: float | None) -> int | None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    count, left = 0, end
    while left > 0:
        if deadline is not None and end - left >= COUNT_GRACE_BYTES \
                and time.monotonic() > deadline:
            return None
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            return None  # truncated under us: the window's numbering no longer holds
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count
