"""Secrets never reach disk: a deterministic redactor every write passes through first.

An agent writes most memories, and it pastes what it sees: a ``ghp_…`` token in a
command, a database URL with its password, a ``.env`` line. A rule names a kind of
secret by its shape (a provider's documented prefix and length: ``secret_shapes.py``) or
by its place (the value of a key, header, flag or URL parameter that names a secret:
``secret_places.py``); a match becomes ``<REDACTED:kind>``. Everything is a regular
expression without nested repetition and with bounded repeats, so a hostile text costs
time linear in its length, and the store's size limit bounds that.

False positives matter as much as misses — a commit id, a sha256 sum, a UUID, a base64
image or an example like ``sk-...`` must come through byte for byte — so a candidate is
kept when it looks like a placeholder (``...``, ``xxxx``, ``<token>``, ``${VAR}``,
``EXAMPLE``) or, for the prefixed tokens, when its body is not random-looking (too few
distinct characters, no digit). ``redact: false`` in a memory's frontmatter opts it out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..errors import InvalidName
from ..files.memory import split
from .secret_places import (
    ASSIGNMENT,
    CJK_ASSIGNMENT,
    CJK_NEEDS,
    KEY_NEEDS,
    PLACES,
    SECRET_KEY,
    assigned,
    cjk_value,
    colon_value,
    password_key,
)
from .secret_shapes import SHAPES, Rule, mark_before

MARK = "<REDACTED:{kind}>"
OPT_OUT = re.compile(r"^redact\s*:\s*(?:false|no|off)\s*(?:#.*)?$", re.M | re.I)


@dataclass(frozen=True)
class Found:
    """A secret found: its kind and the line it starts on — never the secret itself."""

    kind: str
    line: int


@dataclass(frozen=True)
class Redaction:
    text: str
    found: tuple[Found, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.found)


RULES: tuple[Rule, ...] = SHAPES + PLACES
"""Every rule but the key assignments: a provider's shape first, then a value's place."""


def redact(text: str) -> Redaction:
    """``text`` with every secret replaced by ``<REDACTED:kind>`` (and where each was);
    the same text when there is none. Redacting twice changes nothing more."""
    spans = sorted(_spans(text))  # leftmost, then longest, then a named kind first
    if not spans:
        return Redaction(text)
    kinds = _best_kinds(spans)
    parts, found, at, line = [], [], 0, 1
    for start, negative_end, _, _ in spans:
        end = -negative_end
        if start < at:  # inside a secret already replaced (a JWT after "Bearer")
            continue
        kind = kinds[start]
        # counted from the last secret, not from the start: 50,000 secrets in a 1 MB
        # text took 8 s counting each one's line from the top
        line += text.count("\n", at, start)
        parts += [text[at:start], MARK.format(kind=kind)]
        found.append(Found(kind, line))
        line += text.count("\n", start, end)
        at = end
    parts.append(text[at:])
    return Redaction("".join(parts), tuple(found))


def _best_kinds(spans: list[tuple[int, int, int, str]]) -> dict[int, str]:
    """The kind each place's secret is named by: the best-ranked of the spans starting
    there. The longest span is what is replaced (leaving no tail of a secret on disk),
    but ``"private_key": "-----BEGIN…\\n"`` is a ``private_key`` whose key's quoted value
    runs one escape further, not a ``secret``."""
    kinds: dict[int, tuple[int, str]] = {}
    for start, _, rank, kind in spans:
        if start not in kinds or rank < kinds[start][0]:
            kinds[start] = (rank, kind)
    return {start: kind for start, (_, kind) in kinds.items()}


def find_secrets(text: str) -> tuple[Found, ...]:
    """Where ``text`` holds secrets (kind and line), for the audit: nothing changes."""
    return redact(text).found


def opted_out(text: str) -> bool:
    """``redact: false`` in the frontmatter: this memory is kept as written (the audit
    lists it, so the choice stays visible)."""
    frontmatter = split(text).frontmatter
    return bool(frontmatter and OPT_OUT.search(frontmatter))


def redact_memory(text: str) -> Redaction:
    """What a write stores: ``text`` redacted, unless its frontmatter opts out."""
    return Redaction(text) if opted_out(text) else redact(text)


def redaction_notice(*texts: str) -> str | None:
    """What to tell the writer when its texts held secrets (None when they held none):
    the kinds and lines, never a secret. ``texts`` as given to the write (a whole memory
    text honours ``redact: false``)."""
    found = [f for text in texts for f in redact_memory(text).found]
    if not found:
        return None
    plural = "s" if len(found) != 1 else ""
    return _notice([f.kind for f in found],
                   f"line{plural} " + ", ".join(str(f.line) for f in found[:10]))


def fields_notice(fields: Mapping[str, object]) -> str | None:
    """``redaction_notice`` for the fields a ``set`` gives: the kinds and the fields."""
    kinds = {key: _field_kinds(key, value) for key, value in fields.items()}
    named = [key for key, found in kinds.items() if found]
    if not named:
        return None
    return _notice([k for found in kinds.values() for k in found],
                   f"field{'s' if len(named) != 1 else ''} " + ", ".join(named))


def _notice(kinds: list[str], where: str) -> str:
    count = len(kinds)
    return (f"{count} secret{'s' if count != 1 else ''} redacted before writing "
            f"({', '.join(sorted(set(kinds)))}; {where}): keep where a secret lives, "
            "not the secret")


def redact_value(value: object) -> object:
    """A frontmatter value as a write stores it: text redacted, a list item by item."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    return value


def redact_field(key: str, value: object) -> object:
    """A field as a write stores it: ``redact_value``, and the whole value of a key that
    names a secret — ``set password=hunter2`` stores no ``hunter2``, which the value
    alone (no key beside it) would not show to be one."""
    kind = _secret_field(key, value)
    return MARK.format(kind=kind) if kind else redact_value(value)


def _secret_field(key: str, value: object) -> str | None:
    """The kind of the value of a key that names a secret, None for any other field."""
    if not (isinstance(value, str) and SECRET_KEY.fullmatch(key)
            and assigned(value, password_key(key))):
        return None
    return "password" if password_key(key) else "secret"


def _field_kinds(key: str, value: object) -> list[str]:
    kind = _secret_field(key, value)
    if kind:
        return [kind]
    items = value if isinstance(value, list) else [value]
    return [f.kind for item in items if isinstance(item, str) for f in redact(item).found]


def refuse_secret_name(name: str) -> str:
    """``name``, unless a secret is in it: a file name is shown by every listing, log and
    ``git status`` and cannot hold a ``<REDACTED:…>`` mark, so ``new --file`` or a write
    to ``reference_ghp_….md`` is refused, the error showing the name redacted. Each part
    after a ``_`` or ``-`` is tried, as the token rules want nothing word-like before."""
    for start in [0, *(i + 1 for i, c in enumerate(name) if c in "_-")]:
        found = redact(name[start:])
        if found.changed:
            kinds = ", ".join(sorted({f.kind for f in found.found}))
            raise InvalidName(name[:start] + found.text, f"the file name holds a secret "
                              f"({kinds}); name the memory for what it is about")
    return name


def redact_reason(reason: str | None) -> str | None:
    """A writer's reason is kept in conflict records and logs: redacted like a text."""
    return None if reason is None else redact(reason).text


def _spans(text: str) -> Iterator[tuple[int, int, int, str]]:
    """(start, -end, rank, kind) of each candidate: sorted, the leftmost longest comes
    first, and at one place a provider's shape (rank 0) before a value's place (1) before
    a key's value (2) — ``Authorization: token ghp_…`` is a ``github_token``. A rule
    runs only on a text holding a fragment it needs (``Rule.needs``): most prose skips
    most rules, which keeps an audit of 10,000 memories from paying for all of them."""
    folded = text.lower()
    for rule in RULES:
        for match in rule.finds(text, folded):
            yield match.start("secret"), -match.end("secret"), int(rule.by_place), rule.kind
    if any(word in folded for word in KEY_NEEDS):
        for match in ASSIGNMENT.finditer(text):
            if match.start() and mark_before(text, match.start()):
                continue  # a key glued to a secret (``…<REDACTED:x>_API_KEY=``), as before it
            group = next(g for g in "abec" if match.group(g) is not None)
            if group == "c" and not colon_value(text, match):
                continue
            yield from _value(match, group, match.group(0)[:match.start(group)
                                                           - match.start()])
    if any(word in text for word in CJK_NEEDS):
        for match in CJK_ASSIGNMENT.finditer(text):
            if cjk_value(text, match):
                yield from _value(match, "secret", match.group("key"))


def _value(match: re.Match[str], group: str, key: str) -> Iterator[tuple[int, int, int, str]]:
    """The span of a key's value (``password`` or ``secret``), unless it is no secret."""
    password = password_key(key)
    if assigned(match.group(group), password):
        yield (match.start(group), -match.end(group), 2,
               "password" if password else "secret")
