"""What a search returns: results with their paragraphs read from the files as they are
now, the coverage of what was looked at, and the cursor that pages through them.

A result's paragraph is read afresh from its file and its revision compared with the
indexed one, so a memory edited since the index last saw it is never quoted from stale
lines (``Moved``: the caller syncs and ranks again).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import date

from ..errors import InvalidCursor, SagememError
from ..files.memory import file_lines
from ..files.paths import safe_read
from ..files.revision import revision_of
from .index import IndexedFile, SearchIndex


@dataclass(frozen=True)
class SearchResult:
    """One memory that answers the question, and the paragraph of it that does."""

    file: str
    name: str | None
    description: str
    type: str
    score: float
    start_line: int
    end_line: int
    paragraph: str
    invalid: bool
    invalid_at: str | None
    superseded_by: str | None
    revision: str = ""  # the file's revision: pass it to read(..., revision=) to stay safe
    archived: bool = False  # found in archive/ (only with include_archived)
    valid_at: str | None = None
    not_yet_valid: bool = False  # valid_at is still ahead: found, but it does not hold yet
    layer: str = "project"  # "global": found in the global layer (``layers/``)


@dataclass(frozen=True)
class Coverage:
    """How much was looked at: files, candidates, paragraphs dropped, the next page."""

    files_scanned: int
    candidates: int
    paragraphs_filtered: int
    next_cursor: str | None
    files_without_vectors: int = 0  # changed memories not embedded yet: ranked lexically


@dataclass(frozen=True)
class Relevance:
    """The relevance gate's verdict on a question (``gate.py``): does it concern the
    memories at all? ``score`` is the evidence, ``passes`` its comparison with the gate;
    ``margin`` the best memory's cosine over the question's background level."""

    passes: bool
    score: float
    margin: float
    lexical: float
    files: tuple[str, ...] = ()  # the results that pass on their own evidence
    words_only: bool = False  # meaning could not be judged: the lexical thresholds decided
    evidence: tuple[tuple[str, float], ...] = ()  # (file, its gate score), for the curve


@dataclass(frozen=True)
class SearchResponse:
    query: str
    results: tuple[SearchResult, ...]
    coverage: Coverage
    notices: tuple[str, ...] = ()
    relevance: Relevance | None = None
    """Semantic and hybrid modes only; lexically, a result is returned only when its
    words pass the lexical thresholds, which are then the gate."""


class Moved(Exception):
    """A result's file no longer holds the text that was indexed (edited since the sync)."""

    def __init__(self, name: str) -> None:
        self.name = name


def results_of(index: SearchIndex, page: list[tuple[int, float, int | None]], today: date,
               *, skip_moved: bool = False) -> list[SearchResult]:
    """Turn ranked ids into results, reading each file once for its paragraph's text; a
    file that changed since it was indexed raises Moved, or is left out (``skip_moved``)."""
    files = index.files([f for f, _, _ in page])
    firsts = index.first_paragraphs([f for f, _, p in page if p is None])
    lines_of = index.paragraph_lines([p for _, _, p in page if p is not None])
    results = []
    for file_id, score, para_id in page:
        indexed = files.get(file_id)
        if indexed is None:
            continue
        lines = lines_of.get(para_id) if para_id is not None else firsts.get(file_id, (0,))[1:]
        try:
            start, end, text = _passage_of(index, indexed, lines)  # type: ignore[arg-type]
        except Moved:
            if not skip_moved:
                raise
            index.notices.append(f"{indexed.name} kept changing while it was searched; "
                                 "left out of these results")
            continue
        results.append(_result(index, indexed, score, (start, end, text), today))
    return results


def result_at(index: SearchIndex, indexed: IndexedFile, score: float,
              lines: tuple[int, int] | None, today: date) -> SearchResult:
    """One result quoting ``lines`` of its file as it is now (None: its summary); raises
    Moved when the file changed since it was indexed."""
    return _result(index, indexed, score, _passage_of(index, indexed, lines), today)


def _result(index: SearchIndex, indexed: IndexedFile, score: float,
            passage: tuple[int, int, str], today: date) -> SearchResult:
    """A result from the indexed summary fields; a memory past ``invalid_at`` or before
    ``valid_at`` is still found (search is asked on purpose), and marked as such."""
    info = indexed.info
    invalid_at, valid_at = info.get("invalid_at"), info.get("valid_at")
    start, end, text = passage
    return SearchResult(
        file=indexed.name, name=info.get("name"), description=info.get("description", ""),
        type=info.get("type", "reference"), score=round(score, 4), start_line=start,
        end_line=end, paragraph=text,
        invalid=bool(invalid_at and date.fromisoformat(invalid_at) <= today),
        invalid_at=invalid_at, superseded_by=info.get("superseded_by"),
        revision=indexed.revision or "", archived=index.archived, valid_at=valid_at,
        not_yet_valid=bool(valid_at and date.fromisoformat(valid_at) > today))


def _passage_of(index: SearchIndex, indexed: IndexedFile, lines: tuple[int, int] | None
                ) -> tuple[int, int, str]:
    """(start, end, text) of the chosen paragraph, read from the file as it is now. A
    memory with no body answers with its frontmatter lines and its description."""
    try:
        read = safe_read(index.directory, indexed.name, max_bytes=index.store.max_bytes)
    except SagememError:
        raise Moved(indexed.name) from None
    if revision_of(read.data) != indexed.revision:
        raise Moved(indexed.name)
    all_lines = file_lines(read.data.decode("utf-8", errors="replace"))
    if not lines:
        end = next((i for i, line in enumerate(all_lines) if i and line.strip() == "---"), 0)
        return 1, end + 1, str(indexed.info.get("description") or "")
    start, end = lines
    return start, end, "\n".join(all_lines[start - 1:end])


def _fingerprint(query: str, scope: str | None) -> str:
    return hashlib.sha256(f"{query}\0{scope or ''}".encode()).hexdigest()[:12]


def page_cursor(offset: int, query: str, scope: str | None) -> str:
    """An opaque cursor for the page at ``offset``, valid only for this query and scope."""
    raw = json.dumps({"o": offset, "q": _fingerprint(query, scope)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_offset(cursor: str | None, query: str, scope: str | None) -> int:
    """The offset a cursor of ``page_cursor`` stands for; InvalidCursor for another query."""
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        offset = int(data["o"])
        valid = data["q"] == _fingerprint(query, scope) and offset >= 0
    except (ValueError, KeyError, TypeError):
        valid, offset = False, 0
    if not valid:
        raise InvalidCursor(cursor)
    return offset
