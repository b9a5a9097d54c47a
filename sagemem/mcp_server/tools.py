"""The tools a model calls, each a thin call into the library.

The names and parameters are sage-mem's (``aliases.py`` also takes its camelCase
spellings and the names models guess). Each method's docstring and parameter
descriptions are what the model reads in ``tools/list``: they say when to call the tool
and what to do with what it returns. A method raises ``SagememError`` for a mistake the
model can fix (``server.py`` turns it into an error result); a guarded write that is
refused is a normal ``WriteOutcome`` with the conflict and both revisions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import Field

from ..config import Settings
from ..errors import (
    InvalidArgument,
    MemoryNotFound,
    SagememError,
    TranscriptsOff,
    WriteRefused,
)
from ..files.fields import set_warnings
from ..files.memory import Memory
from ..files.revision import checked_revision, names_revision
from ..history.archive import archive_memory
from ..history.caps import with_room
from ..history.caps import write_memory as write_within_caps
from ..history.ledger import record_if_possible
from ..layers import GLOBAL, Layers
from ..search.results import SearchResponse
from ..store import MemoryStore
from ..transcripts.search import search_project
from ..writes.conflicts import list_conflicts
from .answers import (
    conflict_entry,
    former_title,
    memory_entry,
    redaction_warnings,
    refused,
    room_made,
    same_title,
)
from .arguments import field_values, line_range, new_text
from .consolidation import ConsolidationTools
from .hints import hints
from .layered import CreateLayer, Layer, ServedLayers
from .outputs import (
    ArchiveOutcome,
    AuditFinding,
    AuditOutcome,
    ConflictList,
    MemoryList,
    ReadOutcome,
    TranscriptExcerpt,
    TranscriptOutcome,
    UseOutcome,
    WriteOutcome,
)

WRITER = "mcp"
SEARCH_BUDGET_S = 5.0
"""How long a search may spend bringing the index up to date before it answers from what
is indexed (with a notice): the server catches up in the background meanwhile."""
Mode = Literal["lexical", "semantic", "hybrid"]


Name = Annotated[str, Field(description="The memory's file name, e.g. user_pets.md "
                                        "(.md may be left off).")]
Reason = Annotated[str | None, Field(description="Why you make this change, in a few words; "
                                                 "kept with a refused write's conflict.")]


class MemoryTools(ConsolidationTools):
    """The tools over the layers (``layered.py``). One instance per server; its methods
    run one at a time on one thread (``server.py``), as the stores' SQLite connections
    require."""

    def __init__(self, layers: Layers | MemoryStore, session_id: str | None = None,
                 settings: Settings | None = None) -> None:
        layers = layers if isinstance(layers, Layers) else Layers(layers)  # the project alone
        self.store = layers.project  # the project's: conflicts, audit and dreams are its
        self.served = ServedLayers(layers, settings, session_id or None)
        """Each layer, and what the model saw of it (``layered.py``): the session's seen
        record goes to the layer's own state only under the ``session`` setting
        (SAGE_MEM_SESSION): the server cannot tell which Claude Code session calls it,
        and a shared record would vouch for every session's writes (issue 20)."""

    @hints(read_only=True, idempotent=True)
    def search_memory(
        self,
        query: Annotated[str, Field(description="The question or topic, in any language.")],
        scope: Annotated[str | None, Field(
            description="Only memories of this type (user, feedback, project, reference) "
                        "or with this tag.")] = None,
        limit: Annotated[int, Field(ge=1, le=10, description="Results per page.")] = 5,
        cursor: Annotated[str | None, Field(
            description="coverage.next_cursor of the previous page, for the next one.")] = None,
        mode: Annotated[Mode | None, Field(
            description="lexical (words), semantic (meaning) or hybrid (both; the "
                        "default when semantic search is on).")] = None,
    ) -> SearchResponse:
        """Search the long-term memories (notes about the user, their feedback, projects
        and references) before you answer from memory or ask the user something they may
        have told you before. Returns the best memories, each with the paragraph that
        answers and its line range, and coverage (what was scanned; next_cursor for more).
        relevance.passes false means the hits are probably unrelated to the question.
        Both layers are searched: layer "global" marks a habit that holds in every project
        (a project memory of the same title overrides it). Read a whole memory with
        read_memory, passing its revision (and its layer)."""
        if not query.strip():
            raise InvalidArgument("query", "it is empty; ask a question or name a topic")
        if mode in ("semantic", "hybrid") and not self.store.semantic:
            raise InvalidArgument("mode", "semantic search is off (setting semantic: false or "
                                    "SAGE_MEM_SEMANTIC=off); use mode lexical")
        response = self.served.layers.search(query, scope=scope, limit=limit, cursor=cursor,
                                             mode=mode,
                                             deadline=time.monotonic() + SEARCH_BUDGET_S)
        warnings = self.served.searched(response.results)
        return dataclasses.replace(response, notices=(*response.notices, *warnings))

    @hints(read_only=True, idempotent=True)
    def search_transcripts(
        self,
        query: Annotated[str, Field(description="The question or topic, in any language.")],
        limit: Annotated[int, Field(ge=1, le=10, description="Excerpts at most.")] = 3,
    ) -> TranscriptOutcome:
        """Search this project's past Claude Code sessions (their transcripts: what the
        user and the assistant said, never tool output) when search_memory found nothing
        for something discussed before. Returns short redacted excerpts, each cited as
        transcript <session>:<line> with its date. They are not memories: check them
        against the code before acting, and if one holds a decision worth keeping, save
        it with create_memory. Nothing is written."""
        if not query.strip():
            raise InvalidArgument("query", "it is empty; ask a question or name a topic")
        settings = self.served.settings
        if settings is None:  # a bare store was served: no Claude Code folder is known
            raise TranscriptsOff()
        found = search_project(settings, query, limit=limit, skip_session=settings.session,
                               deadline=time.monotonic() + SEARCH_BUDGET_S)
        return TranscriptOutcome(tuple(TranscriptExcerpt(h.citation, h.session, h.line,
                                                         h.date, h.role, h.excerpt)
                                       for h in found.hits),
                                 found.files_searched, found.turns_searched, found.notices)

    @hints(read_only=True, idempotent=True)
    def read_memory(
        self,
        name: Name,
        start_line: Annotated[int | None, Field(
            ge=1, description="First line to read, the file's own numbering (a search "
                              "result's start_line).")] = None,
        start_byte: Annotated[int | None, Field(
            ge=0, description="First byte to read, instead of a line.")] = None,
        max_bytes: Annotated[int | None, Field(
            ge=1, description="Page size in bytes (default 16384).")] = None,
        revision: Annotated[str | None, Field(
            description="The revision you saw (from search_memory or an earlier read): if "
                        "the file changed since, status is revision_changed and no content "
                        "is returned.")] = None,
        layer: Layer = None,
    ) -> ReadOutcome:
        """Read a memory's body (the text after its frontmatter), a page at a time. To
        change it, send the whole body, edited, as write_memory's body, with the
        result's revision as expected_revision; a page that is not complete (not the
        whole body) goes back with its start_line and end_line. next_start_line/
        next_start_byte say where the next page starts. A result of layer "global" is
        written with layer "global" too."""
        if revision is not None:
            revision = checked_revision(revision)
        layer, store = self.served.for_read(name, layer)
        result = store.read(name, start_line=start_line, start_byte=start_byte,
                            max_bytes=max_bytes, revision=revision)
        if result.status == "ok":
            record_if_possible(store.state_dir, "read", [result.file], _now())
            self.served.seen(layer, {result.file: result.revision})
            self.served.views(layer).read(result)
        return ReadOutcome.of(result, layer)

    @hints(read_only=False, destructive=True)
    def write_memory(
        self,
        name: Name,
        expected_revision: Annotated[str | None, Field(
            description="The revision you read the file at (read_memory or search_memory), "
                        "in full or its first 8+ characters; null to create a new file.")],
        body: Annotated[str | None, Field(
            description="The new body, as read_memory returns it: the file's frontmatter "
                        "(description, type, tags…) stays byte for byte. Give body or "
                        "content, not both.")] = None,
        content: Annotated[str | None, Field(
            description="The whole new file, frontmatter block first (as the "
                        "sagemem://memories/ resource shows it), to change the frontmatter "
                        "too.")] = None,
        reason: Reason = None,
        start_line: Annotated[int | None, Field(
            ge=1, description="With end_line: body replaces only these lines, a "
                              "read_memory page's start_line and end_line (needed when "
                              "the page read was not complete).")] = None,
        end_line: Annotated[int | None, Field(
            ge=1, description="The last line body replaces, with start_line.")] = None,
        layer: Layer = None,
    ) -> WriteOutcome:
        """Replace a memory's body (body) or whole file (content), only if nobody changed
        it since you read it. If it changed, nothing is written: status is refused, with
        the conflict id and both revisions; read it again, merge your change into the new
        text, and write again with the new revision. A read_memory page that was not
        complete goes back with its start_line and end_line: the rest stays. To change
        one field, use set_memory_fields instead. A memory of the global layer needs
        layer "global" (the change holds in every project)."""
        expected = None if expected_revision in (None, "new") else \
            checked_revision(expected_revision)
        lines = line_range(start_line, end_line)
        layer, store = self.served.for_change(name, layer, create=expected is None)
        text, warnings, before = self._new_text(store, layer, name, expected, body, content,
                                                lines)
        try:
            memory, caps = write_within_caps(store, name, text, expected, reason=reason,
                                             writer=WRITER, by=WRITER)  # as CLI `write`
        except WriteRefused as exc:
            return refused(name, exc, expected, layer)
        return self._wrote(layer, "written" if expected else "created", memory, expected,
                           warnings + redaction_warnings(text) + room_made(caps),
                           whole=lines is None, before=before)

    def _new_text(self, store: MemoryStore, layer: str, name: str, expected: str | None,
                  body: str | None, content: str | None, lines: tuple[int, int] | None
                  ) -> tuple[str, list[str], str | None]:
        """The file's new text (``arguments.new_text``), against the file as it is now
        (the guarded write lands only if now is the revision the model read); its
        warnings; and that revision."""
        current = None
        if expected is not None:
            with contextlib.suppress(MemoryNotFound):  # deleted: the guard refuses it
                current = store.get(name)
        stale = current is not None and expected is not None and \
            not names_revision(expected, current.revision)
        views = self.served.views(layer)
        part = None if current is None else views.part_only(current.file, current.revision)
        whole = current is not None and views.shown_whole(current.file, current.revision)
        text, warnings = new_text(current, body, content, lines, stale=stale,
                                  shown_part=part, shown_whole=whole)
        return text, warnings, None if current is None else current.revision

    @hints(read_only=False, destructive=True)
    def set_memory_fields(
        self,
        name: Name,
        fields: Annotated[dict[str, Any], Field(
            description="Frontmatter fields to set, e.g. {\"description\": \"…\", "
                        "\"tags\": [\"a\"], \"invalid_at\": \"2026-12-31\"}; null removes "
                        "a field. Other fields and the body stay as they are.")],
        reason: Reason = None,
        layer: Layer = None,
    ) -> WriteOutcome:
        """Set some frontmatter fields of a memory (description, tags, aliases, type,
        baseline, valid_at, invalid_at, superseded_by…) without rewriting it. No revision
        is needed: only a field someone else changed meanwhile is refused."""
        from ..files.edit import field_value

        values = field_values(fields)
        layer, store = self.served.for_change(name, layer)
        memory = store.get(name)
        seen = {key: field_value(memory.text, key, memory.file) for key in values}
        try:
            saved = store.write(memory.file, fields=values, expected_fields=seen,
                                reason=reason, writer=WRITER)
        except WriteRefused as exc:
            return refused(memory.file, exc, memory.revision, layer)
        from ..writes.redact import fields_notice  # a key can name a secret: its whole value

        notice = fields_notice(values)
        return self._wrote(layer, "written", saved, memory.revision,
                           set_warnings(saved.file, values)
                           + ([notice] if notice else []), whole=False,
                           before=memory.revision)

    @hints(read_only=False, destructive=True)
    def create_memory(
        self,
        type: Annotated[Literal["user", "feedback", "project", "reference"], Field(
            description="user: who the user is and their preferences; feedback: a "
                        "correction or confirmed approach; project: work, decisions, "
                        "deadlines; reference: where something lives outside the project.")],
        name: Annotated[str, Field(description="A short title, e.g. 'Integration tests "
                                               "hit a real Postgres'.")],
        description: Annotated[str, Field(description="One line: what this memory says "
                                                      "(search and the index show it).")],
        body: Annotated[str, Field(description="The memory itself, in Markdown. For "
                                               "feedback: the rule, then Why: and How to "
                                               "apply: lines.")],
        tags: Annotated[list[str] | None, Field(description="A few topic tags.")] = None,
        aliases: Annotated[list[str] | None, Field(
            description="Other wordings that should find it (any language).")] = None,
        when: Annotated[str | None, Field(
            description="The occasion it is about, for notes that recur under one title: "
                        "a date (2026-12-01) or a few words. Same title, another when: "
                        "another memory.")] = None,
        distinct: Annotated[bool, Field(
            description="true only after a 'similar' answer, when this is another thing "
                        "than the close match: save it as a new memory.")] = False,
        layer: CreateLayer = "project",
    ) -> WriteOutcome:
        """Save a memory by its title. If a memory already has this title (and when),
        or had it before a rename (a warning says so), it is updated: status updated,
        its body replaced by this one (write the whole memory, not only what is new),
        its other fields kept unless given. If one has a close title, nothing is
        written: status similar names it — update that one if it is the same thing, or
        call again with distinct=true if not (when several memories have this very
        title, the answer names them: update the one you mean). Otherwise status
        created: <type>_<slug>.md, listed in MEMORY.md. layer "global" saves a habit or
        preference that holds in every project (titles are matched within that layer);
        the default is this project. Never store secrets (passwords, tokens, keys) —
        store where they are kept."""
        store = self.served.for_create(layer)
        try:
            result, caps = with_room(store, lambda: store.remember(
                type=type, title=name, body=body, description=description, when=when,
                tags=tags, aliases=aliases, distinct=distinct, writer=WRITER), by=WRITER)
        except WriteRefused as exc:
            return refused(name, exc, None, layer)
        memory = result.memory
        if result.action == "similar":
            return WriteOutcome("similar", memory.file, memory.revision, title=memory.title,
                                score=round(result.score, 1), message=same_title(result),
                                layer=layer)
        status: Literal["created", "updated", "unchanged"] = result.action
        outcome = self._wrote(layer, status, memory, result.previous_revision,
                              former_title(result, name) + redaction_warnings(
                                  name, description or "", body, *(tags or ()),
                                  *(aliases or ())) + room_made(caps), whole=True)
        if result.kind != "former_title":
            return outcome
        return dataclasses.replace(outcome, title=memory.title)

    @hints(read_only=False, destructive=True, idempotent=True)
    def archive_memory(
        self,
        name: Name,
        reason: Annotated[str, Field(description="Why it no longer belongs (required; kept "
                                                 "in the archive log).")],
        layer: Layer = None,
    ) -> ArchiveOutcome:
        """Move a memory that is wrong or obsolete into archive/ (nothing is deleted; the
        user can restore it). Locked memories are refused; a global memory needs layer
        "global"."""
        if not reason.strip():
            raise InvalidArgument("reason", "archiving needs a reason: why it no longer belongs")
        layer, store = self.served.for_change(name, layer)
        result = archive_memory(store, name, reason, by=WRITER)
        flag = " --global" if layer == GLOBAL else ""
        return ArchiveOutcome(result.file, reason.strip(), result.index_changed,
                              f"archived {result.file} (restore: sagemem restore{flag} "
                              f"{result.file})", layer)

    @hints(read_only=True, idempotent=True)
    def list_memories(
        self,
        type: Annotated[Literal["user", "feedback", "project", "reference"] | None,
                        Field(description="Only this type.")] = None,
        tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
    ) -> MemoryList:
        """List the memories (not archived) of both layers: file, type, description,
        layer (global: a habit that holds in every project). To find what answers a
        question, search_memory is better."""
        entries, unreadable = [], []
        for layer, store in self.served.layers.stores():
            listing = store.list(include_archived=False, type=type, tag=tag)
            entries += [memory_entry(m, layer) for m in listing.memories]
            mark = "[global] " if layer == GLOBAL else ""
            unreadable += [f"{mark}{e.file}: {e.error}" for e in listing.errors]
        return MemoryList(tuple(entries), tuple(unreadable))

    @hints(read_only=True, idempotent=True)
    def list_conflicts(self) -> ConflictList:
        """The open conflicts of both layers: writes that were refused (with both sides
        kept) and contradictions between memories. Resolve one by reading both memories
        and writing the merged text (in the conflict's layer)."""
        return ConflictList(tuple(conflict_entry(c, layer)
                                  for layer, store in self.served.layers.stores()
                                  for c in list_conflicts(store.state_dir, status="open")))

    @hints(read_only=False)
    def record_use(self, name: Name, layer: Layer = None) -> UseOutcome:
        """Say that you relied on a memory in your answer (it counts in the access
        ledger the user sees, in the memory's own layer; it never changes ranking)."""
        layer, store = self.served.for_read(name, layer)  # a count, not an edit
        memory = store.get(name)
        warnings = record_if_possible(store.state_dir, "use", [memory.file], _now())
        return UseOutcome(memory.file, True, tuple(warnings), layer)

    @hints(read_only=True, idempotent=True)
    def audit(self) -> AuditOutcome:
        """Check the memory folder for problems: broken frontmatter, MEMORY.md lines that
        point nowhere or are missing, dead links, near-duplicates, open conflicts."""
        from ..audit.report import audit

        report = audit(self.store)
        return AuditOutcome(report.memories, len(report.problems), len(report.hints),
                            tuple(AuditFinding(f.category, f.severity, f.file, f.line,
                                               f.message) for f in report.findings))

    def _wrote(self, layer: str, status: Literal["written", "created", "updated",
                                                 "unchanged"],
               memory: Memory, previous: str | None, warnings: list[str] | None = None, *,
               whole: bool, before: str | None = None) -> WriteOutcome:
        """A write that landed in ``layer``; the model knows the text it wrote, so it has
        seen it (the whole body when it sent it, ``whole``; else what it saw ``before``)."""
        problems = [f"{p.field}: {p.message}" for p in memory.problems]
        unrecorded = self.served.seen(layer, {memory.file: memory.revision})
        self.served.views(layer).carry(memory.file, before, memory.revision, whole=whole)
        return WriteOutcome(status, memory.file, memory.revision, previous,
                            warnings=tuple([*(warnings or []), *problems, *unrecorded]),
                            layer=layer)

    def tools(self) -> list[Callable[..., Any]]:
        """The tool methods, in the order ``tools/list`` shows them."""
        return [getattr(self, name) for name in TOOL_NAMES]


TOOL_NAMES = ("search_memory", "search_transcripts", "read_memory", "write_memory",
              "set_memory_fields", "create_memory", "archive_memory", "list_memories",
              "list_conflicts", "record_use", "audit", "dream_plan", "dream_apply")


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["TOOL_NAMES", "MemoryTools", "SagememError"]
