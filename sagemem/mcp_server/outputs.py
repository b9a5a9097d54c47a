"""What the tools return: typed results (clients get them as ``structuredContent``, with
a JSON schema in ``tools/list``) and the short text the model reads beside them.

Search returns the library's own ``SearchResponse`` (each result has its ``layer``),
read its ``ReadResult`` with the ``layer`` read from; the other shapes here are the ones
the library has no single object for (a write that was refused is a result, not an
error, so it needs fields for the conflict and both revisions). Every result about one
memory says its ``layer``: ``project``, or ``global`` for the global layer's habits
(``layered.py``); the texts the model reads mark only a global one, so a server without
a global layer says what it always said.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from ..files.controls import visible, visible_name
from ..layers.titles import GLOBAL
from ..search.reading import ReadResult

if TYPE_CHECKING:
    from ..search.results import SearchResponse

WriteStatus = Literal["written", "created", "updated", "unchanged", "similar", "refused"]
Refusal = Literal["changed", "exists", "merge_marker"]


@dataclass(frozen=True)
class WriteOutcome:
    """A guarded write, as done or refused. ``refused``: nothing was written; re-read
    ``file`` (now at ``current_revision``), merge, and write again with that revision.
    ``conflict_id`` names the record keeping both sides (``list_conflicts``); ``refusal``
    says why: the file ``changed`` since ``expected_revision``, a new file's name
    ``exists``, or the text holds a git ``merge_marker``. ``create_memory`` answers
    ``updated`` when a memory already had that title (``previous_revision`` is the text
    replaced; ``title`` is set, with a warning, when that was a former title of a memory
    since renamed) and ``similar`` when one has a close title: nothing was written,
    ``file`` is that memory, ``title`` its title, ``score`` how close (0-100)."""

    status: WriteStatus
    file: str
    revision: str | None = None
    previous_revision: str | None = None
    conflict_id: str | None = None
    expected_revision: str | None = None
    current_revision: str | None = None
    message: str = ""
    warnings: tuple[str, ...] = ()
    refusal: Refusal | None = None
    title: str | None = None
    score: float | None = None
    layer: str = "project"  # or "global": the layer written (or refused) in


@dataclass(frozen=True)
class ReadOutcome(ReadResult):
    """A ``ReadResult`` and the layer it was read from."""

    layer: str = "project"

    @classmethod
    def of(cls, result: ReadResult, layer: str) -> ReadOutcome:
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)}, layer=layer)


@dataclass(frozen=True)
class MemoryEntry:
    """One memory as listed: enough to choose what to read."""

    file: str
    name: str | None
    description: str
    type: str | None
    tags: tuple[str, ...]
    revision: str
    archived: bool = False
    baseline: bool = False
    layer: str = "project"  # or "global" (docs/agents/mcp.md, "Both layers")


@dataclass(frozen=True)
class MemoryList:
    memories: tuple[MemoryEntry, ...]
    unreadable: tuple[str, ...] = ()  # "file: why" for each file that could not be read


@dataclass(frozen=True)
class ArchiveOutcome:
    file: str
    reason: str
    index_changed: bool
    message: str
    layer: str = "project"


@dataclass(frozen=True)
class ConflictEntry:
    id: str
    kind: str
    status: str
    created: str
    file: str | None
    writer: str | None
    reason: str | None
    memories: tuple[str, ...] = ()
    disk_revision: str | None = None
    based_on: str | None = None
    layer: str = "project"


@dataclass(frozen=True)
class ConflictList:
    conflicts: tuple[ConflictEntry, ...]


@dataclass(frozen=True)
class UseOutcome:
    file: str
    recorded: bool
    warnings: tuple[str, ...] = ()
    layer: str = "project"


@dataclass(frozen=True)
class AuditFinding:
    category: str
    severity: str
    file: str
    line: int | None
    message: str


@dataclass(frozen=True)
class AuditOutcome:
    memories: int
    problems: int
    hints: int
    findings: tuple[AuditFinding, ...]


@dataclass(frozen=True)
class DreamBrief:
    """What to tidy and the plan format (``dream/brief.py``), and the same as text."""

    brief: dict[str, Any]
    text: str


@dataclass(frozen=True)
class DreamOutcome:
    """A consolidation run (``dream run``'s manifest, its essentials) and its report."""

    run_id: str
    status: str
    applied: list[dict[str, Any]]
    planned: list[dict[str, Any]]
    refused: list[dict[str, Any]]
    deleted_facts: list[dict[str, Any]]
    loss_share: float
    undo: str | None
    report: str


@dataclass(frozen=True)
class TranscriptExcerpt:
    """One past session's turn that answers: its citation (``transcript <session>:<line>``),
    date, who said it (``user`` or ``assistant``) and a redacted excerpt."""

    citation: str
    session: str
    line: int
    date: str
    role: str
    excerpt: str


@dataclass(frozen=True)
class TranscriptOutcome:
    """``search_transcripts``: the excerpts, how much was searched, and its notices."""

    excerpts: tuple[TranscriptExcerpt, ...]
    files_searched: int
    turns_searched: int
    notices: tuple[str, ...] = ()


# -- the text the model reads ---------------------------------------------------------------

def search_text(response: SearchResponse) -> str:
    """Each hit as ``file:lines  [type] score``, its description and paragraph; then what
    was looked at, the gate's verdict, and how to get more."""
    lines: list[str] = []
    for r in response.results:
        marks = " (archived)" if r.archived else ""
        marks += f" (invalid since {r.invalid_at})" if r.invalid else ""
        marks += f" (valid from {r.valid_at})" if r.not_yet_valid else ""
        lines += [f"{_mark(r.layer)}{r.file}:{r.start_line}-{r.end_line}  [{r.type}]  "
                  f"{r.score:.2f}{marks}"
                  f"  revision {r.revision[:12]}", f"  {visible(r.description)}",
                  *(f"    {line}" for line in visible(r.paragraph).splitlines()), ""]
    if not response.results:
        lines.append("No memory matches.")
    coverage = response.coverage
    lines.append(f"Scanned {coverage.files_scanned} files, {coverage.candidates} candidates.")
    relevance = response.relevance
    if relevance is not None and response.results and not relevance.passes:
        lines.append("Relevance is low: these may have nothing to do with the question.")
    if coverage.next_cursor:
        lines.append(f"More: call search_memory again with cursor={coverage.next_cursor!r}.")
    lines += [f"Notice: {visible(n)}" for n in response.notices]
    return "\n".join(lines)


def transcripts_text(outcome: TranscriptOutcome) -> str:
    """Each excerpt under its citation, then what they are: words from past sessions,
    not saved memories (the excerpts are redacted and made visible already)."""
    lines: list[str] = []
    for e in outcome.excerpts:
        lines += [f"{e.citation} ({e.date or 'undated'}, {e.role})", f'    "{e.excerpt}"', ""]
    if not outcome.excerpts:
        lines.append("No past session matches.")
    lines.append(f"Searched {outcome.files_searched} transcripts, {outcome.turns_searched} "
                 "turns. These are past sessions' words, not saved memories: check them "
                 "against the code; to keep a decision, save it with create_memory.")
    lines += [f"Notice: {visible(n)}" for n in outcome.notices]
    return "\n".join(lines)


def _mark(layer: str) -> str:
    """``[global] `` before a global memory's name, as the CLI marks it; nothing else."""
    return "[global] " if layer == GLOBAL else ""


def _in(layer: str) -> str:
    return " in the global layer" if layer == GLOBAL else ""


def read_text(result: ReadOutcome) -> str:
    text = _read_text(result)
    return _mark(result.layer) + text if result.layer == GLOBAL else text


def _read_text(result: ReadResult) -> str:
    if result.status == "revision_changed":
        return (f"revision_changed: {result.file} is now at revision {result.revision[:12]}; "
                "nothing was returned. Search or read it again without a revision.")
    if not result.content and result.next_start_line is None \
            and result.next_start_byte is None:
        return _past_the_end(result)
    more = ""
    if result.next_start_line:
        more = f"\n[more: read_memory start_line={result.next_start_line}]"
    elif result.next_start_byte is not None:
        more = f"\n[more: read_memory start_byte={result.next_start_byte}]"
    if not result.complete and result.start_byte is None and result.next_start_byte is None:
        more += (f"\n[not the whole body: to change this page, write_memory it as body with "
                 f"start_line={result.start_line} end_line={result.end_line}]")
    where = (f"lines {result.start_line}-{result.end_line} of {result.total_lines}"
             if result.start_line is not None else
             f"bytes {result.start_byte}-{result.end_byte} of {result.total_bytes}")
    return (f"{result.file} ({where}, revision {result.revision[:12]})\n"
            f"{visible(result.content or '')}{more}")


def _past_the_end(result: ReadResult) -> str:
    """A page that starts where the file has nothing (a start line or byte past its end)."""
    if result.start_byte is not None:
        where, size = f"byte {result.start_byte}", f"{result.total_bytes} bytes"
    else:
        where, size = f"line {result.start_line}", f"{result.total_lines} lines"
    return (f"{result.file} has nothing from {where}: it has {size} (revision "
            f"{result.revision[:12]}). Read it without start_line/start_byte for the start.")


def write_text(outcome: WriteOutcome) -> str:
    if outcome.status == "refused":
        return (f"refused{_in(outcome.layer)}: {visible(outcome.message)} Nothing was "
                f"written.{_revisions(outcome)}")
    if outcome.status == "similar" and outcome.message:  # several hold the same title
        return f"similar: nothing was written. {visible(outcome.message)}"
    if outcome.status == "similar":
        return (f"similar: nothing was written. {outcome.file}{_in(outcome.layer)} has a "
                "close title, "
                f"{visible(outcome.title or '')!r} (score {outcome.score or 0:.0f}, revision "
                f"{(outcome.revision or '')[:12]}). If it is the same thing, update that one "
                "(read_memory, then write_memory; or create_memory again with its exact "
                "title); if it is another thing, call create_memory again with "
                "distinct=true.")
    where = _in(outcome.layer)
    if outcome.status == "unchanged":
        text = f"{outcome.file}{where} already says that; nothing changed (revision " \
               f"{(outcome.revision or '')[:12]})."
    else:
        text = f"{outcome.status} {outcome.file}{where}, now at revision " \
               f"{(outcome.revision or '')[:12]}."
    return "\n".join([text, *(f"warning: {visible(w)}" for w in outcome.warnings)])


def _revisions(outcome: WriteOutcome) -> str:
    """Both revisions of a write refused because the file changed (only then: a name that
    exists or a merge marker has no current revision to name, and "deleted" would lie);
    for a name that exists, how to change that memory instead."""
    if outcome.refusal == "exists":
        return " To change that memory, read_memory it and write with its revision."
    if outcome.refusal != "changed":
        return ""
    return (f" Expected revision {(outcome.expected_revision or 'none')[:12]}, current "
            f"{(outcome.current_revision or 'deleted')[:12]}"
            + (f"; conflict {outcome.conflict_id}" if outcome.conflict_id else "") + ".")


def list_text(listing: MemoryList) -> str:
    lines = [f"{_mark(m.layer)}{m.file}  [{m.type or '?'}]"
             f"{'  (archived)' if m.archived else ''}  "
             f"{visible(m.description)}" for m in listing.memories]
    lines += [f"unreadable: {visible(u)}" for u in listing.unreadable]
    return "\n".join(lines) or "No memories."


def archive_text(outcome: ArchiveOutcome) -> str:
    return outcome.message


def conflicts_text(listing: ConflictList) -> str:
    lines = [f"{c.id}  {c.kind}  {c.status}  {_mark(c.layer)}{c.file or ', '.join(c.memories)}"
             f"{'  — ' + visible(c.reason) if c.reason else ''}" for c in listing.conflicts]
    return "\n".join(lines) or "No open conflicts."


def use_text(outcome: UseOutcome) -> str:
    return "\n".join([f"recorded a use of {outcome.file}{_in(outcome.layer)}",
                      *(f"warning: {visible(w)}" for w in outcome.warnings)])


def audit_text(outcome: AuditOutcome) -> str:
    lines = [f"{outcome.memories} memories: {outcome.problems} problems, {outcome.hints} hints"]
    lines += [f"{f.severity}  {visible_name(f.file)}{':' + str(f.line) if f.line else ''}  "
              f"{f.category}  "
              f"{visible(f.message)}" for f in outcome.findings]
    return "\n".join(lines)


def dream_brief_text(outcome: DreamBrief) -> str:
    return outcome.text


def dream_text(outcome: DreamOutcome) -> str:
    return outcome.report
