"""``close_titles``: the cheap pass before ``decide`` compares never changes a decision
(``sagemem/writes/close_titles.py``, ``similar.at_most``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemem.writes.close_titles import candidates, card_of
from sagemem.writes.remember import SIMILAR_AT, Decision, decide, same_when
from sagemem.writes.similar import similarity

TABLE = Path(__file__).parent / "remember" / "similar_titles.jsonl"
WORDS = ("deploy", "deployment", "deplyo", "database", "databse", "staging", "stage",
         "frontend", "backend", "api", "address", "tea", "coffee", "preference",
         "the", "of", "2026-12-01", "v2", "cats", "cat's", "check-list", "checklist",
         "用户", "的", "猫", "狗", "代码审查", "代码评审", "规范", "时区", "作息", "ＡＰＩ")


@dataclass(frozen=True)
class Titled:
    """A memory as ``decide`` reads it, without a file behind it."""

    file: str
    name: str | None
    description: str = ""
    when: str | None = None
    former_names: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return self.name or self.file[:-3]


def full_decision(memories: list[Titled], title: str, description: str | None,
                  when: str | None, threshold: float) -> Decision[Titled]:
    """The similar step as it was before the cheap pass: every memory compared in full."""
    same = [m for m in memories if same_when(m.when, when)]
    scored = []
    for m in same:
        best = max(similarity(title, t) for t in (m.title, *m.former_names))
        if description and m.description:
            best = max(best, similarity(f"{title} {description}",
                                        f"{m.title} {m.description}"))
        scored.append((best, m))
    if not scored:
        return Decision("new")
    score, closest = max(scored, key=lambda pair: pair[0])
    return Decision("similar", closest, score) if score >= threshold else Decision("new")


text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join) | st.text(
    alphabet="abcdeé的猫狗 -'s", max_size=12)
memories = st.lists(st.builds(Titled, file=st.sampled_from(["a.md", "b.md", "c.md"]),
                              name=text | st.none(), description=text,
                              when=st.sampled_from([None, "Q3"]),
                              former_names=st.lists(text, max_size=2).map(tuple)),
                    max_size=8)


@settings(max_examples=400, deadline=None)
@given(memories, text, text | st.none(), st.sampled_from([None, "Q3"]),
       st.sampled_from([SIMILAR_AT, 0.0, 30.0, 50.0, 100.0]))
def test_the_cheap_pass_gives_the_decision_of_the_full_comparison(
        listed: list[Titled], title: str, description: str | None, when: str | None,
        threshold: float) -> None:
    expected = full_decision(listed, title, description, when, threshold)
    for given_ in (listed, [card_of(m) for m in listed]):  # memories, or cached cards
        by_name = decide(given_, title, description=description, when=when, distinct=True)
        found = decide(given_, title, description=description, when=when,
                       threshold=threshold)
        if by_name.kind != "new":  # an identical name or former name decides first
            assert found == by_name
            continue
        assert (found.kind, found.score) == (expected.kind, expected.score)
        assert (found.memory is None) == (expected.memory is None)
        if found.memory is not None and expected.memory is not None:
            assert given_.index(found.memory) == listed.index(expected.memory)


def test_the_cheap_pass_keeps_every_close_pair_of_the_labelled_table() -> None:
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        other = card_of(Titled("x.md", pair["b"]))
        kept = list(candidates([other], pair["a"], None, SIMILAR_AT))
        full = similarity(pair["a"], pair["b"])
        assert kept == ([(full, other)] if full >= SIMILAR_AT else []) or (
            full < SIMILAR_AT and all(score == full for score, _ in kept)), pair


def test_a_memory_sharing_no_word_is_never_scored() -> None:
    far = card_of(Titled("x.md", "Quarterly invoice report"))
    typo = card_of(Titled("y.md", "databse migration"))
    kept = [m.file for _, m in candidates([far, typo], "database migration", None,
                                          SIMILAR_AT)]
    assert kept == ["y.md"]


WORDS_OF_THE_TABLE = {1: "8af73a8384f42e8a05cab35a340ba0975596deae89934bb83e9a5198c06d083c"}
"""Over the table's 102 rows. Review 4 added five rows and changed no word: its first 97
rows still give version 1's earlier digest, cce82bcb7250…"""


def test_the_words_version_names_what_words_returns() -> None:
    """A change to ``words`` or ``_squashed`` without a new ``WORDS_VERSION`` would let
    titles caches made before it be trusted: bump the version, add its digest here."""
    import hashlib

    from sagemem.writes.similar import WORDS_VERSION, text_of

    rows = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines()]
    texts = sorted({t for row in rows for t in (row["a"], row["b"])})
    digest = hashlib.sha256(json.dumps([text_of(t) for t in texts], ensure_ascii=False)
                            .encode()).hexdigest()
    assert WORDS_OF_THE_TABLE.get(WORDS_VERSION) == digest
