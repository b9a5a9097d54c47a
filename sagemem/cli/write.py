"""The writing commands: guarded ``write``, ``edit`` and ``set``, and the conflict queue.

Every write states the revision it was based on; a refusal exits 1 naming the conflict
record that keeps both sides (``sagemem conflicts show ID``). They register on the one
``app`` of ``base.py``; ``main.py`` imports
this module.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from ..config import JSON_VERSION
from ..errors import FileChangedDuringRead, MemoryNotFound, SagememError, WriteFailed
from ..files.fields import TYPES
from ..files.memory import Memory
from ..files.paths import with_suffix
from ..store import MemoryStore
from ..writes import conflicts
from ..writes import resolve as conflict_resolve
from .base import JsonOption, app, echo, echo_json, echo_lines, missing, stdin_text
from .output import conflict_json, conflict_text, conflicts_text, memory_json

WRITER = "cli"
NEW = "new"
MIN_REVISION_PREFIX = 8
_INT = re.compile(r"[+-]?\d+")


def _written(memory: Memory, verb: str, as_json: bool) -> None:
    if as_json:
        echo_json(memory_json(memory, date.today()))
    else:
        echo(f"{verb}  {memory.file}  (revision {memory.revision[:12]})")
    for problem in memory.problems:  # written as asked, but the reader had to default
        where = f"line {problem.line}: " if problem.line else ""
        echo(f"warning: {memory.file}: {where}{problem.field}: {problem.message}",
                   err=True)


def _expected(current: Memory | None, expect: str) -> str | None:
    """``--expect``: a revision (a prefix of 8+ characters of the current one is enough),
    or ``new`` to create."""
    if expect == NEW:
        return None
    if current is not None and current.revision.startswith(expect):
        return current.revision
    return expect


@app.command()
def write(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    source: Annotated[str | None, typer.Argument(help="- to read the new text from stdin.")
                      ] = None,
    from_file: Annotated[Path | None, typer.Option(
        "--from", help="Read the new text from this file (- for stdin).")] = None,
    expect: Annotated[str, typer.Option(
        "--expect", help="The revision you read (`show` prints it), or 'new' to create.")
    ] = "",
    reason: Annotated[str | None, typer.Option("--reason", help="Why (kept in a conflict).")
                      ] = None,
    as_json: JsonOption = False,
) -> None:
    """Replace a memory's text, only if it is still at --expect; otherwise nothing is
    written and a conflict record keeps both sides."""
    if (source == "-") == (from_file is not None) or source not in (None, "-"):
        raise typer.BadParameter("give the text as --from FILE or - (stdin), one of them",
                                 param_hint="--from")
    if not expect:
        raise missing("--expect", f"State the revision you read (`sagemem show NAME` prints "
                                  f"it) or {NEW}.")
    if (expect != NEW and len(expect) < MIN_REVISION_PREFIX):
        raise typer.BadParameter(f"state the revision you read ({MIN_REVISION_PREFIX}+ "
                                 f"characters; `sagemem show NAME` prints it) or {NEW}",
                                 param_hint="--expect")
    text = _read_text(from_file) if from_file is not None else stdin_text("-")
    store = ctx.obj.store()
    current = _current(store, name)
    if current is None and expect != NEW and store.existing_name(with_suffix(name)) is None:
        raise MemoryNotFound(with_suffix(name), store.directory)  # a typo, not a conflict
    memory = store.write(name, text, _expected(current, expect), reason=reason, writer=WRITER)
    if expect == NEW:
        store.index_memory(memory)  # a new memory gets its MEMORY.md line, as with `new`
    _written(memory, "written", as_json)


def _current(store: MemoryStore, name: str) -> Memory | None:
    """Only to expand a revision prefix: the write re-checks under the lock anyway."""
    try:
        return store.get(name)
    except (MemoryNotFound, FileChangedDuringRead):
        return None


def _read_text(path: Path) -> str:
    if str(path) == "-":  # the convention people's hands know; a file named - is ./-
        return stdin_text("--from")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}",
                                 param_hint="--from") from None
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"{path} is not UTF-8 text (bad byte at offset {exc.start})",
                                 param_hint="--from") from None


@app.command()
def edit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    reason: Annotated[str | None, typer.Option("--reason", help="Why (kept in a conflict).")
                      ] = None,
    as_json: JsonOption = False,
) -> None:
    """Open $EDITOR on a copy, then write it back only if the memory did not change
    meanwhile (otherwise a conflict record keeps both sides)."""
    store = ctx.obj.store()
    memory = store.get(name)
    with tempfile.TemporaryDirectory(prefix="sagemem-edit-") as scratch:
        copy = Path(scratch) / memory.file
        copy.write_bytes(memory.text.encode("utf-8"))
        _run_editor(copy)
        text = _read_text(copy)
    if text == memory.text:
        echo(f"unchanged  {memory.file}", err=True)
        return
    try:
        saved = store.write(memory.file, text, memory.revision, reason=reason or "sagemem edit",
                            writer=WRITER, conflict_kind="external_change")
    except SagememError as exc:
        kept = _keep_edit(store, memory.file, text)  # the user's typing is never thrown away
        raise WriteFailed(kept, f"{exc}; your edited text is kept here") from exc
    _written(saved, "written", as_json)


def _keep_edit(store: MemoryStore, file: str, text: str) -> Path:
    """Save an edit that could not be written, under the state directory (or /tmp)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    for folder in (store.state_dir / "edits", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{stamp}-{file}"
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    return Path(tempfile.gettempdir())


def _run_editor(path: Path) -> None:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = [*shlex.split(command), str(path)]
    except ValueError as exc:
        raise WriteFailed(path, f"cannot read EDITOR={command!r} ({exc}); fix it") from None
    try:
        status = subprocess.run(argv, check=False).returncode
    except OSError as exc:
        raise WriteFailed(path, f"cannot run the editor {argv[0]!r} ({exc.strerror}); "
                                "set EDITOR") from None
    if status != 0:
        raise WriteFailed(path, f"the editor exited with status {status}")


@app.command("set")
def set_(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    assignments: Annotated[list[str], typer.Argument(
        help="key=value: true/false, integers, YYYY-MM-DD, [a, b] lists; key= removes.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Why (kept in a conflict).")
                      ] = None,
    as_json: JsonOption = False,
) -> None:
    """Set frontmatter fields; only those fields change (a guarded write)."""
    fields = dict(_assignment(a) for a in assignments)
    store = ctx.obj.store()
    memory = store.get(name)
    saved = store.write(memory.file, fields=fields, expected_revision=memory.revision,
                        reason=reason, writer=WRITER)
    _written(saved, "set", as_json)


def _assignment(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"{text!r} is not key=value", param_hint="KEY=VALUE")
    key, value = key.strip(), parse_value(raw.strip())
    problem = _field_problem(key, value)
    if problem:
        raise typer.BadParameter(f"{key}: {problem}", param_hint="KEY=VALUE")
    return key, value


DATE_FIELDS = ("updated", "valid_at", "invalid_at")


def _field_problem(key: str, value: object) -> str | None:
    """Known fields must hold what the reader accepts, or the edit would be silently
    ignored (an ``invalid_at`` that is no date leaves the memory valid)."""
    if value is None:
        return None
    if key in DATE_FIELDS and not isinstance(value, date):
        return "must be a date, YYYY-MM-DD"
    if key in ("type", "metadata.type") and value not in TYPES:
        return f"must be one of {', '.join(TYPES)}"
    if key in ("tags", "aliases") and not isinstance(value, list):
        return "must be a list, [a, b]"
    return None


def parse_value(raw: str) -> object:
    """A ``set`` value: true/false, an integer (only one written plainly: ``+44``, ``0123``
    stay text), a date, a ``[a, b]`` list of texts (YAML flow syntax, quotes allowed),
    else text; empty removes the field."""
    if raw == "":
        return None
    if raw in ("true", "false"):
        return raw == "true"
    if _INT.fullmatch(raw) and str(int(raw)) == raw:
        return int(raw)
    if raw.startswith("[") and raw.endswith("]"):
        return _flow_list(raw)
    try:
        return date.fromisoformat(raw) if len(raw) == 10 else raw
    except ValueError:
        return raw


def _flow_list(raw: str) -> object:
    """``[a, "b, c"]`` as YAML reads it; items kept as the text they were written as."""
    from frontmatter.default_handlers import YAMLHandler  # the reader's own safe loader

    try:
        loaded = YAMLHandler().load(raw)
    except Exception:  # any YAML error: the value stays the text it was
        return raw
    if not isinstance(loaded, list) or not all(
            isinstance(v, (str, int, float, bool, date)) for v in loaded):
        return raw
    return [v if isinstance(v, str) else _plain_text(v) for v in loaded]


def _plain_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.isoformat() if isinstance(value, date) else str(value)


# -- the conflict queue -------------------------------------------------------------------

conflicts_app = typer.Typer(no_args_is_help=True,
                            help="The conflict queue: refused writes and contradictions.")
app.add_typer(conflicts_app, name="conflicts")
IdArgument = Annotated[str, typer.Argument(help="Conflict id (a unique prefix is enough).")]


@conflicts_app.command("list")
def conflicts_list(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option(
        "--status", help="Only open or resolved records.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Every conflict record, oldest first: id, status, kind, file."""
    if status not in (None, "open", "resolved"):
        raise typer.BadParameter("must be open or resolved", param_hint="--status")
    state_dir = ctx.obj.settings().state_dir
    records = conflicts.list_conflicts(state_dir, status)
    if as_json:
        echo_json({"version": JSON_VERSION,
                   "conflicts": [conflict_json(c, full=False) for c in records]})
    else:
        echo_lines(conflicts_text(records))
    for path in conflicts.unreadable_records(state_dir):
        echo(f"warning: {path} is not a readable conflict record; inspect or delete it",
                   err=True)


@conflicts_app.command("show")
def conflicts_show(ctx: typer.Context, conflict_id: IdArgument,
                   as_json: JsonOption = False) -> None:
    """One record: disk and mine side by side, and a unified diff."""
    record = conflicts.load(ctx.obj.settings().state_dir, conflict_id)
    if as_json:
        echo_json(conflict_json(record))
    else:
        echo_lines(conflict_text(record, shutil.get_terminal_size((80, 24)).columns))


@conflicts_app.command("resolve")
def conflicts_resolve(
    ctx: typer.Context,
    conflict_id: IdArgument,
    keep: Annotated[str | None, typer.Option(
        "--keep", help="disk: leave the file; mine: write your version (guarded).")] = None,
    invalidate: Annotated[str | None, typer.Option(
        "--invalidate", help="For a contradiction: the memory that no longer holds.")] = None,
    superseded_by: Annotated[str | None, typer.Option(
        "--superseded-by", help="The memory that replaces it.")] = None,
    undo: Annotated[bool, typer.Option("--undo", help="Take an --invalidate back.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Apply your decision: --keep disk|mine, or --invalidate NAME [--superseded-by OTHER]."""
    if (keep is None) == (invalidate is None):
        raise typer.BadParameter("give --keep disk|mine or --invalidate NAME", param_hint="--keep")
    if keep is not None and keep not in ("disk", "mine"):
        raise typer.BadParameter("must be disk or mine", param_hint="--keep")
    if undo and keep is not None:
        raise typer.BadParameter("--undo takes back an --invalidate, not a --keep",
                                 param_hint="--undo")
    store = ctx.obj.store()
    if keep is not None:
        record = conflict_resolve.resolve_keep(store, conflict_id, keep)
    else:
        assert invalidate is not None
        record = conflict_resolve.resolve_invalidate(store, conflict_id, invalidate,
                                                     superseded_by, undo=undo)
    if as_json:
        echo_json(conflict_json(record, full=False))
    else:
        echo(f"{record.status}  {record.id}  ({record.decision}, "
                   f"revision {str(record.data.get('appliedVersion'))[:12]})")


@conflicts_app.command("delete")
def conflicts_delete(
    ctx: typer.Context,
    conflict_id: IdArgument,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
) -> None:
    """Remove a record without applying anything (asks first unless --yes)."""
    store = ctx.obj.store()
    record = conflicts.load(store.state_dir, conflict_id)
    if not yes:
        typer.confirm(f"delete {record.id} ({record.kind}, {record.status})?", abort=True)
    conflicts.delete(store, record.id)
    echo(f"deleted  {record.id}")


@conflicts_app.command("contradict")
def conflicts_contradict(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(help="One memory.")],
    b: Annotated[str, typer.Argument(help="The memory it contradicts.")],
    note: Annotated[str, typer.Option("--note", help="What they disagree on.")],
    as_json: JsonOption = False,
) -> None:
    """Record that two memories contradict each other; neither is injected until resolved."""
    record = conflicts.contradict(ctx.obj.store(), a, b, note, writer=WRITER)
    if as_json:
        echo_json(conflict_json(record))
    else:
        echo(f"open  {record.id}  ({' <> '.join(record.memories)})")
