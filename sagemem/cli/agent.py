"""The agent-facing commands: search, read, inject and what supports them (sessions, the
access ledger, task checkpoints, the Claude Code hook); the index and evaluation are in
``engine.py``.

They register on the one ``app`` of ``base.py``; ``main.py`` imports this module. The
retrieval and injection stack is imported inside each command, so the commands that do
not need it (``list``, ``new``, ``snapshot``…) never load it.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..config import JSON_VERSION, Settings
from ..errors import MemoryOff, NoCheckpoint
from ..inject.session import DEFAULT_SESSION
from ..store import MemoryStore
from .base import (
    GlobalOption,
    Globals,
    JsonOption,
    app,
    echo,
    echo_json,
    echo_lines,
    json_text,
    memory_type,
    missing,
)
from .batch import read_batch
from .embedding import ModeOption, mode_of, semantic_off

if TYPE_CHECKING:
    from ..inject.printed import Printed
    from ..layers import Layers
    from ..search.results import SearchResponse


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="The question.")] = None,
    limit: Annotated[int, typer.Option(
        "--limit", min=1, max=10, help="Results per page (at most 10 candidates in all).")] = 10,
    type_: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only memories with this tag.")] = None,
    cursor: Annotated[str | None, typer.Option(
        "--cursor", help="Next page, from coverage.")] = None,
    batch: Annotated[Path | None, typer.Option(
        "--batch", help='JSONL file of {"id", "query"} lines; prints one JSON line each.')] = None,
    include_archived: Annotated[bool, typer.Option(
        "--include-archived", help="Search archive/ too (results marked archived).")] = False,
    mode: ModeOption = None,
    transcripts: Annotated[bool, typer.Option(
        "--transcripts", help="Search this project's past Claude Code sessions instead: "
                              "cited excerpts, not memories.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Find the memories that answer QUERY, each with its paragraph and line range."""
    from .output_agent import search_json, search_text

    if transcripts:
        given = [flag for flag, value in (("--type", type_), ("--tag", tag),
                                          ("--cursor", cursor), ("--batch", batch),
                                          ("--mode", mode)) if value] + (
            ["--include-archived"] if include_archived else [])
        raise typer.Exit(_search_transcripts(ctx.obj, query, limit, given, as_json))
    if type_ and tag:
        raise typer.BadParameter("give --type or --tag, not both", param_hint="--tag")
    scope = memory_type(type_) if type_ else tag
    with ctx.obj.layers() as layers:
        semantic_off(layers.project, mode)
        if batch is not None:
            raise typer.Exit(_search_batch(ctx.obj, layers, batch, scope, limit,
                                           include_archived, mode))
        if query is None or not query.strip():
            raise missing("QUERY", "Give a question, or --batch FILE.", "argument")
        response = layers.search(query, scope=scope, limit=limit, cursor=cursor,
                                 include_archived=include_archived, mode=mode_of(mode))
        seen_warnings = _record_seen(ctx.obj, layers.project, response)
    _notices(response.notices)
    _warnings(seen_warnings)
    if as_json:
        echo_json(search_json(response))
    else:
        echo_lines(search_text(response, shutil.get_terminal_size((80, 24)).columns))
        if response.coverage.next_cursor:
            # every option the cursor is bound to (scope, mode, archive), or it is refused
            scoped = "".join(f" {flag} {shlex.quote(value)}" for flag, value in (
                ("--type", type_), ("--tag", tag), ("--mode", mode)) if value)
            archived = " --include-archived" if include_archived else ""
            echo(f"more: sagemem search {json.dumps(query, ensure_ascii=False)} "
                 f"--limit {limit}{scoped}{archived} "
                 f"--cursor {response.coverage.next_cursor}", err=True)


def _search_transcripts(globals_: Globals, query: str | None, limit: int, given: list[str],
                        as_json: bool) -> int:
    """``search --transcripts``: past sessions' cited excerpts; nothing is written."""
    from ..transcripts.search import search_project
    from .output_agent import transcripts_json, transcripts_text

    if given:
        raise typer.BadParameter(f"{given[0]} searches memories; --transcripts takes only "
                                 "QUERY, --limit and --json", param_hint=given[0])
    if query is None or not query.strip():
        raise missing("QUERY", "Give a question to search past sessions for.", "argument")
    settings = globals_.settings()
    found = search_project(settings, query, limit=limit, skip_session=settings.session)
    _notices(found.notices)
    if as_json:
        echo_json(transcripts_json(query, found))
    else:
        echo_lines(transcripts_text(found))
    return 0


def _search_batch(globals_: Globals, layers: Layers, path: Path, scope: str | None,
                  limit: int, include_archived: bool, mode: str | None) -> int:
    from .output_agent import search_json

    def answer(number: int, item: dict[str, Any]) -> dict[str, Any]:
        response = layers.search(item["query"], scope=scope, limit=limit,
                                 include_archived=include_archived, mode=mode_of(mode))
        _notices(response.notices)
        _warnings(_record_seen(globals_, layers.project, response))
        return search_json(response)

    return _batch(path, answer)


def _batch(path: Path, answer: Callable[[int, dict[str, Any]], dict[str, Any]]) -> int:
    """One JSON line per non-blank input line, in order, with its ``id``; a bad line gets
    an error object and the exit code 1, and costs no other line."""
    failed = 0
    for number, item in read_batch(path):
        if isinstance(item, str):
            failed += 1
            echo(json_text({"id": None, "line": number, "error": item}))
        else:
            echo(json_text({"id": item.get("id"), **answer(number, item)}))
    return 1 if failed else 0


@app.command()
def read(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    start_line: Annotated[int | None, typer.Option(
        "--start-line", min=1, help="First line (the file's own numbering).")] = None,
    start_byte: Annotated[int | None, typer.Option(
        "--start-byte", min=0, help="First byte, instead of a line.")] = None,
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", min=1, help="Page size in bytes (default 16384).")] = None,
    revision: Annotated[str | None, typer.Option(
        "--revision", help="The revision you last read; refuse if it changed.")] = None,
    global_: GlobalOption = False,
    as_json: JsonOption = False,
) -> None:
    """Read a memory's body by line or byte, a page at a time."""
    from ..history.ledger import record_if_possible
    from .base import revision_param
    from .output_agent import read_json

    if revision is not None:
        revision = revision_param(revision, "--revision")
    store = ctx.obj.store(global_=global_)
    result = store.read(name, start_line=start_line, start_byte=start_byte,
                        max_bytes=max_bytes, revision=revision)
    warnings = [*record_if_possible(store.state_dir, "read", [result.file],
                                    datetime.now(timezone.utc)),
                *([] if global_ else _record_seen(ctx.obj, store,
                                                  {result.file: result.revision}))
                ] if result.status == "ok" else []
    _warnings(warnings)
    if as_json:
        echo_json(read_json(result, warnings))
    elif result.status == "ok":
        echo(result.content)
    if result.status == "revision_changed":
        echo(f"error: revision_changed: {result.file} is now at revision "
                   f"{result.revision[:12]}; search again for fresh line numbers", err=True)
        raise typer.Exit(1)
    if not as_json and (result.next_start_line or result.next_start_byte is not None):
        more = (f"--start-line {result.next_start_line}" if result.next_start_line
                else f"--start-byte {result.next_start_byte}")
        echo(f"more: sagemem read {result.file} {more}", err=True)


session_app = typer.Typer(help="Per-session injection state.", no_args_is_help=True)
app.add_typer(session_app, name="session")


@app.command()
def inject(
    ctx: typer.Context,
    question: Annotated[str | None, typer.Argument(help="The user's question.")] = None,
    session: Annotated[str, typer.Option(
        "--session", help="Session id (the host's conversation).")] = DEFAULT_SESSION,
    batch: Annotated[Path | None, typer.Option(
        "--batch", help='JSONL of {"id", "query", "session"?}; one JSON line each.')] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show every candidate and why it was injected, cut or kept out.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Print the memory block to hand the model before it answers QUESTION."""
    from ..inject.block import inject as inject_block
    from ..inject.printed import printed_injection
    from .output_agent import explain_text, injection_json

    try:
        settings = ctx.obj.settings()
    except MemoryOff:  # a prompt hook runs this: off means no block, never a failure
        return
    if question is not None and batch is None and not (as_json or explain or settings.debug):
        _show(printed_injection(settings, question, session))  # the hook server's too
        return
    with ctx.obj.layers(warn_pending=False) as layers:
        if batch is not None:
            raise typer.Exit(_inject_batch(layers, settings, batch))
        if question is None:
            raise missing("QUESTION", "Give a question, or --batch FILE.", "argument")
        injection = inject_block(layers, question, session, settings)
    _notices(injection.notices)
    if as_json:
        echo_json(injection_json(injection) | ({"explain": list(injection.explain)}
                                                if explain else {}))
    elif injection.text:
        echo(injection.text)
    elif injection.explain and injection.explain[-1].get("repeat"):
        echo(f"(the same question as the last one in session {session}: nothing new "
                   "to inject; ask differently, or reset the session)", err=True)
    if (explain or settings.debug) and not as_json:
        echo("\n".join(explain_text(injection.explain)), err=True)


def _show(printed: Printed) -> None:
    """Show a made output (already ``visible``; echo's pass leaves it as it is)."""
    if printed.stderr:
        echo(printed.stderr, err=True, nl=False)
    if printed.stdout:
        echo(printed.stdout, nl=False)


def _inject_batch(store: Layers, settings: Settings, path: Path) -> int:
    """A line without ``session`` gets a fresh session of its own, never saved."""
    from ..inject.block import inject as inject_block
    from .output_agent import injection_json

    def answer(number: int, item: dict[str, Any]) -> dict[str, Any]:
        session = item.get("session")
        injection = inject_block(store, item["query"], str(session or f"batch-{number}"),
                                 settings, persist=session is not None)
        return injection_json(injection)

    return _batch(path, answer)


@session_app.command("show")
def session_show(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="Session id.")],
    as_json: JsonOption = False,
) -> None:
    """What a session has been given: budget spent, cards shown, last attempts."""
    from ..inject.session import Budget, load_session, session_file
    from .output_agent import explain_text, session_text

    settings = ctx.obj.settings()
    state = load_session(settings.state_dir, session_id)
    if not session_file(settings.state_dir, session_id).exists():
        echo(f"note: no session {session_id!r} yet (nothing injected for it)", err=True)
    if as_json:
        echo_json({"version": JSON_VERSION, **asdict(state)})
    else:
        echo_lines(session_text(state, Budget.of(settings.max_session_bytes)))
        echo_lines(explain_text(state.attempts[-1:]))


@session_app.command("reset")
def session_reset(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="Session id.")],
) -> None:
    """Zero a session's budgets and signatures (after the host compacts or clears)."""
    from ..inject.session import reset_session

    reset_session(ctx.obj.settings().state_dir, session_id)
    echo(f"reset    {session_id}")


@app.command()
def ledger(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """How often each memory was injected, read and used, and when.

    The three counts stay apart: they are for diagnostics and archiving, never ranking.
    """
    from ..history.ledger import load as load_ledger
    from .output_agent import ledger_json, ledger_text

    entries, warnings = load_ledger(ctx.obj.settings().state_dir)
    if as_json:
        echo_json(ledger_json(entries))
    else:
        echo_lines(ledger_text(entries, shutil.get_terminal_size((80, 24)).columns))
    _warnings(warnings)


@app.command()
def use(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Memory file name (.md may be left off).")],
    global_: GlobalOption = False,
) -> None:
    """Record that you adopted a memory (the ledger's "use" count; it never changes ranking)."""
    from ..history.ledger import record as record_access

    store = ctx.obj.store(global_=global_)
    memory = store.get(name)
    _warnings(record_access(store.state_dir, "use", [memory.file], datetime.now(timezone.utc)))
    echo(f"used  {memory.file}")


task_app = typer.Typer(no_args_is_help=True,
                       help="Task checkpoints: <state>/tasks/<task id>/WORKING.md.")
app.add_typer(task_app, name="task")
TaskOption = Annotated[str | None, typer.Option(
    "--task", help="Task id (default: SAGE_MEM_TASK_ID).")]


def _task_id(ctx: typer.Context, task: str | None) -> tuple[Path, str]:
    """The state directory and the task id: --task, else SAGE_MEM_TASK_ID, else a usage error."""
    settings = ctx.obj.settings()
    task_id = task if task is not None else settings.task_id
    if task_id is None or not task_id.strip():
        raise typer.BadParameter("no task id: pass --task or set SAGE_MEM_TASK_ID",
                                 param_hint="--task")
    return settings.state_dir, task_id


@task_app.command("show")
def task_show(ctx: typer.Context, task: TaskOption = None, as_json: JsonOption = False) -> None:
    """Show a task's checkpoint: its handle, its items, and done items missing evidence."""
    from ..inject.tasks import WORKING_FILE, load_checkpoint, task_dir
    from .output_agent import checkpoint_json, checkpoint_text

    state_dir, task_id = _task_id(ctx, task)
    checkpoint = load_checkpoint(state_dir, task_id)
    if checkpoint is None:
        raise NoCheckpoint(task_id, task_dir(state_dir, task_id) / WORKING_FILE)
    if as_json:
        echo_json(checkpoint_json(checkpoint))
    else:
        echo_lines(checkpoint_text(checkpoint))
    if not checkpoint.readable:  # a refused file is an error; unproven items are only flagged
        echo(f"error: {checkpoint.problems[0]}", err=True)
        raise typer.Exit(1)


@task_app.command("path")
def task_path(
    ctx: typer.Context,
    task: TaskOption = None,
    create: Annotated[bool, typer.Option(
        "--create", help="Write the template if WORKING.md is missing (never overwrites).")
    ] = False,
) -> None:
    """Print the path of a task's WORKING.md, the file to write its checkpoint in."""
    from ..inject.tasks import WORKING_FILE, ensure_checkpoint, task_dir

    state_dir, task_id = _task_id(ctx, task)
    if create:
        echo(ensure_checkpoint(state_dir, task_id))
    else:
        echo(task_dir(state_dir, task_id) / WORKING_FILE)


hook_app = typer.Typer(help="Hooks that connect sagemem to an agent host.",
                       no_args_is_help=True)
app.add_typer(hook_app, name="hook")


@hook_app.command("claude-code")
def hook_claude_code(ctx: typer.Context) -> None:
    """Claude Code hook (UserPromptSubmit, SessionStart, and PreToolUse/PostToolUse of
    Read, Write, Edit, MultiEdit): the hook's JSON on stdin.

    Prints the memory block as additionalContext, a denial of a write over a memory
    changed since it was read, or nothing; always exits 0, since exit 2 would block the
    user's prompt. Errors go to <state>/logs/hook.log.
    """
    from ..claude_code.hook import run_claude_code_hook

    g: Globals = ctx.obj
    raise typer.Exit(run_claude_code_hook(g.memory_dir, g.state_dir))


@hook_app.command("gemini")
def hook_gemini(ctx: typer.Context) -> None:
    """Gemini CLI hook (BeforeAgent, SessionStart): the hook's JSON on stdin.

    Prints the memory block as hookSpecificOutput.additionalContext, or nothing; always
    exits 0. Errors go to <state>/logs/hook.log.
    """
    from ..hosts.hook import gemini, run_host_hook

    g: Globals = ctx.obj
    raise typer.Exit(run_host_hook(gemini, g.memory_dir, g.state_dir))


@hook_app.command("codex")
def hook_codex(ctx: typer.Context) -> None:
    """Codex hook (UserPromptSubmit, SessionStart): the hook's JSON on stdin.

    Prints the memory block as hookSpecificOutput.additionalContext, or nothing; always
    exits 0. Errors go to <state>/logs/hook.log.
    """
    from ..hosts.hook import codex, run_host_hook

    g: Globals = ctx.obj
    raise typer.Exit(run_host_hook(codex, g.memory_dir, g.state_dir))


def _record_seen(globals_: Globals, store: MemoryStore,
                 seen: SearchResponse | Mapping[str, str]) -> list[str]:
    """Record the revisions a read or search handed the model (``inject.seen``) into
    SAGE_MEM_SESSION's session, for Claude Code's write gate. Without a session nothing
    is recorded: a shell's read must not vouch for every session's writes (issue 20)."""
    from ..files.folder import ARCHIVE_DIR
    from ..inject.seen import record_seen

    session = globals_.settings().session
    if not session:
        return []
    revisions = seen if isinstance(seen, Mapping) else {  # the gate guards the project's
        f"{ARCHIVE_DIR}/{r.file}" if r.archived else r.file: r.revision
        for r in seen.results if r.revision and r.layer == "project"}
    return record_seen(store.state_dir, session, revisions)


def _warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        echo(f"warning: {warning}", err=True)


def _notices(notices: Iterable[str]) -> None:
    for notice in notices:
        echo(f"notice: {notice}", err=True)
