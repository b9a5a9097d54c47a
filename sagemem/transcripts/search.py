"""Searching the transcripts: the turns of the newest sessions scored against a question.

The turns of at most ``locate.MAX_FILES`` transcripts (``read.py``'s bounds) make a small
corpus held in memory, scored with BM25 over the tokens memories are searched with
(``search/text``: CJK bigrams, folded English words) and the same constants
(``search/retrieve``: ``K1``, ``B``, the IDF, the function words). A turn answers only
when it holds ``MIN_COVERAGE`` — the memory search's share — of the question's *content*:
its information once function words and the words that only say "in the past" (last
time, decide, remember, 上次, 讨论…) are set aside, since every turn of every session
could match those. Among the turns that pass, the best few are returned, newest first on
a tie (a user's turn that asks, ``ASKED_DISCOUNT``, after one that says), a text said
twice once, each as an excerpt with its citation
``transcript <session>:<line>``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import Settings
from ..errors import TranscriptsOff
from ..search.retrieve import MIN_CORPUS_FILES, MIN_COVERAGE
from ..search.scoring import K1, B
from ..search.text import tokens
from ..search.words import FUNCTION_WEIGHT, MAX_QUERY_TERMS, idf, is_function_word
from .excerpt import excerpt_of
from .locate import MAX_FILES, newest_transcripts, transcript_folders
from .read import MAX_FILE_BYTES, MAX_TOTAL_BYTES, Turn, line_number, read_turns

HISTORY_WORDS = frozenset(tokens(
    # Words that say a question is about the past, not what it is about: weighed as
    # function words, so "what did we decide last time about X" needs X in the turn.
    "last time previous previously ago earlier before remember recall decide decided "
    "decision agree agreed settle settled choose chose chosen pick picked discuss "
    "discussed talk talked say said tell told mention mentioned ask asked session "
    "上次 上回 之前 以前 当时 记得 讨论 决定 商量 说过 聊过 提过 选择 定了"))


ASKED_DISCOUNT = 0.5
"""A user's turn that asks (it holds a ``?``) repeats the words of the question asked
now, so it outscores the turn that answered it; halved, the answer comes first in the
fixtures' sessions, and the question still comes back when nothing answered it."""
_ASKS = ("?", "？")


@dataclass(frozen=True)
class TranscriptHit:
    """One turn that answers: its citation, date, who said it, the excerpt, the score."""

    session: str
    line: int
    date: str  # YYYY-MM-DD, "" when the line had no timestamp
    role: str  # "user" or "assistant"
    excerpt: str
    score: float
    path: str

    @property
    def citation(self) -> str:
        return f"transcript {self.session}:{self.line}"


@dataclass(frozen=True)
class TranscriptSearch:
    """What a search of the transcripts found, and what it looked at."""

    hits: tuple[TranscriptHit, ...]
    files_searched: int
    turns_searched: int
    notices: tuple[str, ...] = ()


@dataclass
class _Query:
    weights: dict[str, float]
    content: set[str]


def search_transcripts(question: str, folders: Iterable[Path], *, limit: int = 3,
                       deadline: float | None = None, skip_session: str | None = None,
                       max_files: int = MAX_FILES) -> TranscriptSearch:
    """The best ``limit`` turns of the newest transcripts in ``folders`` for
    ``question``; reading stops at ``deadline`` (``time.monotonic()``) with a notice."""
    query = _query(question)
    if not query.content:  # only function and history words: nothing a turn could answer
        return TranscriptSearch((), 0, 0)
    paths = newest_transcripts(folders, limit=max_files, skip_session=skip_session)
    turns, read, notices = _read_all(paths, deadline)
    if not turns:
        return TranscriptSearch((), read, len(turns), tuple(notices))
    ranked, cut = _ranked(query, turns, question, deadline)
    hits = _hits(ranked, query, limit, deadline)
    return TranscriptSearch(tuple(hits), read, len(turns), tuple(notices + cut))


def search_project(settings: Settings, question: str, *, limit: int = 3,
                   deadline: float | None = None, skip_session: str | None = None,
                   cwd: Path | None = None) -> TranscriptSearch:
    """``search_transcripts`` over this project's transcripts (``transcript_folders``),
    with a notice when it has none; TranscriptsOff when the settings turn them off."""
    if not settings.transcripts or settings.claude_home is None:
        raise TranscriptsOff()
    folders = transcript_folders(settings, cwd)
    found = search_transcripts(question, folders, limit=limit, deadline=deadline,
                               skip_session=skip_session)
    if folders:
        return found
    where = settings.claude_home / "projects"
    return replace(found, notices=(*found.notices,
                                   f"no Claude Code transcripts of this project in {where}"))


def _query(question: str) -> _Query:
    terms = list(dict.fromkeys(tokens(question)))[:MAX_QUERY_TERMS]
    weights = {t: FUNCTION_WEIGHT if _is_function(t) else 1.0 for t in terms}
    return _Query(weights, {t for t, w in weights.items() if w == 1.0})


def _is_function(term: str) -> bool:
    return term in HISTORY_WORDS or is_function_word(term)


def _read_all(paths: list[Path], deadline: float | None
              ) -> tuple[list[Turn], int, list[str]]:
    """The turns of ``paths``, newest file first, within the total byte budget and the
    deadline; how many files were read, and a notice when the deadline cut it short."""
    turns: list[Turn] = []
    left, read = MAX_TOTAL_BYTES, 0
    for path in paths:
        if deadline is not None and time.monotonic() > deadline:
            return turns, read, [f"transcripts: {len(paths) - read} of {len(paths)} files "
                                 "not searched (time budget)"]
        if left <= 0:
            break
        found, size = read_turns(path, min(MAX_FILE_BYTES, left), deadline=deadline)
        turns += reversed(found)  # the newest turn of each file first
        left -= size
        read += 1
    return turns, read, []


def _ranked(query: _Query, turns: list[Turn], question: str, deadline: float | None
            ) -> tuple[list[tuple[float, Turn]], list[str]]:
    """Every turn that passes the content share, best first (the newer on a tie); the
    turns past the deadline (the oldest: ``turns`` is newest first) are not scored."""
    counted, lengths = _counted(query, turns, deadline)
    notices = [] if len(counted) == len(turns) else [
        f"transcripts: {len(turns) - len(counted)} of {len(turns)} turns not scored "
        "(time budget)"]
    if not counted:
        return [], notices
    average = sum(lengths) / len(lengths)
    n = max(len(counted), MIN_CORPUS_FILES)
    df = Counter(t for terms in counted for t in terms)
    info = {t: idf(df.get(t, 0), n) for t in query.weights}
    content_total = sum(info[t] for t in query.content)
    asked = " ".join(question.split())
    scored = []
    for order, (turn, terms) in enumerate(zip(turns, counted, strict=False)):
        matched = sum(info[t] for t in terms if t in query.content)
        if matched < MIN_COVERAGE * content_total or " ".join(turn.text.split()) == asked:
            continue
        norm = K1 * (1 - B + B * lengths[order] / average)
        score = sum(query.weights[t] * info[t] * tf * (K1 + 1) / (tf + norm)
                    for t, tf in terms.items())
        score *= ASKED_DISCOUNT if _asks(turn) else 1.0
        scored.append((score, -order, turn))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [(score, turn) for score, _, turn in scored], notices


def _counted(query: _Query, turns: list[Turn], deadline: float | None
             ) -> tuple[list[Counter[str]], list[int]]:
    """Each turn's query terms with their counts, and its length in tokens, newest turn
    first, until the deadline."""
    counted: list[Counter[str]] = []
    lengths: list[int] = []
    for number, turn in enumerate(turns):
        if deadline is not None and number % 256 == 0 and time.monotonic() > deadline:
            break
        found = tokens(turn.text)
        counted.append(Counter(t for t in found if t in query.weights))
        lengths.append(max(len(found), 1))
    return counted, lengths


def _asks(turn: Turn) -> bool:
    return turn.role == "user" and any(mark in turn.text for mark in _ASKS)


def _hits(ranked: list[tuple[float, Turn]], query: _Query, limit: int,
          deadline: float | None) -> list[TranscriptHit]:
    hits: list[TranscriptHit] = []
    said: set[str] = set()
    for score, turn in ranked:
        key = " ".join(turn.text.split())
        if key in said:
            continue
        line = line_number(turn, deadline=deadline)
        if line is None:
            continue
        said.add(key)
        hits.append(TranscriptHit(turn.session, line, _date(turn.timestamp), turn.role,
                                  excerpt_of(turn.text, query.weights), round(score, 4),
                                  str(turn.path)))
        if len(hits) >= limit:
            break
    return hits


def _date(timestamp: str) -> str:
    day = timestamp[:10]
    return day if len(day) == 10 and day[4] == "-" and day[7] == "-" else ""
