"""The structural audit: what drifted in a hand-edited memory folder, reported, never fixed.

One pass reads every file once (``audit_scan.scan``: the safe read path, symlinks
refused, the size gate before reading), then runs ``CHECKS`` — a plain tuple of small
functions, each taking the ``Scan`` and returning findings. A finding is a ``problem``
(something is wrong: ``audit --strict`` fails on it) or a ``hint`` (worth a look).
Fixing the deterministic ones is ``audit_fix.py``; following changes is ``audit_watch.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from frontmatter.default_handlers import SafeLoader

from . import conflicts
from .audit_scan import (
    HINT,
    PROBLEM,
    Finding,
    IndexRead,
    ReadCache,
    Scan,
    hint,
    problem,
    scan,
)
from .duplicates import NearDuplicate, near_duplicates
from .links import Link, local_target, memory_links
from .memory import TYPES, Memory, Problem, line_of, load_frontmatter, split, type_key
from .paths import INDEX_FILE, name_key
from .store import MemoryStore, merge_marker_line

__all__ = [
    "CHECKS", "HINT", "PROBLEM", "AuditReport", "Check", "Finding", "IndexRead", "ReadCache",
    "Scan", "audit", "hint", "index_spellings", "key_line", "problem", "scan", "swallowed_values",
]

JSON_VERSION = 1  # output.JSON_VERSION (a test pins them equal): importing output here
# would load the whole retrieval stack into every audit
_TEXT_KEYS = ("name", "description")
"""Free-text fields checked for a `` #`` the YAML reader took for a comment (in typed
fields such as ``type: user  # …`` a comment is deliberate)."""
_DATE_KEYS = ("valid_at", "invalid_at")
_COMMENT = re.compile(r"[ \t]#")  # YAML starts a comment at a '#' after a space or a tab
_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]|$)")
_SWALLOW = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)[ \t]*:[ \t]+(?P<value>[^\s'\"|>\[{&*!#%@`].*)$")


@dataclass(frozen=True)
class AuditReport:
    """Every finding, sorted; ``revisions`` are the file revisions the audit read (the
    guard of ``--fix``: a file changed since is skipped, never overwritten)."""

    directory: Path
    memories: int
    findings: tuple[Finding, ...]
    revisions: Mapping[str, str | None] = field(default_factory=dict, compare=False)

    @property
    def problems(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == PROBLEM)

    @property
    def hints(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == HINT)

    def to_json(self) -> dict[str, Any]:
        return {"version": JSON_VERSION, "directory": str(self.directory),
                "memories": self.memories, "problems": len(self.problems),
                "hints": len(self.hints), "findings": [f.to_json() for f in self.findings]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2)


Check = Callable[[Scan], Iterable[Finding]]


# -- the checks ---------------------------------------------------------------------------

def check_unreadable(s: Scan) -> Iterable[Finding]:
    """Files that are not memories because they could not be read (their own categories)."""
    return s.failed


def check_index(s: Scan) -> Iterable[Finding]:
    """Index lines pointing at nothing; memories with no index line."""
    if s.index is None:
        return []
    found = []
    targets = [(entry, _index_target(s, entry.target)) for entry in s.index.entries]
    for entry, target in targets:
        if target is not None and not s.exists(target):
            where = " (it is in archive/)" if name_key(target) in s.archived else ""
            found.append(problem("dangling_index_entry", INDEX_FILE, entry.line,
                                 f"index line points at missing {target}{where}",
                                 target=entry.target))
    indexed = {name_key(target) for _, target in targets if target is not None}
    found += [problem("not_in_index", m.file, None, f"{m.file} has no line in {INDEX_FILE}",
                      title=m.title, description=m.description)
              for m in s.memories if name_key(m.file) not in indexed]
    found += [problem("not_in_index", f.file, None, f"{f.file} has no line in {INDEX_FILE}")
              for f in s.failed if f.file != INDEX_FILE and not f.file.endswith("/")
              and name_key(f.file) not in indexed]
    return found


def index_spellings(target: str) -> list[str]:
    """The files an index line's target may name: as a link reads it (``%20`` decoded,
    ``#fragment`` off), then as written — sagemem itself writes ``<C# notes.md>`` as is."""
    written = target.removeprefix("./")
    literal = written if local_target(quote(written)) == written else None  # read as is
    return list(dict.fromkeys(t for t in (local_target(target), literal) if t is not None))


def _index_target(s: Scan, target: str) -> str | None:
    """The spelling that exists, else the first (None: a URL, a folder, another file)."""
    spellings = index_spellings(target)
    return next((t for t in spellings if s.exists(t)), spellings[0] if spellings else None)


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


def check_text(s: Scan) -> Iterable[Finding]:
    """CRLF line endings and git merge markers, in memories and in MEMORY.md."""
    texts = [(m.file, m.text) for m in s.memories]
    if s.index is not None and s.index.revision is not None:
        texts.append((INDEX_FILE, s.index.text))
    found = []
    for file, text in texts:
        if "\r\n" in text:
            found.append(problem("crlf_line_endings", file, line_of(text, text.index("\r\n")),
                                 "CRLF line endings (Windows); sagemem writes LF"))
        marker = merge_marker_line(text)
        if marker is not None:
            found.append(problem("merge_markers", file, marker,
                                 "unresolved git merge markers (<<<<<<< / >>>>>>>)"))
    return found


def check_temporary(s: Scan) -> Iterable[Finding]:
    """Temporary files an interrupted write or archive move left behind."""
    return [problem("temporary_file", name, None,
                    "leftover temporary file of an interrupted write; safe to delete")
            for name in s.temporary]


def check_links(s: Scan) -> Iterable[Finding]:
    """Wikilinks and Markdown links to ``.md`` files; ``superseded_by`` targets."""
    found: list[Finding] = []
    for m in s.memories:
        found += [_link_finding(s, m, link) for link in memory_links(m)
                  if not s.exists(link.target)]
        if m.superseded_by:
            found += _superseded_finding(s, m)
    return found


def _link_finding(s: Scan, m: Memory, link: Link) -> Finding:
    if name_key(link.target) in s.archived:
        return hint("link_to_archived", m.file, link.line,
                    f"link to {link.target}, which is archived", target=link.target)
    return problem("broken_link", m.file, link.line, f"link to missing {link.target}",
                   target=link.target, text=link.text)


def _superseded_finding(s: Scan, m: Memory) -> list[Finding]:
    target = m.superseded_by or ""
    key = name_key(target if name_key(target).endswith(".md") else target + ".md")
    line = key_line(m, "superseded_by")
    if key in s.live:
        return []
    if key in s.archived:
        return [hint("superseded_by_archived", m.file, line,
                     f"superseded_by {target}, which is archived", target=target)]
    return [problem("superseded_by_missing", m.file, line,
                    f"superseded_by names {target}, which does not exist", target=target)]


def check_bodies(s: Scan) -> Iterable[Finding]:
    """Memories with nothing under their frontmatter."""
    return [hint("empty_body", m.file, m.body_line, "the memory has no body")
            for m in s.memories if not m.body.strip()]


def check_tags(s: Scan) -> Iterable[Finding]:
    """Tags over the format's limits (memory.MAX_TAGS, MAX_TAG_CHARS): kept, but noisy."""
    return [hint("tags_over_limit", m.file, p.line, f"tags: {p.message}", count=len(m.tags))
            for m in s.memories for p in m.problems if p.kind == "limit"]


def check_duplicates(s: Scan) -> Iterable[Finding]:
    """Near-duplicate memories (blocked first, never all pairs), each pair once; a group
    of identical memories is one hint per copy, naming the group's first file."""
    return [_duplicate_finding(pair) for pair in near_duplicates(s.memories)]


def _duplicate_finding(pair: NearDuplicate) -> Finding:
    if pair.copies:
        return hint("near_duplicate", pair.file, None,
                    f"identical to {pair.other} (score 100; {pair.copies} copies)",
                    other=pair.other, score=100.0, copies=pair.copies)
    return hint("near_duplicate", pair.file, None,
                f"near-duplicate of {pair.other} (score {pair.score:.0f})",
                other=pair.other, score=round(pair.score, 1))


def check_conflicts(s: Scan) -> Iterable[Finding]:
    """Open conflict records waiting for a decision (``sagemem conflicts``)."""
    found = []
    for record in conflicts.list_conflicts(s.store.state_dir, "open"):
        file = record.file or (record.memories[0] if record.memories else "")
        found.append(hint("open_conflict", file, None,
                          f"open {record.kind} conflict {record.id}",
                          conflict_id=record.id, kind=record.kind,
                          memories=list(record.memories)))
    return found


CHECKS: tuple[Check, ...] = (
    check_unreadable, check_index, check_frontmatter, check_type_prefix,
    check_comment_swallowed, check_text, check_temporary, check_links, check_bodies,
    check_tags, check_duplicates, check_conflicts,
)


def audit(store: MemoryStore, *, checks: tuple[Check, ...] = CHECKS,
          cache: ReadCache | None = None) -> AuditReport:
    """Audit the memory folder; reports only, changes nothing."""
    s = scan(store, cache)
    findings = sorted((f for check in checks for f in check(s)), key=lambda f: f.key)
    revisions: dict[str, str | None] = {m.file: m.revision for m in s.memories}
    if s.index is not None:
        revisions[INDEX_FILE] = s.index.revision
    return AuditReport(store.directory, len(s.memories), tuple(findings), revisions)


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
