"""How close two titles are, 0-100: the share of their words they have in common.

``remember`` (and ``new``, and the memory tool's ``create``) asks before writing a title
close to an existing memory's, so the measure must say "the same thing, worded
otherwise" and not "one word in common". Issue 20 showed rapidfuzz's
``token_set_ratio`` failing both ways: one long shared word outweighed the word that
names the memory ("Tea preference" / "Coffee preference" 83, nothing written), while
Chinese near-copies scored under the threshold (72.7 in the issue; the reordered
"时区与作息" / "作息与时区" 40) and were written beside their originals. So a title is
cut into **words** and the score is their Dice coefficient, ``2 × shared / (|a| + |b|)``:

- Latin words, case- and width-folded; a few function words (``the``, ``of``, ``'s``)
  left out; a trailing plural ``s`` dropped; two words of 4+ letters are one when one
  begins the other (``deploy``/``deployment``) or rapidfuzz's ``ratio`` is 80+ (typos:
  ``databse``); a number such as ``2026-12-01`` or ``2.3`` is one word, and two titles
  that both hold numbers, not the same ones, score 0 (``v2.3`` / ``v2.4``: a series);
- Chinese and Japanese text has no spaces to cut at, so each character and each pair of
  adjacent characters is a word (``的`` left out): one changed character of a two-
  character word loses both its pairs, so "用户的猫" / "用户的狗" stays apart while a
  particle added or a phrase reordered stays close;
- titles equal once punctuation and spaces are gone (``check-list``) score 100.

Word order never counts. ``SIMILAR_AT`` was set on a labelled table (below).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

SIMILAR_AT = 62.0
"""The similarity (0-100) from which a title is a close match, not a new memory.
Measured on ``tests/remember/similar_titles.jsonl`` (102 labelled pairs in English and
Chinese, docs/writing.md: *Remember*; a test recomputes it): precision 1.00, recall 0.98 — the
miss is an abbreviation ("Staging environment" / "Staging env", 50). Two words of which
the one that names the memory differs score 50 ("Tea preference" / "Coffee preference":
not similar); three with one differing score 67 ("frontend API address" / "backend API
address": similar, asked about). The Chinese pairs sit closest to it: "代码审查规范" /
"代码评审规范" (63.6, similar) and "用户的猫" / "用户的狗" (60.0, not) — lower it and a
cat's memory asks about the dog's; raise it and a near-copy is written beside its
original."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"\d+(?:[.:/-]\d+)*|[{_CJK}]+|[^\W\d_{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")
_POSSESSIVE = re.compile(r"['’]s\b")
_FUNCTION_WORDS = frozenset(
    "a an the of for in on at to and or with by from is are my our your its this that"
    .split())
_CJK_PARTICLES = frozenset("的")
SAME_WORD_AT = 80.0
"""rapidfuzz ``ratio`` from which two Latin words of 4+ letters are one (a typo:
``databse``/``database`` 93, ``coffe``/``coffee`` 91; ``frontend``/``backend`` is 40)."""


def fold(text: str) -> str:
    """A title as compared: NFKC (full-width ``ＡＰＩ`` is ``API``), case-folded, runs of
    whitespace made one space — what a person would not call a different title."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


WORDS_VERSION = 1
"""Which ``words`` a cache in the state directory holds (``title_cache.py``): bump it
with any change to what ``words`` or ``_squashed`` return, and the caches made before are
rebuilt rather than trusted (``tests/test_close_titles.py`` pins their output to it)."""


@dataclass(frozen=True)
class Compared:
    """A text as ``similarity`` compares it: without punctuation (``squashed``) and as
    words — computed once, and kept in the titles cache so a ``new`` at 10,000 memories
    does not cut every title into words again."""

    squashed: str
    bag: _Bag


def compared(text: str) -> Compared:
    """``text`` made ready for ``similarity_of``."""
    return Compared(_squashed(text), _bag(text))


SEP = "\x1f"
"""Between the words of a ``Text``: a control character no word holds (``_TOKEN``)."""

Text = tuple[str, str]
"""A text as the titles cache keeps it: its squashed form and its words joined by
``SEP`` — two strings, which JSON reads fast, rather than a list per word."""


def text_of(text: str) -> Text:
    """``text`` as the titles cache keeps it (``Text``)."""
    return _squashed(text), SEP.join(words(text))


def compared_from(text: Text) -> Compared:
    """A ``Compared`` rebuilt from a ``Text`` (the cache's copy of ``compared``)."""
    squashed, joined = text
    return Compared(squashed, _bag_of(tuple(joined.split(SEP)) if joined else ()))


def similarity(a: str, b: str) -> float:
    """How close two texts (titles, or title and description) are, 0-100: the Dice
    coefficient of their words (module docstring)."""
    return similarity_of(compared(a), compared(b))


def similarity_of(a: Compared, b: Compared) -> float:
    """``similarity`` of two texts already compared."""
    if a.squashed == b.squashed:
        return 100.0
    mine, theirs = a.bag, b.bag
    if not mine.all or not theirs.all or _numbers_differ(mine, theirs):
        return 0.0
    return 100.0 * 2 * _shared(mine, theirs) / (len(mine.all) + len(theirs.all))


def _numbers_differ(mine: _Bag, theirs: _Bag) -> bool:
    """Both texts hold numbers, and not the same ones: "Release notes v2.4" / "v2.5",
    "v2.3 发布计划" / "v2.4 发布计划", two dates — a series of memories, not one worded
    twice (review 4: the next release's notes scored 75-89 and were refused)."""
    return bool(mine.numbers) and bool(theirs.numbers) and mine.numbers != theirs.numbers


def at_most(a: Compared, b: Compared, partner: Callable[[str], bool]) -> float:
    """An upper bound of ``similarity_of(a, b)`` that skips the typo comparisons: the
    words they have in common, plus as many of ``a``'s other varying words as ``b`` has
    varying words a typo or suffix could pair with (``partner``: true of a word that
    ``_same_word`` pairs with one of ``a``'s). Equal to the score or above it, never
    below, so a memory under the threshold by it is under the threshold."""
    if a.squashed == b.squashed:
        return 100.0
    mine, theirs = a.bag, b.bag
    if not mine.all or not theirs.all:
        return 0.0
    exact = mine.all & theirs.all
    pairable = sum(1 for w in theirs.varying if w not in exact and partner(w))
    if pairable:
        pairable = min(pairable, sum(1 for w in mine.varying if w not in exact))
    return 100.0 * 2 * (len(exact) + pairable) / (len(mine.all) + len(theirs.all))


def is_varying(word: str) -> bool:
    """A word a typo or a suffix may change (``_same_word`` compares only these)."""
    return len(word) >= 4 and not word.isdigit() and not _IS_CJK.match(word)


def pairs_with(words_: Sequence[str]) -> Callable[[str], bool]:
    """A test, memoised, of whether a word is one of ``words_`` in another form
    (``_same_word``): the typo half of ``at_most``."""
    known: dict[str, bool] = {}

    def partner(word: str) -> bool:
        found = known.get(word)
        if found is None:
            found = known[word] = any(_same_word(w, word) for w in words_)
        return found
    return partner


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """``text``'s words as ``similarity`` counts them, each once (cached: ``remember``
    compares one title with every memory of the folder)."""
    found: list[str] = []
    for token in _TOKEN.findall(_POSSESSIVE.sub("", fold(text))):
        if _IS_CJK.match(token):
            found.extend(_cjk_words(token))
        elif token not in _FUNCTION_WORDS:
            found.append(_singular(token))
    return tuple(dict.fromkeys(found))


def _cjk_words(run: str) -> list[str]:
    chars = [c for c in run if c not in _CJK_PARTICLES]
    return chars + ["".join(chars[i:i + 2]) for i in range(len(chars) - 1)]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") \
        else word


@dataclass(frozen=True)
class _Bag:
    """A text's words (``all``), and those a typo or a suffix may change (``varying``:
    Latin words of 4+ letters), computed once per text."""

    all: frozenset[str]
    varying: tuple[str, ...]
    numbers: frozenset[str] = frozenset()


@lru_cache(maxsize=65536)
def _bag(text: str) -> _Bag:
    return _bag_of(words(text))


def _bag_of(found: tuple[str, ...]) -> _Bag:
    return _Bag(frozenset(found), tuple(w for w in found if is_varying(w)),
                frozenset(w for w in found if w[0].isdigit()))


def _shared(mine: _Bag, theirs: _Bag) -> int:
    """How many of ``mine`` pair off with one of ``theirs`` each: the identical words,
    then the rest by ``_same_word`` (only varying ones can be a typo or another form)."""
    exact = mine.all & theirs.all
    count = len(exact)
    left = [w for w in theirs.varying if w not in exact]
    if not left:
        return count
    for word in mine.varying:
        if word in exact:
            continue
        match = next((i for i, other in enumerate(left) if _same_word(word, other)), None)
        if match is not None:
            del left[match]
            count += 1
    return count


@lru_cache(maxsize=1 << 18)
def _same_word(a: str, b: str) -> bool:
    """One word in two forms: one begins the other, or a typo (``SAME_WORD_AT``). Cached:
    a folder's titles reuse a small vocabulary. Pairs whose two first and two last
    letters both differ are not compared (two typos, one at each end, are missed): over
    10,000 memories that brings the comparison from about 3 s to under 1 s."""
    if a.startswith(b) or b.startswith(a):
        return True
    if 3 * min(len(a), len(b)) < 2 * max(len(a), len(b)):  # ratio < 80 for sure
        return False
    if a[:2] != b[:2] and a[-2:] != b[-2:]:
        return False
    from rapidfuzz.fuzz import ratio

    return ratio(a, b, score_cutoff=SAME_WORD_AT) > 0


@lru_cache(maxsize=65536)
def _squashed(text: str) -> str:
    return _PUNCTUATION.sub("", fold(text))


_PUNCTUATION = re.compile(r"[\W_]+")
