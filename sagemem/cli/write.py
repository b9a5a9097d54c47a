"""The writing commands: guarded ``write``, ``edit`` and ``set`` (the conflict queue's
commands are in ``conflicts.py``).

Every write states the revision it was based on; a refusal exits 1 naming the conflict
record that keeps both sides (``sagemem conflicts show ID``). They register on the one
``app`` of ``base.py``; ``main.py`` imports
this module.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer

from ..errors import EditorFailed, MemoryNotFound, SagememError, WriteFailed
from ..files import indexfile
from ..files.body import check_keeps_frontmatter
from ..files.fields import field_problem, set_warnings
from ..files.keep import keep_text
from ..files.memory import Memory
from ..files.paths import with_suffix
from ..store import MemoryStore
from ..writes.redact import redact_memory
from . import base as cli
from .base import (
    GlobalOption,
    JsonOption,
    ReasonOption,
    app,
    echo,
    echo_json,
    echo_lines,
    missing,
    revision_param,
    stdin_text,
)
from .output import archived_text, written_json

if TYPE_CHECKING:
    from ..history.caps import CapReport

WRITER = "cli"
NEW = "new"
EDITS_DIR = "edits"  # <state>/edits/: edited texts that could not be written
_INT = re.compile(r"[+-]?\d+")


def _written(memory: Memory, verb: str, as_json: bool, warnings: list[str] | None = None,
             caps: CapReport | None = None) -> None:
    """The written memory on stdout (with what its layer's caps archived for room), then
    its warnings on stderr: soft caps, field problems."""
    warnings = [*(caps.warnings if caps else ()), *(warnings or [])]
    archived = caps.archived if caps else ()
    if as_json:
        echo_json(written_json(memory, date.today(), warnings, archived))
    else:
        if archived:
            echo_lines(archived_text(archived))
        echo(f"{verb}  {memory.file}  (revision {memory.revision[:12]})")
    for warning in warnings:
        echo(f"warning: {memory.file}: {warning}", err=True)
    for problem in memory.problems:  # written as asked, but the reader had to default
        where = f"line {problem.line}: " if problem.line else ""
        echo(f"warning: {memory.file}: {where}{problem.field}: {problem.message}",
                   err=True)


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
    reason: ReasonOption = None,
    global_: GlobalOption = False,
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
    expected = None if expect == NEW else revision_param(expect, "--expect")
    text = read_text_option(from_file) if from_file is not None else stdin_text("-")
    store = ctx.obj.store(global_=global_)
    if expected is not None and store.existing_name(with_suffix(name)) is None:
        raise MemoryNotFound(with_suffix(name), store.directory)  # a typo, not a conflict
    if expected is not None:  # `read`'s body is no whole file (a stale one: the guard's)
        check_keeps_frontmatter(store.get(name), text, expected)
    from ..history.caps import write_memory

    memory, caps = write_memory(store, name, text, expected, reason=reason, writer=WRITER,
                                by=WRITER)  # a create gets its MEMORY.md line, as with `new`
    _written(memory, "written", as_json, redaction_warnings(text), caps=caps)


def read_text_option(path: Path) -> str:
    """The text of a ``--from`` file (``-``: stdin), or a usage error saying why not."""
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


UpdateIndexOption = Annotated[bool | None, typer.Option(
    "--update-index/--no-update-index",
    help="A changed description: update its MEMORY.md line (asked at a terminal).")]


@app.command()
def edit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    reason: ReasonOption = None,
    update_index: UpdateIndexOption = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Open $EDITOR on a copy, then write it back only if the memory did not change
    meanwhile (otherwise a conflict record keeps both sides)."""
    store = ctx.obj.store(global_=global_)
    memory = store.get(name)
    with tempfile.TemporaryDirectory(prefix="sagemem-edit-") as scratch:
        copy = Path(scratch) / memory.file
        copy.write_bytes(memory.text.encode("utf-8"))
        _run_editor(copy)
        text = read_text_option(copy)
    if text == memory.text:
        echo(f"unchanged  {memory.file}", err=True)
        return
    warnings = redaction_warnings(text)
    text = redact_memory(text).text  # not even the kept copy of a failed edit holds one
    from ..history.caps import write_memory

    try:
        saved, caps = write_memory(store, memory.file, text, memory.revision,
                                   reason=reason or "sagemem edit", writer=WRITER,
                                   conflict_kind="external_change", by=WRITER)
    except SagememError as exc:
        raise _edit_not_saved(store, memory.file, text, exc) from exc
    _written(saved, "written", as_json, warnings, caps=caps)
    if saved.description != memory.description:
        _offer_index_update(store, saved, update_index)


def redaction_warnings(*texts: str) -> list[str]:
    """The warning for secrets a write redacts (``writes/redact.py``), if any."""
    from ..writes.redact import redaction_notice

    notice = redaction_notice(*texts)
    return [notice] if notice else []


def _edit_not_saved(store: MemoryStore, file: str, text: str, exc: SagememError
                    ) -> WriteFailed:
    """The one error for an edit that could not be written: where the text is kept, or,
    when no place would take it, the text itself on stderr — never lost silently."""
    path, cause = (exc.path, exc.reason) if isinstance(exc, WriteFailed) else \
        (store.directory / file, str(exc))
    kept = keep_text(text, file, store.state_dir / EDITS_DIR)
    if kept is not None:
        return WriteFailed(path, cause, outcome=f"the memory was not changed; your edited "
                                                f"text is kept in {kept}")
    echo(text, err=True, nl=not text.endswith("\n"))
    return WriteFailed(path, cause, outcome="the memory was not changed, and your edited "
                                            "text could not be kept anywhere: it is printed "
                                            "above, copy it now")


def _run_editor(path: Path) -> None:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not command and not (cli.interactive() and sys.stdout.isatty()):
        # vi off a terminal paints escape codes into a pipe and waits on input never sent
        raise click.UsageError("no editor is set (EDITOR, VISUAL) and this is not a "
                               "terminal: set EDITOR, or write the new text with "
                               "`sagemem write NAME -`")
    command = command or "vi"
    try:
        argv = [*shlex.split(command), str(path)]
    except ValueError as exc:
        raise EditorFailed(command, f"cannot be read as a command ({exc}); fix EDITOR"
                           ) from None
    if not argv[:-1]:
        raise EditorFailed(command, "is empty; set EDITOR")
    try:
        status = subprocess.run(argv, check=False).returncode
    except OSError as exc:
        raise EditorFailed(argv[0], f"could not be run ({exc.strerror}); set EDITOR") from None
    if status != 0:
        raise EditorFailed(command, f"exited with status {status}")


@app.command("set")
def set_(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    assignments: Annotated[list[str], typer.Argument(
        help="key=value: true/false, integers, YYYY-MM-DD, [a, b] lists; key= removes.")],
    reason: ReasonOption = None,
    update_index: UpdateIndexOption = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Set frontmatter fields; only those fields change. No revision is needed: other
    fields changed meanwhile are kept; a field someone else changed since is refused."""
    from ..files.edit import field_value

    fields = dict(_assignment(a) for a in assignments)
    store = ctx.obj.store(global_=global_)
    memory = store.get(name)
    read = {key: field_value(memory.text, key, memory.file) for key in fields}
    saved = store.write(memory.file, fields=fields, expected_fields=read, reason=reason,
                        writer=WRITER)
    from ..writes.redact import fields_notice  # a key can name a secret: its whole value

    notice = fields_notice(fields)
    _written(saved, "set", as_json, set_warnings(saved.file, fields) + ([notice] if notice else []))
    if fields.get("description") is not None:
        _offer_index_update(store, saved, update_index)


def _offer_index_update(store: MemoryStore, memory: Memory, update: bool | None) -> None:
    """A new description leaves MEMORY.md's line with the old hook unless the user
    agrees: asked at a terminal, ``--update-index`` off one (a script is never asked)."""
    hook = store.index_hook(memory.file)
    if hook is None or indexfile.hook_matches(hook, memory.description):
        return
    if update is None and cli.interactive():
        update = typer.confirm(f"update the MEMORY.md line of {memory.file} to the new "
                               "description?", default=True, err=True)
    if update:
        store.set_index_hook(memory.file, memory.description)
        echo(f"indexed  MEMORY.md line of {memory.file} now says the new description",
                   err=True)
    elif update is None:
        echo(f"warning: MEMORY.md still describes {memory.file} as {hook!r}; "
                   "rerun with --update-index to change it", err=True)


def _assignment(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"{text!r} is not key=value", param_hint="KEY=VALUE")
    key, value = key.strip(), parse_value(raw.strip())
    problem = field_problem(key, value)
    if problem:
        raise typer.BadParameter(f"{key}: {problem}", param_hint="KEY=VALUE")
    return key, value


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
