"""What a model's arguments must hold before the library sees them.

JSON carries what a command line cannot: a lone surrogate (``"\\ud800"``), a mapping as
a description, a date as text. Each is refused here as one ``InvalidArgument`` line the
model can act on, rather than failing deep in a write as a crash or being written and
then ignored by the reader. ``write_memory``'s text is a ``body`` or a whole-file
``content`` as the model says, never guessed from its first line (``new_text``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from ..errors import InvalidArgument
from ..files.body import (
    in_line_endings,
    newline_of,
    opens_frontmatter,
    with_body,
    with_lines,
)
from ..files.fields import DATE_FIELDS, Problem, field_problem, read_fields
from ..files.memory import Memory, file_lines, split
from ..search.reading import fits_one_page


def field_values(fields: Mapping[str, Any]) -> dict[str, object]:
    """The fields as the library takes them: JSON has no dates, so a date field's
    ``YYYY-MM-DD`` text becomes a date; a value the reader would not accept is refused."""
    values: dict[str, object] = {}
    for key, value in fields.items():
        if key in DATE_FIELDS and isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                raise InvalidArgument(key, "must be a date, YYYY-MM-DD") from None
        problem = field_problem(key, value) or _ignored_by_reader(key, value)
        if problem:
            raise InvalidArgument(key, problem)
        values[key] = value
    if not values:
        raise InvalidArgument("fields", "give at least one field to set")
    return values


def _ignored_by_reader(key: str, value: object) -> str | None:
    """Why the reader would set ``value`` aside as ``key`` (None when it takes it). JSON
    carries what ``sagemem set key=value`` cannot, a mapping as the description or a
    string as ``baseline``: written, it would be ignored with a warning."""
    problems: list[Problem] = []
    read_fields({key: value}, problems)
    return next((p.message for p in problems if p.field == key and p.kind == "field"), None)


def line_range(start_line: int | None, end_line: int | None) -> tuple[int, int] | None:
    """write_memory's page range: both lines or neither."""
    if start_line is None and end_line is None:
        return None
    if start_line is None or end_line is None:
        raise InvalidArgument("start_line" if start_line is None else "end_line",
                              "give start_line and end_line together: the page's range")
    return start_line, end_line


def check_text(arguments: Mapping[str, Any]) -> None:
    """Refuse a string no file can hold: JSON's ``\\ud800`` decodes to a lone surrogate,
    which UTF-8 cannot encode, so it would fail deep in a write (or a search) as a crash."""
    for key, value in arguments.items():
        offset = surrogate_in([key, value])
        if offset is not None:
            raise InvalidArgument(_printable(key), f"holds a lone surrogate (at character "
                                  f"{offset}), which UTF-8 cannot store; send plain text")


def surrogate_in(value: object) -> int | None:
    """Where the first lone surrogate of ``value`` (a string, or in a list or mapping) is.
    Walked with a stack, not by recursion: JSON nested a few thousand deep is one short
    line, and must be answered, not crash the server (``RecursionError``)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return exc.start
        elif isinstance(item, Mapping):
            pending.extend(reversed([*item.keys(), *item.values()]))
        elif isinstance(item, list):
            pending.extend(reversed(item))
    return None


def _printable(key: str) -> str:
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


def new_text(current: Memory | None, body: str | None, content: str | None,
             lines: tuple[int, int] | None = None, *, stale: bool = False,
             shown_part: str | None = None, shown_whole: bool = False
             ) -> tuple[str, list[str]]:
    """``write_memory``'s new file text, from a ``body`` (``current``'s frontmatter kept
    byte for byte) or a whole-file ``content``, in the file's line endings (LF for a new
    file, ``current`` None); and a warning when ``content`` was taken as a body.

    With ``lines`` (a ``read_memory`` page's start and end line) the body replaces those
    lines alone. Without, it replaces the whole body, refused where what the model holds
    may be part of it (``_check_whole_body``): a body longer than one page, or one the
    model was shown only ``shown_part`` of (``views.py``) — written back, the first page
    read dropped every later one (issue 20's review). ``stale`` (``current`` is not the
    revision the model read, so the guard refuses whatever this returns, both sides
    kept) skips those checks: the refusal says the file changed; so does ``shown_whole``
    (this server showed the model the whole body of ``current``)."""
    if (body is None) == (content is None):
        raise InvalidArgument("body", "give body (the body alone, the frontmatter kept) "
                                      "or content (the whole file), one of them")
    if lines is not None:
        return _page_written(current, body, lines, stale=stale), []
    if body is not None:
        if not (stale or shown_whole):
            _check_whole_body(current, "body", shown_part)
        return with_body(current, body), []
    assert content is not None
    if current is None or not current.has_frontmatter:
        return in_line_endings(content, "\n" if current is None else newline_of(
            current.text)), []
    if opens_frontmatter(content) and not _opens_as_body_does(current, content):
        return in_line_endings(content, newline_of(current.text)), []
    return _content_as_body(current, content, shown_part, checked=not (stale or shown_whole))


def _page_written(current: Memory | None, body: str | None, lines: tuple[int, int], *,
                  stale: bool) -> str:
    """``current`` with a page's lines replaced by ``body``."""
    if body is None:
        raise InvalidArgument("start_line", "a line range goes with body, the page's new "
                                            "text; content is always the whole file")
    if current is None:
        raise InvalidArgument("start_line", "a line range needs the memory's "
                                            "expected_revision; a new memory has no lines")
    try:
        return with_lines(current, *lines, body)
    except InvalidArgument:
        if stale:  # refused by the guard: its record keeps the page where it fits, or nothing
            return current.text
        raise


def _check_whole_body(current: Memory | None, argument: str, shown_part: str | None
                      ) -> None:
    """Refuse a whole body where what the model has may be a part of it: it was shown
    only ``shown_part`` of this revision, or the body is longer than one read_memory
    page (what it read was one page). Written, the lines it lacks would be lost."""
    if current is None or (shown_part is None and fits_one_page(current)):
        return
    last = len(file_lines(current.text))
    why = "is longer than one read_memory page" if shown_part is None else \
        f"was shown to you only in part ({shown_part}) at this revision"
    raise InvalidArgument(argument, f"{current.file}'s body, lines {current.body_line}-"
                          f"{last}, {why}, and a {argument} without start_line and "
                          "end_line replaces all of it: to change a page, send it as body "
                          "with that page's start_line and end_line; to replace the whole "
                          f"body, give start_line={current.body_line} and end_line={last}"
                          "; nothing was written")


def _content_as_body(current: Memory, content: str, shown_part: str | None, *,
                     checked: bool) -> tuple[str, list[str]]:
    """A ``content`` without a frontmatter of its own, for a file that has one. Earlier
    clients sent the body there (read_memory's text): one that opens with no ``---``
    cannot be a whole file with frontmatter, nor can one that opens with the very block
    the body opens with, so it is the body and the file's frontmatter stays. One that
    opens with a ``---`` that is no frontmatter may be either (a Markdown rule, or a
    broken block): refused, never guessed — issue 20 lost the frontmatter so."""
    if checked:
        _check_whole_body(current, "content", shown_part)
    parts = split(content)
    opens_plainly = parts.frontmatter is None and parts.problem is None
    if opens_plainly or _opens_as_body_does(current, content):
        return with_body(current, content), [
            "content had no frontmatter of its own, so it was taken as the body and the "
            "file's frontmatter was kept; send a body as body"]
    raise InvalidArgument("content", "it opens with '---' but no frontmatter of fields "
                                     "follows, and content is the whole file, so the "
                                     "memory's frontmatter would be lost; to replace the "
                                     "body alone (a '---' rule first), send it as body; "
                                     "nothing was written")


def _opens_as_body_does(current: Memory, content: str) -> bool:
    """Whether ``content`` opens with the ``---`` block that ``current``'s body opens with
    (a body that starts with a block of fields, as a Jekyll page does): read_memory's
    text sent back, not a whole file whose frontmatter would replace the file's."""
    body_block, own_block = split(current.body).frontmatter, split(content).frontmatter
    return body_block is not None and own_block is not None and \
        in_line_endings(body_block, "\n") == in_line_endings(own_block, "\n")
