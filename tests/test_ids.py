"""``files/ids.py``: one rule for every id the CLI accepts — the id, or a unique prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.errors import ConflictNotFound, IdNotFound, SnapshotNotFound
from sagemem.files.ids import resolve_id

IDS = ("20261130T010000Z-aa", "20261130T020000Z-bb", "20261201T010000Z-cc")
WHERE = Path("/state/conflicts")


@pytest.mark.parametrize(("given", "found"), [
    ("20261130T010000Z-aa", "20261130T010000Z-aa"),
    ("20261130T01", "20261130T010000Z-aa"),
    ("20261201", "20261201T010000Z-cc"),
])
def test_an_id_or_a_unique_prefix_resolves(given: str, found: str) -> None:
    assert resolve_id(given, IDS, ConflictNotFound, WHERE) == found


def test_an_exact_id_wins_over_the_longer_ids_it_starts() -> None:
    assert resolve_id("2026", ("2026", "20261"), SnapshotNotFound, WHERE) == "2026"


def test_a_prefix_of_several_ids_says_how_many_and_to_give_more() -> None:
    with pytest.raises(ConflictNotFound) as caught:
        resolve_id("2026", IDS, ConflictNotFound, WHERE)
    assert caught.value.matches == 3 and caught.value.conflict_id == "2026"
    assert str(caught.value).startswith("2026 starts 3 conflict record ids in /state/conflicts;"
                                        " give more of it")


@pytest.mark.parametrize("given", ["nope", "", "../x"])
def test_no_match_says_none_matches(given: str) -> None:
    with pytest.raises(SnapshotNotFound) as caught:
        resolve_id(given, IDS, SnapshotNotFound, WHERE)
    assert caught.value.matches == 0 and isinstance(caught.value, IdNotFound)
    assert str(caught.value).startswith(f"no snapshot {given} in /state/conflicts; ")
