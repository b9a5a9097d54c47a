"""A memory's revision: the sha256 of its bytes, and the one rule for a revision prefix.

Every guarded write compares the revision the writer read with the file's current one;
people copy a prefix of it from ``show``, so a prefix is accepted once it is long enough
to be no guess.
"""

from __future__ import annotations

import hashlib
import re

from ..errors import InvalidRevision


def revision_of(data: bytes) -> str:
    """A file's revision: the sha256 of its bytes. Writes are guarded with it."""
    return hashlib.sha256(data).hexdigest()


MIN_REVISION_PREFIX = 8
"""Shortest revision prefix accepted: 8 hex characters (32 bits) as people copy them
from ``show``; a 4-character one is a 1-in-65,536 guess, so it is refused, not compared."""
_HEX = re.compile(r"[0-9a-f]+")


def checked_revision(given: str) -> str:
    """``given`` as a revision prefix (lower case, spaces trimmed), or InvalidRevision:
    the one rule for ``read(revision=)``, ``write(expected_revision=)`` and the CLI."""
    prefix = given.strip().lower()
    if not _HEX.fullmatch(prefix) or len(prefix) > 64:
        raise InvalidRevision(given, "is not a revision (hexadecimal, at most 64 "
                                     "characters)", MIN_REVISION_PREFIX)
    if len(prefix) < MIN_REVISION_PREFIX:
        raise InvalidRevision(given, f"is {len(prefix)} characters; a prefix needs at "
                                     f"least {MIN_REVISION_PREFIX}", MIN_REVISION_PREFIX)
    return prefix


def names_revision(given: str, revision: str) -> bool:
    """Whether ``given`` (the full revision or a prefix, see ``checked_revision``) names
    ``revision``."""
    return revision.startswith(checked_revision(given))
