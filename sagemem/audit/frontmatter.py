"""The audit's frontmatter checks: missing or unparsable blocks, defaulted fields and
bad dates, a ``type`` disagreeing with the file name, and text lost to a `` #`` that
YAML took for a comment. Each check takes the ``Scan`` and returns findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

import yaml
from frontmatter.default_handlers import SafeLoader

from ..files.fields import TYPES, Problem, type_key
from ..files.memory import Memory, line_of, load_frontmatter, split
from .scan import Finding, Scan, problem

__all__ = ["check_comment_swallowed", "check_frontmatter", "check_type_prefix", "key_line",
           "swallowed_values"]

_TEXT_KEYS = ("name", "description")
"""Free-text fields checked for a `` #`` the YAML reader took for a comment (in typed
fields such as ``type: user  # …`` a comment is deliberate)."""
_DATE_KEYS = ("valid_at", "invalid_at")
_COMMENT = re.compile(r"[ \t]#")  # YAML starts a comment at a '#' after a space or a tab
_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]|$)")
_SWALLOW = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)[ \t]*:[ \t]+(?P<value>[^\s'\"|>\[{&*!#%@`].*)$")


def check_frontmatter(s: Scan) -> Iterable[Finding]:
    """Missing or unparsable frontmatter, defaulted fields, bad dates, empty description."""
    found: list[Finding] = []
    for memory in s.memories:
        found += _frontmatter_findings(memory)
    return found


def _frontmatter_findings(m: Memory) -> list[Finding]:
    unparsable = next((p for p in m.problems if p.kind == "unparsable"), None)
    fielded = [p for p in m.problems if p.kind == "field"]
    if unparsable is None and not m.has_frontmatter:
        return [problem("missing_frontmatter", m.file, 1,
                        "no frontmatter: every field reads as its default")]
    if unparsable is None:
        return [_field_finding(m, p) for p in fielded] + _value_findings(m)
    fallback = (sorted({p.field for p in fielded}) if m.has_frontmatter
                else _unclosed_keys(m.text))
    found = [problem("frontmatter_unparsable", m.file, unparsable.line, unparsable.message,
                     fallback_fields=fallback)]
    if m.has_frontmatter:  # each field was read on its own: those values still count
        found += [_field_finding(m, p) for p in fielded if p.field in _DATE_KEYS]
        found += _value_findings(m)
    return found


def _value_findings(m: Memory) -> list[Finding]:
    """An empty description; dates in the wrong order."""
    found = []
    if not m.description.strip():
        found.append(problem("missing_description", m.file, key_line(m, "description") or 1,
                             "description is missing or empty"))
    if m.valid_at and m.invalid_at and m.invalid_at < m.valid_at:
        found.append(problem("invalid_before_valid", m.file, key_line(m, "invalid_at"),
                             f"invalid_at {m.invalid_at} is before valid_at {m.valid_at}",
                             valid_at=m.valid_at.isoformat(), invalid_at=m.invalid_at.isoformat()))
    return found


def _unclosed_keys(text: str) -> list[str]:
    """The fields of a block never closed with ``---`` (every one reads as its default):
    its ``key:`` lines, up to the first blank line or line that is no YAML field."""
    keys = set()
    for line in text.splitlines()[1:]:
        key = _KEY.match(line)
        if key:
            keys.add(key["key"])
        elif not line.strip() or line[0] not in " \t-#":
            break
    return sorted(keys)


def _field_finding(m: Memory, p: Problem) -> Finding:
    if p.field in _DATE_KEYS and getattr(m, p.field) is None:
        return problem("invalid_date", m.file, p.line, f"{p.field}: {p.message}", field=p.field)
    return problem("field_problem", m.file, p.line, f"{p.field}: {p.message}", field=p.field)


def check_type_prefix(s: Scan) -> Iterable[Finding]:
    """``user_x.md`` whose type is not ``user`` (MEMORY.md is a list: never checked)."""
    found = []
    for m in s.memories:
        prefix = m.file.split("_", 1)[0].lower() if "_" in m.file else ""
        if m.has_frontmatter and prefix in TYPES and m.type != prefix:
            found.append(_type_finding(m, prefix))
    return found


def _type_finding(m: Memory, prefix: str) -> Finding:
    """The mismatch, at the line of the type in effect; a missing type is said to be
    missing (it reads as the default), not to disagree."""
    parts = split(m.text)
    fields = load_frontmatter(parts.frontmatter or "", line_of(m.text, parts.fm_start), [])
    key = type_key(fields)
    if key is None:
        return problem("type_prefix_mismatch", m.file, None, f"no type (read as {m.type!r}); "
                       f"the file name says {prefix!r}", type=m.type, prefix=prefix)
    return problem("type_prefix_mismatch", m.file, key_line(m, key),
                   f"type is {m.type!r} but the file name says {prefix!r}",
                   type=m.type, prefix=prefix)


def check_comment_swallowed(s: Scan) -> Iterable[Finding]:
    """`` #`` in an unquoted text value: YAML read the rest of the line as a comment."""
    found = []
    for m in s.memories:
        block = split(m.text).frontmatter
        if block is not None and _COMMENT.search(block):
            found += swallowed_values(m)
    return found


def swallowed_values(m: Memory) -> list[Finding]:
    """Compare each raw text line with what YAML made of it (one line read at a time)."""
    parts = split(m.text)
    first = line_of(m.text, parts.fm_start)
    found = []
    for offset, raw_line in enumerate((parts.frontmatter or "").splitlines()):
        match = _SWALLOW.match(raw_line.rstrip("\r"))
        if not match or match["key"] not in _TEXT_KEYS or not _COMMENT.search(match["value"]):
            continue
        raw, kept = match["value"].rstrip(), _kept_text(match[0])
        if kept is not None:
            found.append(problem("comment_swallowed", m.file, first + offset,
                                 f"{match['key']}: ' #' started a YAML comment; the value "
                                 f"read is {kept!r}", field=match["key"], raw=raw,
                                 parsed=kept))
    return found


def _kept_text(line: str) -> str | None:
    """What YAML kept of a ``key: value #…`` line's plain value when the rest became a
    comment — as written, so ``12 # items`` (a number) counts too; None when no comment
    cut it (or YAML refuses the line: that is frontmatter_unparsable's business)."""
    try:
        tokens = list(yaml.scan(line, Loader=SafeLoader))  # the reader's own (libyaml)
    except yaml.YAMLError:
        return None
    for previous, token in pairwise(tokens):
        if isinstance(previous, yaml.ValueToken) and isinstance(token, yaml.ScalarToken):
            rest = line[token.end_mark.index:].lstrip(" \t")
            return token.value if token.plain and rest.startswith("#") else None
    return None


def key_line(m: Memory, key: str) -> int | None:
    """The file line of a top-level frontmatter key, or of a nested one such as
    ``metadata.type`` (its parent's line when written in flow style, ``{type: …}``)."""
    parts = split(m.text)
    if parts.frontmatter is None:
        return None
    lines = parts.frontmatter.splitlines()
    parent, _, name = key.rpartition(".")
    index = _key_index(lines, parent or name, 0, nested=False)
    if index is not None and parent:
        index = _key_index(lines, name, index + 1, nested=True) or index
    return None if index is None else line_of(m.text, parts.fm_start) + index


def _key_index(lines: list[str], key: str, start: int, *, nested: bool) -> int | None:
    """The first line from ``start`` holding ``key:`` (indented when ``nested``, and then
    only until the parent mapping ends)."""
    indent = r"[ \t]+" if nested else ""
    pattern = re.compile(rf"^{indent}{re.escape(key)}[ \t]*:")
    for index in range(start, len(lines)):
        if nested and lines[index].strip() and lines[index][0] not in " \t":
            return None
        if pattern.match(lines[index]):
            return index
    return None
