"""The structural audit: what drifted in a hand-edited memory folder, reported, never fixed.

One pass reads every file once (``scan.scan``: the safe read path, symlinks
refused, the size gate before reading), then runs ``CHECKS`` — a plain tuple of small
functions, each taking the ``Scan`` and returning findings (the frontmatter ones are in
``frontmatter.py``). A finding is a ``problem`` (something is wrong: ``audit
--strict`` fails on it) or a ``hint`` (worth a look).
Fixing the deterministic ones is ``fix.py``; following changes is ``watch.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..config import JSON_VERSION
from ..files.memory import Memory, line_of
from ..files.paths import INDEX_FILE, name_key
from ..store import MemoryStore
from ..writes import conflicts
from ..writes.guard import merge_marker_line
from . import index_hooks
from .duplicates import DuplicateGroup, NearDuplicate, duplicate_groups, near_duplicates
from .frontmatter import (
    check_comment_swallowed,
    check_frontmatter,
    check_type_prefix,
    key_line,
    swallowed_values,
)
from .links import Link, local_target, memory_links
from .names import check_name_collisions
from .scan import (
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

__all__ = [
    "CHECKS", "HINT", "PROBLEM", "AuditReport", "Check", "Finding", "IndexRead", "ReadCache",
    "Scan", "audit", "hint", "index_spellings", "key_line", "problem", "scan", "swallowed_values",
]


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
    # the finding already names the file: the message does not repeat it
    found += [problem("not_in_index", m.file, None, f"no line in {INDEX_FILE}",
                      title=m.title, description=m.description)
              for m in s.memories if name_key(m.file) not in indexed]
    found += [problem("not_in_index", f.file, None, f"no line in {INDEX_FILE}")
              for f in s.failed if f.file != INDEX_FILE and not f.file.endswith("/")
              and name_key(f.file) not in indexed]
    return found


def check_index_hooks(s: Scan) -> Iterable[Finding]:
    """Index lines left behind by a description change (``index_hooks.py``)."""
    if s.index is None:
        return []
    return index_hooks.check_index_hooks(
        s, {entry.target: _index_target(s, entry.target) for entry in s.index.entries})


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
    return [hint("empty_body", m.file, _last_line_from(m.text, m.body_line),
                 "the memory has no body")
            for m in s.memories if not m.body.strip()]


def _last_line_from(text: str, line: int) -> int | None:
    """``line``, or the file's last line when ``line`` lies past it (a file that ends on
    its frontmatter's ``---`` has its body line one past the end); None for an empty file."""
    count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return min(line, count) or None


def check_tags(s: Scan) -> Iterable[Finding]:
    """Tags over the format's limits (fields.MAX_TAGS, MAX_TAG_CHARS): kept, but noisy."""
    return [hint("tags_over_limit", m.file, p.line, f"tags: {p.message}", count=len(m.tags))
            for m in s.memories for p in m.problems if p.kind == "limit"]


def check_long_fields(s: Scan) -> Iterable[Finding]:
    """A title or description longer than a write may give it (``fields.over_bound``):
    read whole, but its MEMORY.md line is cut, and a rewrite of it is refused."""
    from ..files.fields import over_bound

    found = []
    for m in s.memories:
        for key, value in (("name", m.name), ("description", m.description)):
            over = over_bound(key, value, None)
            if over is not None:
                found.append(hint(f"{key}_over_limit", m.file, key_line(m, key),
                                  f"{key} is {over[0]} characters, over the {over[1]} a "
                                  "write may give: say it in one sentence, the detail in "
                                  "the body", length=over[0], limit=over[1]))
    return found


def check_duplicates(s: Scan) -> Iterable[Finding]:
    """Near-duplicate memories (blocked first, never all pairs): one hint per pair, and
    one per group when more than two are linked (20 near-copies: 1 hint, not 190)."""
    pairs = near_duplicates(s.memories)
    groups = [g for g in duplicate_groups(pairs) if len(g.files) > 2]
    grouped = {file for group in groups for file in group.files}
    return [*(_duplicate_finding(pair) for pair in pairs if pair.file not in grouped),
            *(_group_finding(group) for group in groups)]


GROUP_SHOWN = 3


def _group_finding(group: DuplicateGroup) -> Finding:
    first, others = group.files[0], group.files[1:]
    shown = ", ".join(others[:GROUP_SHOWN])
    more = f" and {len(others) - GROUP_SHOWN} more" if len(others) > GROUP_SHOWN else ""
    return hint("near_duplicate", first, None,
                f"{len(group.files)} near-duplicates: with {shown}{more} "
                f"(score {group.score:.0f}+)",
                other=others[0], score=round(group.score, 1), group=list(group.files))


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


# Claude Code puts only this much of MEMORY.md into the model's context at session start
# (src/memdir/memdir.ts: MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_BYTES; its memory docs say
# "the first 200 lines or the first 25KB, whichever comes first"); the rest is cut.
CLAUDE_CODE_INDEX_LINES = 200
CLAUDE_CODE_INDEX_BYTES = 25_000


def check_index_size(s: Scan) -> Iterable[Finding]:
    """A MEMORY.md longer than Claude Code loads: the lines past its limit are never
    seen by a model that starts a session on this folder (sage-mem's own index has no
    such limit, so it is a hint, never a problem)."""
    if s.index is None or s.index.revision is None:
        return []
    text = s.index.text.strip()  # Claude Code trims the file before it counts
    lines, size = text.split("\n"), len(text.encode("utf-8"))
    if len(lines) <= CLAUDE_CODE_INDEX_LINES and size <= CLAUDE_CODE_INDEX_BYTES:
        return []
    # the blank lines trimmed off the top still count, so the hint names the file's line
    trimmed = s.index.text[:len(s.index.text) - len(s.index.text.lstrip())].count("\n")
    first_lost = trimmed + min(CLAUDE_CODE_INDEX_LINES + 1, _first_line_past(lines))
    return [hint("index_over_claude_code_limit", INDEX_FILE, first_lost,
                 f"{len(lines)} lines, {size:,} bytes: Claude Code loads only the first "
                 f"{CLAUDE_CODE_INDEX_LINES} lines or {CLAUDE_CODE_INDEX_BYTES:,} bytes at "
                 f"session start, so from line {first_lost} on the model never sees it; "
                 "keep one short line per memory and move detail into topic files",
                 lines=len(lines), bytes=size, first_lost_line=first_lost)]


def _first_line_past(lines: list[str]) -> int:
    """The first line that ends past the byte limit (Claude Code cuts at line ends)."""
    total = 0
    for number, line in enumerate(lines, start=1):
        total += len(line.encode("utf-8")) + (1 if number > 1 else 0)
        if total > CLAUDE_CODE_INDEX_BYTES:
            return number
    return len(lines) + 1


def check_secrets(s: Scan) -> Iterable[Finding]:
    """Secrets already in hand-written files — the kind and the line, never the secret —
    and the memories that opted out of redaction (``redact: false``), listed so the
    choice stays visible."""
    from ..writes.redact import find_secrets, opted_out

    for m in s.memories:
        if opted_out(m.text):
            yield Finding("redaction_opted_out", HINT, m.file, None,
                          "redact: false — secrets in this memory are kept as written")
            continue
        for found in find_secrets(m.text):
            yield Finding("secret", PROBLEM, m.file, found.line,
                          f"a {found.kind} is written here (not shown); keep where it lives, "
                          "not the secret — `sagemem audit --fix` redacts it after a snapshot",
                          {"kind": found.kind})


CHECKS: tuple[Check, ...] = (
    check_unreadable, check_name_collisions, check_index, check_index_hooks,
    check_index_size, check_frontmatter, check_type_prefix, check_comment_swallowed,
    check_text, check_temporary, check_links, check_bodies, check_tags, check_long_fields,
    check_duplicates, check_conflicts, check_secrets,
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
