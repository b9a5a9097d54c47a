"""Which memories could be close to a title: the cheap pass before ``decide`` compares.

``decide`` (``remember.py``) asks, of every live memory, how similar its titles are to
the one being saved (``similar.py``); at 10,000 memories comparing each in full took
about a second of every ``sagemem new``. A score is a share of shared words, so a
memory that has none of the title's words, and no word a typo or suffix pairs with one
of them, scores under any positive threshold unless its text is the title's with other
punctuation (``squashed``). ``candidates`` keeps only the others (one set test each),
then drops those whose upper bound (``similar.at_most``) is under the threshold, and
scores the rest in full. Nothing dropped could reach the threshold, and the order of
the others is kept, so the decision is the same (``tests/test_close_titles.py`` checks
it against the full comparison with hypothesis).

A ``TitleCard`` is what of a memory this needs — its names, description, ``when`` and
their words already cut (``similar.Text``) — so that the titles cache
(``title_cache.py``) can hand ``decide`` 10,000 of them without parsing a file or
cutting a title into words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol, TypeVar

from .similar import (
    SEP,
    Compared,
    Text,
    at_most,
    compared,
    compared_from,
    is_varying,
    pairs_with,
    similarity_of,
    text_of,
)


class Titled(Protocol):
    """What ``decide`` reads of a memory: a ``Memory`` or a ``TitleCard``."""

    @property
    def file(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def description(self) -> str: ...

    @property
    def when(self) -> str | None: ...

    @property
    def former_names(self) -> tuple[str, ...]: ...

    @property
    def title(self) -> str: ...


M = TypeVar("M", bound=Titled)


@dataclass(frozen=True)
class TitleCard:
    """A memory as a title comparison sees it (``Titled``), its texts cut into words
    once: ``titles`` its title then each former name, ``both`` title and description
    together (None without a description)."""

    file: str
    name: str | None
    description: str
    when: str | None
    former_names: tuple[str, ...]
    invalid_at: date | None
    titles: tuple[Text, ...]
    both: Text | None

    @property
    def title(self) -> str:
        return self.name or self.file[:-3]


def card_of(memory: Titled, invalid_at: date | None = None) -> TitleCard:
    """``memory``'s card: its texts cut into words now."""
    titles = tuple(text_of(t) for t in (memory.title, *memory.former_names))
    both = text_of(f"{memory.title} {memory.description}") if memory.description else None
    return TitleCard(memory.file, memory.name, memory.description, memory.when,
                     tuple(memory.former_names), invalid_at, titles, both)


def similarity(title: str, description: str | None, memory: Titled) -> float:
    """How close a title (and description) is to ``memory``'s, 0-100 (``similar.py``):
    to its name or a former name, or — when both have a description — title and
    description together, the higher. Aliases take no part: one retrieval word ("api")
    would make every title holding it a close match."""
    return _Query(title, description, ()).score(_card(memory))


def candidates(memories: Sequence[M], title: str, description: str | None,
               threshold: float) -> Iterator[tuple[float, M]]:
    """Each memory that may reach ``threshold`` with its exact similarity, in the order
    given; the others (``module docstring``) are skipped."""
    cards = [_card(m) for m in memories]
    query = _Query(title, description, _vocabulary(cards))
    for card, memory in zip(cards, memories, strict=True):
        if threshold <= 0 or (query.may_share(card) and query.bound(card) >= threshold):
            yield query.score(card), memory


def _card(memory: Titled) -> TitleCard:
    return memory if isinstance(memory, TitleCard) else card_of(memory)


def _vocabulary(cards: Iterable[TitleCard]) -> set[str]:
    """Every varying word of the cards' texts, found once: a varying word has 4+
    characters, so one regex over all the texts joined picks the few to test from the
    hundreds of thousands of Chinese characters and pairs (twice as fast as a split)."""
    texts = SEP.join([t[1] for c in cards for t in (*c.titles, *((c.both,) if c.both else ()))])
    return {w for w in set(_LONG_WORD.findall(texts)) if is_varying(w)}


_LONG_WORD = re.compile(f"[^{SEP}]{{4,}}")  # a match starts where a word does


class _Query:
    """A title (and description) compared once: its words, and those of ``vocabulary``
    a typo or suffix pairs with them (``similar._same_word``), memoised."""

    def __init__(self, title: str, description: str | None, vocabulary: Iterable[str]
                 ) -> None:
        self.title = compared(title)
        self.both = compared(f"{title} {description}") if description else None
        self._title_partner = pairs_with(self.title.bag.varying)
        self._both_partner = pairs_with(self.both.bag.varying if self.both else ())
        vocabulary = list(vocabulary)
        self._title_keys = self._keys(self.title, self._title_partner, vocabulary)
        self._both_keys = self._keys(self.both, self._both_partner, vocabulary) \
            if self.both else frozenset()

    @staticmethod
    def _keys(text: Compared, partner: Callable[[str], bool], vocabulary: list[str]
              ) -> frozenset[str]:
        return text.bag.all | {w for w in vocabulary if partner(w)}

    def may_share(self, card: TitleCard) -> bool:
        """Whether ``card`` has a word of the query or a partner of one, or a text equal
        to it once squashed: else every score is 0 (or, with no word, 0 too)."""
        keys, squashed = self._title_keys, self.title.squashed
        for text in card.titles:  # a loop, not any(): this runs 10,000 times a ``new``
            if text[0] == squashed or not keys.isdisjoint(text[1].split(SEP)):
                return True
        both = card.both
        return self.both is not None and both is not None and (
            both[0] == self.both.squashed or not self._both_keys.isdisjoint(both[1].split(SEP)))

    def score(self, card: TitleCard) -> float:
        """The full similarity ``decide`` uses: the best of every title pair, and of
        title-with-description."""
        best = max(similarity_of(self.title, compared_from(t)) for t in card.titles)
        if self.both is not None and card.both is not None:
            best = max(best, similarity_of(self.both, compared_from(card.both)))
        return best

    def bound(self, card: TitleCard) -> float:
        """A cheap upper bound of ``score``: a card below the threshold here is skipped."""
        best = max(at_most(self.title, compared_from(t), self._title_partner)
                   for t in card.titles)
        if self.both is not None and card.both is not None:
            best = max(best, at_most(self.both, compared_from(card.both),
                                     self._both_partner))
        return best
