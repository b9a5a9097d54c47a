"""The weight of a question's words: function words count less, rare words more.

Shared by retrieval (``retrieve.py``), the passage choice (``passage.py``) and the
transcript search: each weighs a question's words the same way.
"""

from __future__ import annotations

import math

from .text import is_cjk

MAX_QUERY_TERMS = 64  # a pasted page is not a question; SQLite caps bound variables too
FUNCTION_WEIGHT = 0.25
FUNCTION_WORDS = frozenset(
    # A secondary defence only (IDF is the first): in a small corpus written in another
    # language, English question words are rare and IDF alone would call them evidence.
    "a an the is are was were be been am do does did i me my mine we our you your it its "
    "he she they them their of to in on for with at by from and or not no what which who "
    "whom whose when wher why how that this these those there here should would could "
    "can will shall may might must have has had about into than then so if any some all "
    "s t let".split()
)
FUNCTION_CHARS = frozenset(
    # Chinese function characters: a two-character unit holding one (是什, 的时, 用的) is
    # mostly an artefact of unsegmented text, not a topic.
    "的了是吗呢吧啊在我你他她它们这那哪什么怎个要会能就都也还和与或把被给让对从到又很想请该"
)


def idf(df: int, n: int) -> float:
    """BM25's inverse document frequency of a word held by ``df`` of ``n`` units."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def is_function_word(term: str) -> bool:
    """A function word, or a CJK unit holding a function character: it weighs less."""
    if is_cjk(term):
        return any(ch in FUNCTION_CHARS for ch in term)
    return term in FUNCTION_WORDS
