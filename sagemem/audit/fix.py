"""``audit --fix``: the few repairs that are deterministic and lossless, nothing else.

- a memory missing from MEMORY.md gets its line (title and description);
- an index line pointing at a missing file is dropped;
- CRLF line endings become LF (only the ``\\r`` bytes go);
- a text value that lost its tail to `` #`` is quoted (only that line changes);
- a secret in a hand-written memory becomes ``<REDACTED:kind>`` (``writes/redact.py``).

Memory files are written through ``store.write`` guarded by the revision the audit
read, MEMORY.md under ``store.locked()`` with the same check: a file changed since the
audit is skipped and reported, never overwritten. Everything else stays a report.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import SagememError, StaleRevision
from ..files import indexfile
from ..files.memory import line_of, parse, split
from ..files.paths import INDEX_FILE
from ..files.revision import revision_of
from ..store import MemoryStore
from ..writes import changelog
from ..writes.guard import guarded_write
from .report import AuditReport, Finding, audit, index_spellings

SNAPSHOT_KEEP = 20
REASON = "audit --fix"

FIXABLE = ("not_in_index", "dangling_index_entry", "crlf_line_endings", "comment_swallowed",
           "secret")


@dataclass(frozen=True)
class Change:
    """One repair: the finding it answers, and what changes (``detail``)."""

    category: str
    file: str
    line: int | None
    detail: str


@dataclass(frozen=True)
class Skipped:
    """A file whose repairs were not made, and why (it changed since the audit, …)."""

    file: str
    reason: str


@dataclass(frozen=True)
class FixReport:
    """What ``fix`` changed (or, on a dry run, would change), what it skipped, the
    snapshot taken first, and the audit afterwards (None on a dry run)."""

    changes: tuple[Change, ...]
    skipped: tuple[Skipped, ...]
    dry_run: bool
    snapshot: str | None
    after: AuditReport | None
    rotated: tuple[str, ...] = ()  # older snapshots the snapshot's rotation removed


def fix(store: MemoryStore, report: AuditReport | None = None, *, dry_run: bool = False,
        snapshot: bool = True, keep: int = SNAPSHOT_KEEP, writer: str = "library"
        ) -> FixReport:
    """Make the safe repairs ``report`` (default: a fresh audit) calls for, then re-audit.

    First, only when something is about to change (never on a dry run), an ``auto``
    snapshot is taken so every repair can be rolled back; its id is the report's
    ``snapshot``. ``snapshot=False`` skips it; ``keep`` is the rotation's setting.
    Each file repaired gets a change-log line (op ``fix``, by ``writer``).
    """
    report = report or audit(store)
    fixable = [f for f in report.findings if is_fixable(f)]
    if dry_run or not fixable:
        planned = tuple(c for file, found in _by_file(fixable) for c in _planned(file, found))
        return FixReport(planned, (), dry_run, None, None if dry_run else report)
    from ..history.journal import require_none_pending  # a real fix only

    require_none_pending(store.state_dir)  # repairs planned against a half-done folder
    snapshot_id, rotated = _snapshot_before_fixing(store, keep) if snapshot else (None, ())
    changes: list[Change] = []
    skipped: list[Skipped] = []
    for file, found in _by_file(fixable):
        try:
            changes += _apply(store, report, file, found, writer)
        except (StaleRevision, _Moved):
            skipped.append(Skipped(file, "changed since the audit read it; audit again"))
        except SagememError as exc:  # merge markers, a vanished file, a full disk, …
            skipped.append(Skipped(file, str(exc)))
    return FixReport(tuple(changes), tuple(skipped), False, snapshot_id, audit(store), rotated)


def fix_confirmed(store: MemoryStore, report: AuditReport | None = None, *,
                  confirm: Callable[[FixReport], bool], keep: int = SNAPSHOT_KEEP,
                  writer: str = "library") -> FixReport:
    """Plan the repairs, let ``confirm`` see the plan, then make exactly those.

    Nothing to repair asks nothing; a declined plan is returned as the dry run it is.
    The repairs are guarded by the revisions ``report`` read, so a file changed while
    the person read the plan is skipped, never overwritten.
    """
    report = report or audit(store)
    plan = fix(store, report, dry_run=True)
    if plan.changes and not confirm(plan):
        return plan
    return fix(store, report, keep=keep, writer=writer)


def _snapshot_before_fixing(store: MemoryStore, keep: int) -> tuple[str, tuple[str, ...]]:
    from ..history.snapshots import create_snapshot  # only a real fix needs it

    taken = create_snapshot(store, kind="auto", label="before audit --fix",
                            reason="audit --fix", keep=keep)
    return taken.id, taken.rotated


def is_fixable(f: Finding) -> bool:
    """A finding ``fix`` repairs (an unreadable file has no title for an index line)."""
    return f.category in FIXABLE and (f.category != "not_in_index" or "title" in f.data)


class _Moved(Exception):
    """The file is no longer at the revision the audit read."""


def _by_file(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """Index repairs all land in MEMORY.md, repaired last (its new lines are built from
    the memories as repaired); the others in the file they were found in."""
    grouped: defaultdict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        grouped[INDEX_FILE if f.category == "not_in_index" else f.file].append(f)
    return sorted(grouped.items(), key=lambda item: (item[0] == INDEX_FILE, item[0]))


def _planned(file: str, found: list[Finding]) -> list[Change]:
    return [Change(f.category, file, f.line, _detail(f)) for f in _ordered(found)]


def _ordered(found: list[Finding]) -> list[Finding]:
    """Removals, then quoting, then line endings, then additions (in file order)."""
    order = {c: n for n, c in enumerate(("dangling_index_entry", "comment_swallowed",
                                         "crlf_line_endings", "secret", "not_in_index"))}
    return sorted(found, key=lambda f: (order[f.category], f.file, f.line or 0))


def _detail(f: Finding) -> str:
    if f.category == "not_in_index":
        return f"add index line for {f.file}"
    if f.category == "dangling_index_entry":
        return f"drop index line {f.line} (points at missing {f.data['target']})"
    if f.category == "crlf_line_endings":
        return "convert CRLF line endings to LF"
    if f.category == "secret":
        return f"redact the {f.data['kind']} on line {f.line}"
    return f"quote {f.data['field']}: {_quoted(str(f.data['raw']))}"


def _apply(store: MemoryStore, report: AuditReport, file: str, found: list[Finding],
           writer: str) -> list[Change]:
    if file == INDEX_FILE:
        return _apply_index(store, report, found, writer)
    memory = store.get(file)
    if memory.revision != report.revisions.get(file):
        raise _Moved(file)
    text = repaired_text(memory.text, found)
    guarded_write(store, file, text, memory.revision, reason=REASON, writer=writer,
                  conflict_kind=None, op="fix")
    if any(f.category == "secret" for f in found):
        from ..writes.versions import forget

        forget(store.state_dir, memory.revision)  # the snapshot before fixing holds it
    return _planned(file, found)


def repaired_text(text: str, found: Iterable[Finding]) -> str:
    """A memory's text with the repairs of ``found`` (its fixable findings) made."""
    for f in _ordered(list(found)):
        text = _repaired(text, f)
    return text


def _repaired(text: str, f: Finding) -> str:
    if f.category == "comment_swallowed":
        return quote_value(text, f)
    if f.category == "secret":
        from ..writes.redact import redact

        return redact(text).text
    return to_lf(text)


def _apply_index(store: MemoryStore, report: AuditReport, found: list[Finding],
                 writer: str) -> list[Change]:
    expected = report.revisions.get(INDEX_FILE)

    def edit(text: str) -> str:
        if not _index_at(text, expected):
            raise _Moved(INDEX_FILE)
        for f in _ordered(found):
            text = _index_edit(store, text, f)
        return text

    with store.locked():
        update = store.update_index(edit)  # guarded: an editor saving MEMORY.md meanwhile wins
        if update is not None:
            changelog.record_index(store, update, "fix", writer=writer, reason=REASON)
    store.notice_change()
    return _planned(INDEX_FILE, found)


def _index_at(text: str, revision: str | None) -> bool:
    """Whether MEMORY.md still reads as the audit saw it (None: there was none, and
    ``read_index`` then gives the starter text)."""
    if revision is None:
        return text == indexfile.INDEX_HEADER
    return revision_of(text.encode("utf-8")) == revision


def _index_edit(store: MemoryStore, text: str, f: Finding,
                entry_fields: Callable[[MemoryStore, Finding], tuple[str, str]] | None = None
                ) -> str:
    if f.category == "dangling_index_entry":
        target = str(f.data["target"])
        if any(store.existing_name(name) for name in index_spellings(target)):
            raise _Moved(INDEX_FILE)  # the file is back: never drop a line that works
        return indexfile.remove_entries(text, target)
    if f.category == "crlf_line_endings":
        return to_lf(text)
    title, description = (entry_fields or _entry_fields)(store, f)
    return indexfile.add_entry(text, indexfile.format_entry(title, f.file, description))


def _entry_fields(store: MemoryStore, f: Finding) -> tuple[str, str]:
    """Title and hook for a new index line, from the memory as it reads now — after its
    own repairs: a description that lost its tail to `` #`` gets it back first."""
    try:
        memory = store.get(f.file)
    except SagememError:  # gone or unreadable since the audit: what the audit read
        return str(f.data.get("title") or f.file[:-3]), str(f.data.get("description") or "")
    return memory.title, memory.description


def repaired_texts(store: MemoryStore, report: AuditReport,
                   findings: Iterable[Finding] | None = None) -> dict[str, str]:
    """What ``fix`` would write, file by file (MEMORY.md last), writing nothing.

    ``findings`` (default: the report's) narrows the repairs: ``dream tidy`` leaves out
    the index line of a memory it archives. A file no longer at the revision the audit
    read, or one a repair cannot be made in, is left out, as ``fix`` would skip it; so is
    MEMORY.md when there is none (there is nothing to rewrite)."""
    chosen = report.findings if findings is None else findings
    texts: dict[str, str] = {}
    for file, found in _by_file(f for f in chosen if is_fixable(f)):
        try:
            if file != INDEX_FILE:
                texts[file] = _repaired_memory(store, report, file, found)
            elif report.revisions.get(INDEX_FILE) is not None:
                texts[file] = _repaired_index(store, report, found, texts)
        except (_Moved, SagememError):
            continue
    return texts


def _repaired_memory(store: MemoryStore, report: AuditReport, file: str,
                     found: list[Finding]) -> str:
    memory = store.get(file)
    if memory.revision != report.revisions.get(file):
        raise _Moved(file)
    return repaired_text(memory.text, found)


def _repaired_index(store: MemoryStore, report: AuditReport, found: list[Finding],
                    repaired: dict[str, str]) -> str:
    """MEMORY.md as ``_apply_index`` would write it, a new line's title and hook taken
    from its memory as repaired (``fix`` writes the memories first, then reads them)."""
    text, _ = store.read_index()
    if not _index_at(text, report.revisions.get(INDEX_FILE)):
        raise _Moved(INDEX_FILE)

    def entry_fields(store: MemoryStore, f: Finding) -> tuple[str, str]:
        if f.file not in repaired:
            return _entry_fields(store, f)
        memory = parse(repaired[f.file].encode("utf-8"), f.file)
        return memory.title, memory.description

    for f in _ordered(found):
        text = _index_edit(store, text, f, entry_fields)
    return text


def to_lf(text: str) -> str:
    """CRLF → LF; every other byte (a lone ``\\r`` included) stays."""
    return text.replace("\r\n", "\n")


def quote_value(text: str, f: Finding) -> str:
    """Replace only the value on the finding's line with the raw text, double-quoted."""
    raw, parts = str(f.data["raw"]), split(text)
    lines = text.splitlines(keepends=True)
    number = f.line or 0
    inside = parts.frontmatter is not None and (
        line_of(text, parts.fm_start) <= number <= line_of(text, parts.fm_end))
    if not inside or raw not in lines[number - 1]:
        raise _Moved(f.file)  # the line no longer holds what the audit saw
    line = lines[number - 1]
    start = line.index(raw, line.index(":") + 1)
    lines[number - 1] = line[:start] + _quoted(raw) + line[start + len(raw):]
    return "".join(lines)


def _quoted(raw: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's) holding ``raw`` exactly."""
    return json.dumps(raw, ensure_ascii=False)
