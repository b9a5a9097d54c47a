"""The commit message of a sync, built from the change journal: what sagemem changed
since the last sync, one line per change, and the files edited by hand.

Subject: ``sagemem sync: 3 changes (2 written, 1 archived)``; body: one line per
journal entry, oldest first — ``write user_pets.md (cli)`` — then one per file that
git sees changed and the journal does not know (``edited by hand: notes.md``) — but
the ``MEMORY.md`` that ``sagemem init`` wrote, which no journal line names, is
``init MEMORY.md (sagemem init)``. A journal line holds no memory text, only names, so
neither does the message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..files.controls import visible
from ..writes.changelog import Entry

DONE = {"create": "created", "new": "created", "write": "written", "set": "set",
        "archive": "archived", "restore": "restored", "purge": "purged",
        "rename": "renamed", "rollback": "rolled back", "fix": "fixed",
        "revert": "reverted"}
"""Each journal ``op`` as the subject counts it; an op this table lacks shows as is."""
HAND = "edited by hand"
INIT = "initialised"
SUBJECT_PREFIX = "sagemem sync"


def commit_message(entries: Sequence[Entry], by_hand: Sequence[str], *,
                   subject: str | None = None, initialised: Sequence[str] = ()) -> str:
    """The message for a commit carrying ``entries`` (oldest first), the files
    ``by_hand`` and those ``sagemem init`` wrote (``initialised``); ``subject``, when
    given, replaces the counted subject line."""
    body = [_entry_line(item) for item in entries]
    body += [f"init {visible(name)} (sagemem init)" for name in initialised]
    body += [f"{HAND}: {visible(name)}" for name in by_hand]
    head = (visible(" ".join((subject or "").split()))
            or counted_subject(entries, by_hand, initialised))
    return head + ("\n\n" + "\n".join(body) if body else "") + "\n"


def counted_subject(entries: Sequence[Entry], by_hand: Sequence[str],
                    initialised: Sequence[str] = ()) -> str:
    """``sagemem sync: 3 changes (2 written, 1 archived)``, most frequent first."""
    counts = Counter(DONE.get(item.op, item.op) for item in entries)
    if initialised:
        counts[INIT] += len(initialised)
    if by_hand:
        counts[HAND] += len(by_hand)
    total = sum(counts.values())
    parts = ", ".join(f"{n} {what}" for what, n in counts.most_common())
    noun = "change" if total == 1 else "changes"
    return f"{SUBJECT_PREFIX}: {total} {noun} ({parts})"


def _entry_line(item: Entry) -> str:
    name = item.file if item.to is None else f"{item.file} -> {item.to}"
    return visible(f"{item.op} {name} ({item.writer})")
