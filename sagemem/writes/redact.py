"""Secrets never reach disk: a deterministic redactor every write passes through first.

An agent writes most memories, and it pastes what it sees: a ``ghp_…`` token in a
command, a database URL with its password, a ``.env`` line. Each rule below names a kind
of secret by its shape (a provider's documented prefix and length) or by its place (the
value of a key that names a secret); a match becomes ``<REDACTED:kind>``. Everything is
a regular expression without nested repetition, so a hostile text costs time linear in
its length, and the store's size limit bounds that.

False positives matter as much as misses — a commit id, a sha256 sum, a UUID, a base64
image or an example like ``sk-...`` must come through byte for byte — so a candidate is
kept when it looks like a placeholder (``...``, ``xxxx``, ``<token>``, ``${VAR}``,
``EXAMPLE``) or, for the prefixed tokens, when its body is not random-looking (too few
distinct characters, no digit). ``redact: false`` in a memory's frontmatter opts it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ..errors import InvalidName
from ..files.memory import split

MARK = "<REDACTED:{kind}>"
_MARKED = re.compile(r"<REDACTED:[a-z_]+>")
OPT_OUT = re.compile(r"^redact\s*:\s*(?:false|no|off)\s*(?:#.*)?$", re.M | re.I)

PLACEHOLDER = re.compile(
    r"\.\.\.|…|x{4,}|X{4,}|\*{3,}|<[^<>\s]*>|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^}]*\}\}"
    r"|%\(\w+\)s|EXAMPLE|example|your[ _-]|changeme|placeholder|dummy|REDACTED",
    re.I)


@dataclass(frozen=True)
class Rule:
    """One kind of secret: ``pattern``'s group ``secret`` is what is replaced."""

    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] = lambda secret: True


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


def random_looking(secret: str) -> bool:
    """A token body drawn at random, not a word, a repeated filler or an example: a
    digit and a letter, at least 10 distinct characters, no placeholder in it."""
    return (any(c.isdigit() for c in secret) and any(c.isalpha() for c in secret)
            and len(set(secret)) >= 10 and not PLACEHOLDER.search(secret))


PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token",
                               "apikey", "api_key", "key", "test", "demo", "sample"})
"""Values that name what goes there (``postgres://user:password@host`` in a doc)."""


def not_placeholder(secret: str) -> bool:
    return (not PLACEHOLDER.search(secret) and not _MARKED.search(secret)
            and secret.casefold() not in PLACEHOLDER_WORDS)


def _assigned(secret: str) -> bool:
    """A value given to a key that names a secret: anything but a placeholder, a bare
    boolean or null, or a value that is only a few repeated characters."""
    return (not_placeholder(secret) and len(set(secret)) >= 3 and
            secret.casefold().strip("_-") not in PLACEHOLDER_WORDS and
            secret.lower() not in {"true", "false", "null", "none", "nil", "yes", "no"})


_KEY_WORDS = (r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
              r"|private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?|session[_-]?key")
# The key ends with a secret word (``DB_PASSWORD``, ``api-key``; not ``max_tokens``,
# ``token_url`` or ``secretName``); the value is quoted, or given with ``=``, or holds a
# digit or a sign, or ends the line — "the secret: keep it simple" is prose, not a value.
# A quoted value is whole up to its closing quote: a passphrase has spaces ("correct horse
# battery staple"), and a JSON string an escaped quote (``"hun\"ter2"``) — stopping at the
# first space or quote left the rest of the secret on disk.
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,40}(?:" + _KEY_WORDS + r")(?![A-Za-z0-9_])"
    r"[\"']?[ \t]*(?:"
    r"[=:][ \t]*\"(?P<b>(?:[^\"\\\r\n]|\\[^\r\n]){4,200})\""
    r"|[=:][ \t]*'(?P<e>(?:[^'\\\r\n]|\\[^\r\n]){4,200})'"
    r"|=[ \t]*[\"']?(?P<a>[^\s\"'`,;]{4,200})"
    r"|:[ \t]*(?P<c>(?=[^\s\"'`,;]{0,200}[0-9!#%&*+/?@^~])[^\s\"'`,;]{4,200})"
    r"|:[ \t]*(?P<d>[^\s\"'`,;]{4,200})[ \t]*$)", re.M)

_PASSWORD_KEY = re.compile(r"(?i)pass|pwd")
_SECRET_KEY = re.compile(r"(?i)[A-Za-z0-9_.-]{0,40}(?:" + _KEY_WORDS + r")")

RULES: tuple[Rule, ...] = (
    Rule("private_key", re.compile(
        r"(?P<secret>-----BEGIN (?P<label>(?:[A-Z]+ ){0,2}PRIVATE KEY(?: BLOCK)?)-----"
        r"(?:(?!-----)[\s\S]){1,20000}-----END (?P=label)-----"
        # a key cut off before its END line (``head -5 id_ed25519``): its base64 lines
        r"|-----BEGIN (?:[A-Z]+ ){0,2}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\r?\n[A-Za-z0-9+/=]{1,200}(?![^\r\n])){1,1000})")),
    Rule("anthropic_key", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,200})"),
        random_looking),
    Rule("openai_key", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200})"),
        random_looking),
    Rule("aws_access_key_id", re.compile(
        r"(?<![A-Z0-9])(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![A-Z0-9])"),
        not_placeholder),
    Rule("aws_secret_access_key", re.compile(
        r"(?i)aws_?secret(?:_?access)?_?key[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), random_looking),
    Rule("github_token", re.compile(
        r"(?<![A-Za-z0-9_])(?P<secret>(?:gh[pousr]_[A-Za-z0-9]{36,255}"
        r"|github_pat_[A-Za-z0-9_]{22,255}))"), random_looking),
    Rule("gitlab_token", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,255})"),
        random_looking),
    Rule("slack_token", re.compile(
        r"(?<![A-Za-z0-9-])(?P<secret>xox[abposre]-[A-Za-z0-9-]{10,255})"), random_looking),
    Rule("slack_webhook", re.compile(
        r"(?P<secret>https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,200})"),
        random_looking),
    Rule("stripe_key", re.compile(
        r"(?<![A-Za-z0-9_])(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200})"),
        random_looking),
    Rule("google_api_key", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
        not_placeholder),
    Rule("google_oauth_token", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>ya29\.[0-9A-Za-z_-]{20,500})"), random_looking),
    Rule("jwt", re.compile(
        r"(?<![A-Za-z0-9_-])(?P<secret>eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}"
        r"\.[A-Za-z0-9_-]{8,2000})")),
    Rule("bearer_token", re.compile(
        r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,2000}=*)"), random_looking),
    Rule("basic_auth", re.compile(
        r"(?i)\bauthorization:[ \t]*basic[ \t]+(?P<secret>[A-Za-z0-9+/]{8,2000}=*)"),
        not_placeholder),
    Rule("url_password", re.compile(
        # no user (``redis://:pw@host``) and an unencoded ``@`` in the password: up to
        # the last ``@`` before the path
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@]{0,200}:(?P<secret>[^\s/]{1,200})@"),
        not_placeholder),
)


_TRIGGER = re.compile(
    r"(?i)sk-|sk_|rk_|akia|asia|abia|acca|gh[pousr]_|github_pat_|gl(?:pat|dt|ptt|rt)-|xox"
    r"|hooks\.slack|aiza|ya29\.|eyj|bearer|basic|-----begin|://|pass|pwd|secret|token"
    r"|key|credential")
"""Something every rule needs: a text without any of these (most prose) skips the rules,
which keeps an audit of 10,000 memories from paying for all of them on each."""


def redact(text: str) -> Redaction:
    """``text`` with every secret replaced by ``<REDACTED:kind>`` (and where each was);
    the same text when there is none. Redacting twice changes nothing more."""
    if not _TRIGGER.search(text):
        return Redaction(text)
    spans = sorted(_spans(text))  # leftmost, then longest, then a named kind first
    if not spans:
        return Redaction(text)
    parts, found, at = [], [], 0
    for start, negative_end, _, kind in spans:
        end = -negative_end
        if start < at:  # inside a secret already replaced (a JWT after "Bearer")
            continue
        parts += [text[at:start], MARK.format(kind=kind)]
        found.append(Found(kind, text.count("\n", 0, start) + 1))
        at = end
    parts.append(text[at:])
    return Redaction("".join(parts), tuple(found))


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
    if not (isinstance(value, str) and _SECRET_KEY.fullmatch(key) and _assigned(value)):
        return None
    return "password" if _PASSWORD_KEY.search(key) else "secret"


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
    """(start, -end, 0 for a named kind or 1 for a key's value, kind) of each candidate:
    sorted, the leftmost longest comes first, and a provider's kind before "secret"."""
    for rule in RULES:
        for match in rule.pattern.finditer(text):
            secret = match.group("secret")
            if rule.check(secret):
                yield match.start("secret"), -match.end("secret"), 0, rule.kind
    for match in _ASSIGNMENT.finditer(text):
        group = next(g for g in "abcde" if match.group(g) is not None)
        if _assigned(match.group(group)):
            kind = "password" if _PASSWORD_KEY.search(match.group(0)[:match.start(group)
                                                                   - match.start()]) else "secret"
            yield match.start(group), -match.end(group), 1, kind
