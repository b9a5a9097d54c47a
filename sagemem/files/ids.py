"""One rule for every id a person types (conflict records, snapshots): the whole id, or
a start of it that only one id has.

Before this, a conflict prefix shared by several records said "no conflict record" and
a snapshot prefix said "it starts 4 ids": the same question, two answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import IdNotFound


def resolve_id(given: str, ids: Iterable[str], error: type[IdNotFound], where: Path) -> str:
    """The id that is ``given`` or the only one starting with it; otherwise ``error``
    (a subclass of IdNotFound) saying that none matches, or how many do."""
    known = list(ids)
    if given in known:
        return given
    matches = [i for i in known if given and i.startswith(given)]
    if len(matches) != 1:
        raise error(given, where, len(matches))
    return matches[0]
