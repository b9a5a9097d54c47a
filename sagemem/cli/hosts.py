"""``sagemem install claude-code`` and ``sagemem doctor``: wiring sagemem into Claude Code
and checking the wiring (the work is in ``sagemem.claude_code``); ``sagemem install
cursor|vscode|codex|gemini``: the other hosts (``sagemem.hosts``); ``sagemem install
git``: the merge driver wired into a repository (``sagemem.gitsync.install``)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer

from ..files.controls import visible
from . import base as cli
from .base import Globals, JsonOption, YesOption, app, echo, echo_json

if TYPE_CHECKING:
    from ..claude_code.wiring import Wiring
    from ..config import Settings
    from ..gitsync.install import GitChange
    from ..hosts.plan import HostPlan
    from ..hosts.spec import Scope

install_app = typer.Typer(help="Wire sagemem into an agent host.", no_args_is_help=True)
app.add_typer(install_app, name="install")


@install_app.command("claude-code")
def install_claude_code(
    ctx: typer.Context,
    project: Annotated[bool, typer.Option(
        "--project", help="This project: ./.claude/settings.json, ./.mcp.json.")] = False,
    user: Annotated[bool, typer.Option(
        "--user", help="You, in every project (the default): ~/.claude/settings.json, "
                       "~/.claude.json.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the changes as a diff; write nothing.")] = False,
    yes: YesOption = False,
    undo: Annotated[bool, typer.Option(
        "--undo", help="Take the install out again (backups back byte for byte).")] = False,
    no_skill: Annotated[bool, typer.Option(
        "--no-skill", help="Leave the skill (SKILL.md) out.")] = False,
) -> None:
    """Add sagemem's hooks, MCP server (with the mcp extra) and skill to Claude Code.

    The user scope is the default. Every other byte of the files is kept, and every hook
    install did not write; the first change keeps each file's backup in
    .claude/sagemem-install/ (ignored by git). Running it twice changes nothing. Off a
    terminal a change needs --yes.
    """
    from ..claude_code.changes import apply_install, apply_undo
    from ..claude_code.install import plan_install, plan_undo, targets

    if project and user:
        raise click.UsageError("--project and --user exclude each other; give one")
    home, cwd = Path.home(), Path.cwd()
    where = targets("project" if project else "user", home=home, project=cwd)
    other = targets("user" if project else "project", home=home, project=cwd)
    notes: tuple[str, ...] = ()
    if undo:
        plan = plan_undo(where)
    else:
        wiring, notes = _wiring(ctx.obj, where.scope, home, cwd)
        plan = plan_install(where, wiring, mcp=importlib.util.find_spec("mcp") is not None,
                            skill=not no_skill, other=other)
    for notice in (*notes, *plan.notices):
        echo(f"note: {notice}", err=True)
    if not plan.changes:
        if undo and not dry_run:  # the records are done with; a dry run keeps them too
            apply_undo((), plan.forget, where.records)
        echo(f"nothing to {'undo' if undo else 'change'} ({where.scope} scope: "
             f"{where.settings})", err=True)
        return
    diffs = [change.diff() for change in plan.changes]
    if dry_run:
        echo("".join(diffs), nl=False)
        echo("dry run: nothing was written", err=True)
        return
    cli.confirm("write these changes?", yes=yes, required="to change Claude Code's files",
                preview=lambda: ["".join(diffs).rstrip("\n")])
    if undo:
        apply_undo(plan.changes, plan.forget, where.records)
    else:
        apply_install(plan.changes, where.records)
    for change in plan.changes:
        verb = "removed" if change.after is None else "wrote"
        echo(f"{verb} {change.path} ({change.what})")
    if not undo:
        echo(f"{where.scope} scope; undo with: sagemem install claude-code --undo "
             f"--{where.scope}", err=True)


ProjectScope = Annotated[bool, typer.Option(
    "--project", help="This project's file (./.<host>/…), shared with the team.")]
UserScope = Annotated[bool, typer.Option(
    "--user", help="Your own file, read in every project (the default).")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Print the changes as a diff; write nothing.")]
Undo = Annotated[bool, typer.Option(
    "--undo", help="Take the install out again (backups back byte for byte).")]


@install_app.command("cursor")
def install_cursor(ctx: typer.Context, project: ProjectScope = False, user: UserScope = False,
                   dry_run: DryRun = False, yes: YesOption = False, undo: Undo = False) -> None:
    """Add sagemem's MCP server to Cursor (~/.cursor/mcp.json, or .cursor/mcp.json)."""
    _install_host(ctx, "cursor", project, user, dry_run, yes, undo)


@install_app.command("vscode")
def install_vscode(ctx: typer.Context, project: ProjectScope = False, user: UserScope = False,
                   dry_run: DryRun = False, yes: YesOption = False, undo: Undo = False) -> None:
    """Add sagemem's MCP server to VS Code (the user profile's mcp.json, or
    .vscode/mcp.json)."""
    _install_host(ctx, "vscode", project, user, dry_run, yes, undo)


@install_app.command("codex")
def install_codex(ctx: typer.Context, project: ProjectScope = False, user: UserScope = False,
                  dry_run: DryRun = False, yes: YesOption = False, undo: Undo = False) -> None:
    """Add sagemem's MCP server (config.toml) and prompt hook (hooks.json) to Codex
    (~/.codex/, or .codex/)."""
    _install_host(ctx, "codex", project, user, dry_run, yes, undo)


@install_app.command("gemini")
def install_gemini(ctx: typer.Context, project: ProjectScope = False, user: UserScope = False,
                   dry_run: DryRun = False, yes: YesOption = False, undo: Undo = False) -> None:
    """Add sagemem's MCP server and prompt hook to Gemini CLI (~/.gemini/settings.json,
    or .gemini/settings.json)."""
    _install_host(ctx, "gemini", project, user, dry_run, yes, undo)


def _install_host(ctx: typer.Context, name: str, project: bool, user: bool, dry_run: bool,
                  yes: bool, undo: bool) -> None:
    """One host's install or undo: plan, show, confirm, write (``sagemem.hosts.plan``)."""
    from ..claude_code.wiring import user_wiring
    from ..hosts.plan import plan_install, plan_undo
    from ..hosts.registry import HOSTS

    if project and user:
        raise click.UsageError("--project and --user exclude each other; give one")
    host = HOSTS[name]
    scope: Scope = "project" if project else "user"
    home, cwd = Path.home(), Path.cwd()
    if undo:
        plan = plan_undo(host, scope, home=home, project=cwd)
    else:
        memory, state = _folders(ctx.obj)
        plan = plan_install(host, scope, user_wiring(memory, state), home=home, project=cwd)
        if importlib.util.find_spec("mcp") is None:
            echo("note: the mcp extra is missing, so the server will not start until it "
                 "is installed (pip install 'sagemem[mcp]')", err=True)
    for notice in plan.notices:
        echo(f"note: {notice}", err=True)
    if not plan.changes:
        if undo and not dry_run:
            _apply_host(plan, undo=True)
        echo(f"nothing to {'undo' if undo else 'change'} ({host.title}, {scope} scope)",
             err=True)
        return
    diffs = "".join(change.diff() for change in plan.changes)
    if dry_run:
        echo(diffs, nl=False)
        echo("dry run: nothing was written", err=True)
        return
    cli.confirm("write these changes?", yes=yes, required=f"to change {host.title}'s files",
                preview=lambda: [diffs.rstrip("\n")])
    _apply_host(plan, undo=undo)
    for change in plan.changes:
        echo(f"{'removed' if change.after is None else 'wrote'} {change.path} ({change.what})")
    if not undo:
        echo(f"{scope} scope; undo with: sagemem install {name} --undo --{scope}", err=True)


def _apply_host(plan: HostPlan, *, undo: bool) -> None:
    from ..claude_code.changes import apply_install, apply_undo

    if undo:
        apply_undo(plan.changes, plan.forget, plan.records)
    else:
        apply_install(plan.changes, plan.records)


def _folders(g: Globals) -> tuple[Path | None, Path | None]:
    """The folders a user-scope entry names: none when the folder follows the project
    (``_named_folder``), else the memory folder, and the state directory when given."""
    settings = g.settings()
    state = settings.state_dir if settings.source("state_dir") != "default" else None
    _warn_missing(g, settings.memory_dir)
    return (settings.memory_dir, state) if _named_folder(settings) else (None, None)


def _named_folder(settings: Settings) -> bool:
    """Whether the user named the memory folder (``--dir``, ``SAGE_MEM_DIR``). A folder
    the working directory chose (its git project's, or the default) is not written into
    a user-scope entry: that entry runs in every project, and would send them all to
    this one's folder."""
    if settings.source("memory_dir") in ("option", "env"):
        return True
    echo("note: the folder follows each project (docs/configuration.md, \"Which "
         "folder\"); give --dir or SAGE_MEM_DIR to send every project to one folder",
         err=True)
    return False


def _warn_missing(g: Globals, memory_dir: Path) -> None:
    if not memory_dir.is_dir():
        echo(f"warning: memory directory {memory_dir} does not exist yet; "
             f"create it: {g.command('init')}", err=True)


@install_app.command("git")
def install_git(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would change; change nothing.")] = False,
    undo: Annotated[bool, typer.Option(
        "--undo", help="Take out exactly what install git put in.")] = False,
) -> None:
    """Wire sagemem's merge driver into the git repository that holds the memory folder.

    Writes `*.md merge=sagemem` into the folder's own .gitattributes and the driver into
    the repository's local git config (merge.sagemem.*), run with this Python's absolute
    path. Running it twice changes nothing.
    """
    from ..gitsync.install import apply, plan_install, plan_undo

    store = ctx.obj.store(warn_pending=False)
    store.require_directory()
    plan = (plan_undo if undo else plan_install)(store.directory)
    if not plan.changes:
        echo(f"nothing to {'undo' if undo else 'change'} in {plan.repository.top}", err=True)
        return
    for change in plan.changes:
        echo(_git_change_line(change, dry_run))
    if dry_run:
        echo("dry run: nothing was changed", err=True)
        return
    apply(plan)
    if not undo:
        echo("undo with: " + ctx.obj.command("install", "git", "--undo"), err=True)


def _git_change_line(change: GitChange, dry_run: bool) -> str:
    """One line per change: a file written or removed, a git config key set or unset."""
    verb = {True: "would ", False: ""}[dry_run]
    if change.what.startswith("merge."):
        if change.after is None:
            return f"{verb}unset git config {change.what}"
        return f"{verb}set git config {change.what} = {visible(change.after)}"
    done = "remove" if change.after is None else "write"
    past = {"remove": "removed", "write": "wrote"}[done]
    return f"{verb}{done if dry_run else past} {visible(change.what)}"


def _wiring(g: Globals, scope: str, home: Path, project: Path
            ) -> tuple[Wiring, tuple[str, ...]]:
    """What the entries run and the folders they name: the memory folder always, the
    state directory only when one was given (else it follows the folder); a project's
    spelt so a teammate's machine reads them too (``claude_code/wiring.py``)."""
    from ..claude_code.wiring import project_wiring, user_wiring

    if scope == "user":
        return user_wiring(*_folders(g)), ()
    settings = g.settings()
    state = settings.state_dir if settings.source("state_dir") != "default" else None
    _warn_missing(g, settings.memory_dir)
    return project_wiring(settings.memory_dir, state, project=project, home=home,
                          on_path=shutil.which("sagemem"))


@app.command()
def doctor(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """Say what is wired into Claude Code (and the other hosts) where, whether it works,
    and what to fix.

    Runs each hook command that runs sagemem with a sample prompt, timed against its
    timeout, against a copy of the state directory: doctor changes nothing. Exit 0 when
    all is well, 1 when something is wrong.
    """
    from ..claude_code.doctor import diagnose, healthy
    from ..hosts.doctor import host_findings

    g: Globals = ctx.obj
    env = dict(os.environ)
    for key, path in (("SAGE_MEM_DIR", g.memory_dir), ("SAGE_MEM_STATE_DIR", g.state_dir)):
        if path is not None:
            env[key] = os.path.abspath(path)
    findings = diagnose(home=Path.home(), project=Path.cwd(), env=env)
    findings += host_findings(home=Path.home(), project=Path.cwd())
    if json_output:
        echo_json({"version": 1, "ok": healthy(findings), "findings": [
            {"level": f.level, "topic": f.topic, "message": f.message, "fix": f.fix}
            for f in findings]})
    else:
        for f in findings:
            echo(f"{f.level:<8} {f.topic}: {f.message}")
            if f.fix:
                echo(f"{'':<8} fix: {f.fix}")
    if not healthy(findings):
        raise typer.Exit(1)
