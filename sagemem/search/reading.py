"""Reading a memory's body by line or by byte, a page at a time (sage-mem's read_memory).

Line numbers are the file's own (frontmatter lines counted), the same numbers search
results give, so ``file.md:40-52`` can be read with ``start_line=40``. Given the revision
the caller last saw (in full or its first 8+ characters; a shorter one is refused with
``InvalidRevision``), a file that changed since answers ``revision_changed`` and no
content: line numbers from an older revision would point at the wrong text.

A page says whether it is the whole body (``complete``): a model that writes a page back
as the whole body would drop every later line, so ``write_memory`` asks for the page's
line range unless the body fits one page (``fits_one_page``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..errors import InvalidReadRange
from ..files.folder import MemoryFolder
from ..files.memory import Memory, file_lines
from ..files.revision import checked_revision, names_revision

DEFAULT_PAGE_BYTES = 16 * 1024
Status = Literal["ok", "revision_changed"]


@dataclass(frozen=True)
class ReadResult:
    """One page of a memory's body, and where the next page starts (None at the end)."""

    file: str
    revision: str
    status: Status
    content: str | None
    start_line: int | None = None
    end_line: int | None = None
    start_byte: int | None = None
    end_byte: int | None = None
    total_lines: int = 0
    total_bytes: int = 0
    next_start_line: int | None = None
    next_start_byte: int | None = None
    complete: bool = False
    """Whether ``content`` is the whole body, its first line to its last."""


def read(store: MemoryFolder, name: str, start_line: int | None = None,
         start_byte: int | None = None, max_bytes: int | None = None,
         revision: str | None = None) -> ReadResult:
    """Read a page of ``name``'s body; from its first body line unless told otherwise."""
    if start_line is not None and start_byte is not None:
        raise InvalidReadRange("give start_line or start_byte, not both")
    limit = DEFAULT_PAGE_BYTES if max_bytes is None else max_bytes
    if limit < 1 or (start_line is not None and start_line < 1) or (
            start_byte is not None and start_byte < 0):
        raise InvalidReadRange("line numbers start at 1, bytes at 0, max_bytes at 1")
    if revision is not None:
        checked_revision(revision)  # a too-short prefix is refused, never "changed"
    memory = store.get(name)
    if revision is not None and not names_revision(revision, memory.revision):
        return ReadResult(memory.file, memory.revision, "revision_changed", None,
                          total_bytes=memory.size)
    if start_byte is not None:
        return _by_bytes(memory, start_byte, limit)
    return _by_lines(memory, start_line or memory.body_line, limit)


def _by_lines(memory: Memory, start_line: int, limit: int) -> ReadResult:
    lines = file_lines(memory.text)
    start = max(start_line, memory.body_line)
    taken: list[str] = []
    used = 0
    for line in lines[start - 1:]:
        cost = len(line.encode("utf-8")) + 1
        if taken and used + cost > limit:
            break
        taken.append(line)
        used += cost
    if not taken:
        return _page(memory, "", start, None, len(lines))
    end = start + len(taken) - 1
    if used > limit:  # a single line longer than the page: cut it at a character
        cut = _cut_utf8(taken[0].encode("utf-8"), limit)
        byte = _line_offset(memory, start) + len(cut)
        return _page(memory, cut.decode("utf-8"), start, start, len(lines), next_byte=byte)
    next_line = end + 1 if end < len(lines) else None
    return _page(memory, "\n".join(taken), start, end, len(lines), next_line=next_line)


def _by_bytes(memory: Memory, start_byte: int, limit: int) -> ReadResult:
    data = memory.text.encode("utf-8")
    body_start = len(memory.text[: _body_offset(memory)].encode("utf-8"))
    start = max(start_byte, body_start)
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1  # never start inside a UTF-8 character
    chunk = _cut_utf8(data[start:start + limit + 3], limit)
    end = start + len(chunk)
    first = data.count(b"\n", 0, start) + 1
    last = first + chunk.count(b"\n") - (1 if chunk.endswith(b"\n") else 0)
    result = _page(memory, chunk.decode("utf-8"), first, max(first, last),
                   len(file_lines(memory.text)), next_byte=end if end < len(data) else None)
    return replace(result, start_byte=start, end_byte=end,
                   complete=start == body_start and end >= len(data))


def fits_one_page(memory: Memory) -> bool:
    """Whether ``memory``'s whole body comes back in one page of the default size: what a
    read without arguments returns is then all of it, and a body written back from it
    loses nothing."""
    return _by_lines(memory, memory.body_line, DEFAULT_PAGE_BYTES).complete


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """At most ``limit`` bytes, shortened so no UTF-8 character is split — but always at
    least one whole character, so a reader paging through always moves forward."""
    cut = data[:limit].decode("utf-8", errors="ignore").encode("utf-8")
    if cut or not data:
        return cut
    first = data[:4].decode("utf-8", errors="ignore")[:1]
    return first.encode("utf-8")


def _body_offset(memory: Memory) -> int:
    return len(memory.text) - len(memory.body)


def _line_offset(memory: Memory, line: int) -> int:
    data = memory.text.encode("utf-8")
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def _page(memory: Memory, content: str, start: int, end: int | None, total: int, *,
          next_line: int | None = None, next_byte: int | None = None) -> ReadResult:
    whole = start <= memory.body_line and next_line is None and next_byte is None
    return ReadResult(memory.file, memory.revision, "ok", content, start_line=start,
                      end_line=end, total_lines=total, total_bytes=memory.size,
                      next_start_line=next_line, next_start_byte=next_byte, complete=whole)
