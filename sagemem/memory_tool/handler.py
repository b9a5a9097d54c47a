"""MemoryToolHandler: the memory tool's six commands as guarded operations on a store.

``handle(tool_input)`` takes the ``input`` of a ``memory`` tool_use block and returns the
string the model reads, success or error alike: nothing raises out of it, because an
exception would end the agent's turn where an error string lets the model try again.

Each command reads what it changes and writes through the store's guard with the
revision it just read (``store.write(..., expected_revision=...)``; creating with None),
so a writer that got in between makes the edit refused, recorded as a conflict and
reported by id — never lost, never overwritten. Every text written passes through
``_outgoing`` first, the redactor (``writes/redact.py``): the answer then says which
kinds of secret were replaced, and what the model views next is what the disk holds.
``delete`` archives, ``rename`` never overwrites (``history/rename.py``), and MEMORY.md
is read-only here: sagemem keeps it in step with the files (``create`` adds a memory's
line, ``delete`` drops it, ``rename`` retargets it, an edited description carries over).

``view``, ``str_replace`` and ``insert`` work on the text the model wrote
(``view.py``): the frontmatter block a plain ``create`` got is kept on disk and out of
sight (which files have one is ``generated.py``'s record), so every line number is the
model's; an edit whose result would break the frontmatter is refused, nothing written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import datetime, timezone

from ..errors import (
    MemoryExists,
    MemoryLocked,
    MemoryNotFound,
    NameCollision,
    NearDuplicate,
    SagememError,
    StaleRevision,
    UnresolvedMerge,
)
from ..files.controls import visible, visible_name
from ..files.edit import render_new
from ..files.indexfile import hook_matches
from ..files.memory import Memory, file_lines, parse
from ..files.paths import INDEX_FILE, lstat_regular, name_key
from ..history.archive import archive_memory
from ..history.ledger import record_if_possible
from ..history.rename import rename_memory
from ..store import MemoryStore
from . import messages, render, text
from .generated import is_generated, move_generated, set_generated
from .params import Input, view_range
from .paths import Refusal, ToolPath
from .view import ModelView, damage, follow_description, model_view

WRITER = "memory-tool"
"""The writer every conflict record, archive line and ledger count of this tool names."""
DELETE_REASON = "deleted through the memory tool"


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class MemoryToolHandler:
    """The client side of Anthropic's memory tool (``memory_20250818``) over ``store``.

    ``clock`` gives the time of archive lines, ledger counts and a new memory's
    ``updated`` date (its local date)."""

    def __init__(self, store: MemoryStore, *,
                 clock: Callable[[], datetime] = _utc_now) -> None:
        self.store = store
        self._clock = clock
        self._notices: list[str] = []  # what one command's answer adds (redactions)
        self._commands: dict[str, Callable[[Input], str]] = {
            "view": self._view, "create": self._create, "str_replace": self._str_replace,
            "insert": self._insert, "delete": self._delete, "rename": self._rename,
        }

    def handle(self, tool_input: Mapping[str, object]) -> str:
        """Run one memory-tool command; the result (or the error) as the model reads it."""
        self._notices = []
        try:
            result = "\n".join([self._dispatch(tool_input), *self._notices])
        except Refusal as refusal:
            result = refusal.message
        except SagememError as exc:
            result = "Error: " + " ".join(str(exc).splitlines())
        except Exception as exc:  # the tool's boundary: a string for the model, never a traceback
            problem = " ".join(f"{type(exc).__name__}: {exc}".splitlines())
            result = messages.UNEXPECTED.format(problem=problem)
        return _model_safe(result)

    def _dispatch(self, tool_input: Mapping[str, object]) -> str:
        if not isinstance(tool_input, Mapping):
            raise Refusal("Error: the tool input is an object with a `command` and its "
                          "parameters")
        command = tool_input.get("command")
        run = self._commands.get(command) if isinstance(command, str) else None
        if run is None:
            raise Refusal(messages.UNKNOWN_COMMAND.format(command=visible_name(str(command))))
        assert isinstance(command, str)
        return run(Input(tool_input, command, self.store.reserved))

    # -- the commands ---------------------------------------------------------------

    def _view(self, given: Input) -> str:
        path = given.path("path")
        if path.is_root:
            return self._listing()
        if path.is_index:
            content = self._index_text(path)
        else:
            memory = self._memory(path, messages.VIEW_NOT_FOUND)
            record_if_possible(self.store.state_dir, "read", [memory.file], self._clock())
            content = self._model_view(memory).text
        lines = file_lines(content)
        start, end = view_range(given.values.get("view_range"), len(lines))
        return render.file_view(path.shown, lines, start, end)

    def _create(self, given: Input) -> str:
        path = given.path("path")
        file_text = given.text("file_text")
        file = self._writable(path, messages.ALREADY_EXISTS)
        if self.store.existing_name(file) is not None:
            raise Refusal(messages.ALREADY_EXISTS.format(path=path.shown))
        content, notes = file_text, []
        generated = not text.has_frontmatter(file_text)
        why = None if generated else damage("", file_text, keep_block=False)
        if why is not None:  # a memory must come out of it, as out of every edit
            raise Refusal(messages.CREATE_BREAKS_FRONTMATTER.format(path=path.shown, why=why))
        if generated:
            fields = text.new_memory_fields(file, file_text, self._clock().astimezone().date())
            content = render_new(fields, "") + file_text
            notes.append(messages.FRONTMATTER_NOTE)
        self._refuse_near_duplicate(path, content)
        set_generated(self.store, file, generated)  # before the file: never seen whole
        try:
            self._save(path, content, None, "created through the memory tool")
        except BaseException:
            with suppress(SagememError):  # the name stays free; its record goes with it
                set_generated(self.store, file, False)
            raise
        return "\n".join([messages.CREATED.format(path=path.shown), *notes])

    def _str_replace(self, given: Input) -> str:
        path = given.path("path")
        old, new = given.text("old_str"), given.text("new_str")
        self._writable(path, messages.REPLACE_NOT_FOUND)
        if not old:
            raise Refusal(messages.EMPTY_OLD_STR)
        memory = self._memory(path, messages.REPLACE_NOT_FOUND)
        seen = self._model_view(memory)
        found = text.occurrence_lines(seen.text, old)
        if len(found) != 1:
            template = messages.MULTIPLE if found else messages.NOT_VERBATIM
            raise Refusal(template.format(old_str=visible(old), path=path.shown,
                                          lines=", ".join(map(str, dict.fromkeys(found)))))
        offset = seen.text.find(old)
        edited = seen.text[:offset] + new + seen.text[offset + len(old):]
        saved = self._save_edit(path, memory, seen, edited, messages.REPLACE_BREAKS_FRONTMATTER,
                                "str_replace through the memory tool")
        first, last = text.changed_lines(edited, offset, new)
        return "\n".join([render.snippet(file_lines(self._model_view(saved).text), first, last),
                          *self._follow_description(memory, saved)])

    def _insert(self, given: Input) -> str:
        path = given.path("path")
        line = given.integer("insert_line")
        insert_text = given.text("insert_text", also="new_str")  # the text editor's name
        self._writable(path, messages.INSERT_NOT_FOUND)
        memory = self._memory(path, messages.INSERT_NOT_FOUND)
        seen = self._model_view(memory)
        n_lines = text.line_count(seen.text)
        if not 0 <= line <= n_lines:
            raise Refusal(messages.INVALID_INSERT_LINE.format(line=line, n_lines=n_lines))
        edited = text.insert_at(seen.text, line, insert_text)
        saved = self._save_edit(path, memory, seen, edited, messages.INSERT_BREAKS_FRONTMATTER,
                                "insert through the memory tool")
        return "\n".join([messages.INSERTED.format(path=path.shown),
                          *self._follow_description(memory, saved)])

    def _delete(self, given: Input) -> str:
        path = given.path("path")
        if path.is_root:
            raise Refusal(messages.DELETE_ROOT)
        file = self._existing(path)
        try:
            archive_memory(self.store, file, DELETE_REASON, by=WRITER, now=self._clock())
        except MemoryLocked:
            raise Refusal(messages.LOCKED.format(path=path.shown, done="deleted")) from None
        except NameCollision:
            raise Refusal(f"Error: {path.shown} was not deleted: sagemem's archive already "
                          f"holds a memory named {visible_name(file)}. Rename it to a new "
                          "name first, then delete that.") from None
        with suppress(SagememError):  # a record left behind only names a file gone
            set_generated(self.store, file, False)
        return f"{messages.DELETED.format(path=path.shown)} " \
               f"{messages.ARCHIVED_NOTE.format(file=visible_name(file))}"

    def _rename(self, given: Input) -> str:
        old, new = given.path("old_path"), given.path("new_path")
        for path in (old, new):
            if path.is_root:
                raise Refusal(f"Error: {path.shown}: the folder itself is not renamed; "
                              "rename the /memories/<name>.md files in it")
        source = self._existing(old)
        new_file = self._writable(new, messages.PATH_NOT_FOUND)
        taken = self.store.existing_name(new_file)
        if taken is not None and name_key(taken) == name_key(source):
            raise Refusal(f"Error: {new.shown} names the same memory as {old.shown} "
                          "(sagemem compares names ignoring case); nothing was renamed")
        if taken is not None:
            raise Refusal(messages.DESTINATION_EXISTS.format(new_path=new.shown))
        try:
            rename_memory(self.store, source, new_file, writer=WRITER)
        except MemoryLocked:
            raise Refusal(messages.LOCKED.format(path=old.shown, done="renamed")) from None
        except NameCollision:  # taken between the check and the move
            raise Refusal(messages.DESTINATION_EXISTS.format(new_path=new.shown)) from None
        return "\n".join([messages.RENAMED.format(old_path=old.shown, new_path=new.shown),
                          *self._carry_record(source, new_file)])

    # -- reading ----------------------------------------------------------------------

    def _listing(self) -> str:
        """The live memories and MEMORY.md with their sizes: regular files only, since
        a symlink or a device is nothing the tool will read."""
        files = []
        for name in sorted([*self.store.files(), INDEX_FILE]):
            try:
                files.append((name, lstat_regular(self.store.directory / name).st_size))
            except SagememError:
                continue
        return render.listing(files)

    def _index_text(self, path: ToolPath) -> str:
        content, revision = self.store.read_index()
        if revision is None:  # no MEMORY.md: read_index gave the starter text
            raise Refusal(messages.VIEW_NOT_FOUND.format(path=path.shown))
        return content

    def _model_view(self, memory: Memory) -> ModelView:
        """``memory`` as the model wrote it (``view.py``)."""
        return model_view(memory, is_generated(self.store, memory.file))

    def _memory(self, path: ToolPath, missing: str) -> Memory:
        assert path.file is not None
        try:
            return self.store.get(path.file)
        except MemoryNotFound:
            raise Refusal(missing.format(path=path.shown)) from None

    def _existing(self, path: ToolPath) -> str:
        """The on-disk name of the memory ``path`` names, for a move (never MEMORY.md)."""
        file = self._writable(path, messages.PATH_NOT_FOUND)
        on_disk = self.store.existing_name(file)
        if on_disk is None:
            raise Refusal(messages.PATH_NOT_FOUND.format(path=path.shown))
        return on_disk

    def _writable(self, path: ToolPath, missing: str) -> str:
        """The memory file ``path`` names; the folder is refused with ``missing`` (the
        documented answer for a directory), MEMORY.md as read-only."""
        if path.file is None:
            raise Refusal(missing.format(path=path.shown))
        if path.is_index:
            raise Refusal(messages.INDEX_READ_ONLY.format(path=path.shown))
        return path.file

    # -- writing ----------------------------------------------------------------------

    def _save_edit(self, path: ToolPath, memory: Memory, seen: ModelView, edited: str,
                   breaks: str, reason: str) -> Memory:
        """Save the model's text ``edited`` in ``memory``'s file, unless the result would
        break its frontmatter (``breaks`` says so, nothing written)."""
        content = seen.file_text(edited)
        why = damage(memory.text, content, keep_block=bool(seen.hidden))
        if why is not None:
            raise Refusal(breaks.format(path=path.shown, why=why))
        content = follow_description(memory, seen, edited, content)
        return self._save(path, content, memory.revision, reason, seen.hidden_lines)

    def _save(self, path: ToolPath, content: str, revision: str | None, reason: str,
              hidden_lines: int = 0) -> Memory:
        """Write through the store's guard (``revision`` None: create); a refusal
        becomes the message naming its conflict record, a line number the model's."""
        assert path.file is not None
        try:
            from ..history.caps import with_room  # loaded only by a write

            file, text = path.file, self._outgoing(content)
            memory, caps = with_room(self.store, lambda: self.store.write(
                file, text, expected_revision=revision, writer=WRITER, reason=reason),
                by=WRITER)
            self._notices += [f"Note: {gone} was archived to make room (the folder is at "
                              "its hard cap of memories)." for gone in caps.archived_files]
            return memory
        except MemoryExists as exc:
            message = messages.ALREADY_EXISTS.format(path=path.shown)
            raise Refusal(message + _kept_in(exc.conflict_id)) from None
        except StaleRevision as exc:
            message = messages.STALE.format(path=path.shown)
            raise Refusal(message + _kept_in(exc.conflict_id)) from None
        except UnresolvedMerge as exc:
            line = exc.line - hidden_lines if exc.line > hidden_lines else exc.line  # the model's
            message = messages.MERGE_MARKER.format(path=path.shown, line=line)
            raise Refusal(message + _kept_in(exc.conflict_id)) from None

    def _refuse_near_duplicate(self, path: ToolPath, content: str) -> None:
        """A create whose title another memory has, or is close to, is refused as
        ``sagemem new`` refuses it (``writes/remember.refuse_near_duplicate``)."""
        from ..writes.remember import refuse_near_duplicate

        assert path.file is not None
        drafted = parse(content.encode("utf-8"), path.file)
        try:
            refuse_near_duplicate(self.store, drafted.title, when=drafted.when,
                                  description=drafted.description or None)
        except NearDuplicate as near:
            how = "the same title" if near.score >= 100 else f"similarity {near.score:.0f}"
            raise Refusal(messages.NEAR_DUPLICATE.format(
                path=path.shown, other=f"/memories/{visible_name(near.file)}",
                title=repr(visible(near.existing_title)), how=how)) from None

    def _outgoing(self, content: str) -> str:
        """Every text the memory tool writes passes here, and nowhere else: redacted
        (unless its frontmatter says ``redact: false``), the notice kept for the answer.
        MEMORY.md lines are made from what passed."""
        from ..writes.redact import redact_memory, redaction_notice

        notice = redaction_notice(content)
        if notice:
            self._notices.append(f"Note: {notice}.")
        return redact_memory(content).text

    def _carry_record(self, file: str, new_file: str) -> list[str]:
        """A renamed memory keeps what the model sees of it (``generated.py``)."""
        try:
            move_generated(self.store, file, new_file)
        except SagememError as exc:
            return [f"Note: sagemem could not carry over which of its lines are hidden "
                    f"({exc}); view it before editing."]
        return []

    def _follow_description(self, before: Memory, after: Memory) -> list[str]:
        """An edited description carries over to the MEMORY.md line that still said the
        old one (a line a person reworded is theirs and stays)."""
        if before.description == after.description:
            return []
        try:
            hook = self.store.index_hook(after.file)
            if hook is not None and hook_matches(hook, before.description):
                self.store.set_index_hook(after.file, after.description)
        except SagememError as exc:
            return [f"Its MEMORY.md line still says the old description ({exc})."]
        return []


def _kept_in(conflict_id: str | None) -> str:
    """Where a refused write's text is kept: the conflict record a person resolves."""
    if conflict_id is None:
        return ""
    return f" Both versions are kept in sagemem conflict {conflict_id}."


def _model_safe(result: str) -> str:
    """Control characters written out, and always encodable as UTF-8 (a lone surrogate
    from a file name becomes ``\\udcff``)."""
    return visible(result).encode("utf-8", "backslashreplace").decode("utf-8")
