"""What this server showed the model of each memory revision: the whole body, or parts.

``write_memory``'s ``body`` without a line range replaces the whole body. A model that
was shown only part of it — a ``read_memory`` page from a search hit's ``start_line``,
a small ``max_bytes`` page, a search paragraph — and writes that part back as the body
drops every line it was not shown (issue 20's review: the first page of a long memory
written back truncated it). The server knows what it showed, so that is no guess: a
whole body at a revision of which it showed parts only, and never the whole, is refused
(``arguments.new_text``), and the model is told to read the rest or send the part with
its lines. A revision it showed (or the model wrote) whole may be written whole, however
long, unless a read_memory page of it came later; for one it never showed (the model had
it from elsewhere) the size rule holds (``reading.fits_one_page``): a body longer than
one page needs its line range.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..search.reading import ReadResult
from ..search.results import SearchResult

MAX_REVISIONS = 4096
"""Revisions remembered, oldest forgotten first: a long-lived server searched all day
keeps a bounded record (a forgotten revision falls back to the size rule)."""


class Views:
    """Per ``(file, revision)``: None once shown whole, else the lines of a part shown."""

    def __init__(self) -> None:
        self._shown: dict[tuple[str, str], str | None] = {}

    def whole(self, file: str, revision: str) -> None:
        """The model was shown (or wrote) ``file``'s whole body at ``revision``."""
        self._remember((file, revision), None)

    def part(self, file: str, revision: str, lines: str, *, page: bool = False) -> None:
        """The model was shown ``lines`` (``"lines 12-14"``) of ``file`` at ``revision``;
        a revision already shown whole stays so after a search paragraph, but not after a
        read_memory ``page``: that page is what the model now holds and may send back
        (review 4: a long memory created whole, then its first page appended to and
        written back as the body, was cut to that page)."""
        key = (file, revision)
        if page or key not in self._shown or self._shown[key] is not None:
            self._remember(key, lines)

    def searched(self, results: Iterable[SearchResult]) -> None:
        """The model was shown each result's paragraph, a part of its memory."""
        for r in results:
            if r.revision:
                self.part(r.file, r.revision, f"lines {r.start_line}-{r.end_line}, "
                                              "a search result")

    def read(self, result: ReadResult) -> None:
        """The model was shown a read_memory page: the whole body, or which of its lines
        (a page past the end showed nothing)."""
        if result.complete:
            self.whole(result.file, result.revision)
        elif not result.content:
            return
        elif result.start_byte is not None:
            self.part(result.file, result.revision,
                      f"bytes {result.start_byte}-{result.end_byte}", page=True)
        else:
            self.part(result.file, result.revision,
                      f"lines {result.start_line}-{result.end_line}", page=True)

    def carry(self, file: str, before: str | None, after: str, *, whole: bool) -> None:
        """A write took ``file`` from ``before`` to ``after``: the model now knows the
        whole body if it sent it (``whole``), else what it knew of ``before`` (a page or
        fields written leave the rest as it was shown, or not shown)."""
        if whole:
            self.whole(file, after)
        elif before is not None and (file, before) in self._shown:
            self._remember((file, after), self._shown[(file, before)])

    def shown_whole(self, file: str, revision: str) -> bool:
        """Whether the model was shown (or wrote) the whole body of ``revision``."""
        key = (file, revision)
        return key in self._shown and self._shown[key] is None

    def part_only(self, file: str, revision: str) -> str | None:
        """The part shown when the model was shown ``revision`` only in part, else None."""
        return self._shown.get((file, revision))

    def _remember(self, key: tuple[str, str], value: str | None) -> None:
        self._shown.pop(key, None)
        self._shown[key] = value
        while len(self._shown) > MAX_REVISIONS:
            del self._shown[next(iter(self._shown))]
