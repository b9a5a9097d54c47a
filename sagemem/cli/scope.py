"""``sagemem scope``: which project the working directory is in, the rule that chose its
memory folder, and the switch that turns memory off or on or names a folder for it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import JSON_VERSION, Settings, folder_rule
from ..errors import InvalidArgument, NotInProject
from ..files.scopes import Project, choose_folder, find_project, set_memory, use_folder
from .base import JsonOption, app, echo, echo_json, echo_lines

scope_app = typer.Typer(help="This project's memory folder: show it, turn it off or on, "
                             "or adopt a folder.", invoke_without_command=True)
app.add_typer(scope_app, name="scope")

RepoOption = Annotated[bool, typer.Option(
    "--repo", help="Write the repository's .sagemem.json (it travels with the repository) "
                   "instead of your own ~/.sage-mem/projects.json.")]


@scope_app.callback()
def scope(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """The project of the working directory, the rule that chose its folder, the folder."""
    if ctx.invoked_subcommand is not None:
        return
    settings = ctx.obj.any_settings()
    if as_json:
        echo_json({"version": JSON_VERSION, "memory_dir": str(settings.memory_dir),
                   **folder_rule(settings)})
    else:
        echo_lines(scope_text(settings))


def scope_text(settings: Settings) -> list[str]:
    rule: dict[str, Any] = folder_rule(settings)
    folder = "off" if rule["memory"] == "off" else str(settings.memory_dir)
    lines = [f"project     {rule['project_root'] or '(not in a git working tree)'}",
             f"rule        {rule['rule']}" + (f"  ({rule['file']})" if rule["file"] else ""),
             f"memory_dir  {folder}"]
    if rule["rule"] in ("option", "env") and (project := _here()) is not None:
        given = "--dir" if rule["rule"] == "option" else "SAGE_MEM_DIR"
        lines.append(f"note: {given} wins over the rules of project {project.root}")
    return lines


@scope_app.command("off")
def off(ctx: typer.Context, repo: RepoOption = False) -> None:
    """Turn memory off for this repository: hooks inject nothing, commands refuse."""
    _switch(False, repo)


@scope_app.command("on")
def on(ctx: typer.Context, repo: RepoOption = False) -> None:
    """Turn memory back on for this repository (without --repo it outvotes the
    repository's own off)."""
    _switch(True, repo)


def _switch(want_on: bool, repo: bool) -> None:
    """Write the switch, then say what is in effect now: another rule (the user's map
    over the repository file) may still decide otherwise, and the user must not read
    "memory on" while memory stays off."""
    project = _project()
    path = set_memory(project.root, want_on, repo=repo)
    word = "on" if want_on else "off"
    written = f"written {path}" if path.exists() else f"removed {path}: it held nothing else"
    echo(f"{word} in {path.name} for {project.root}  ({written})")
    now = choose_folder(project)
    if now.off != want_on:
        echo(f"memory is {word} for {project.root}")
    else:
        echo(f"memory is still {'off' if now.off else 'on'} for {project.root}: the "
             f"{now.rule} {now.file} decides first; sagemem scope {word} changes it there")


@scope_app.command("use")
def use(ctx: typer.Context, directory: Annotated[Path, typer.Argument(
        help="An existing folder this project's memories live in (adopted in place; "
             "`sagemem init DIR` makes a new one).")]
        ) -> None:
    """Name DIR as this project's memory folder in your ~/.sage-mem/projects.json — how an
    existing folder (the old ~/.sage-mem/memory, Claude Code's auto-memory) is adopted.
    Its state directory is the one it has by default; --state-dir is not recorded."""
    root = _project().root
    global_dir = ctx.obj.any_settings().global_dir
    given = Path(os.path.abspath(directory.expanduser()))
    # real paths: a symlink to the global folder is the global folder
    if global_dir is not None and os.path.realpath(given) == os.path.realpath(global_dir):
        raise InvalidArgument("DIR", f"{global_dir} is the global layer's folder (every "
                                     "project's); name a folder of this project's own")
    if os.path.lexists(given) and not given.is_dir():
        raise InvalidArgument("DIR", f"{given} is not a folder; name a memory folder")
    if not given.is_dir():  # recorded now, it would fail at the next command instead
        raise InvalidArgument("DIR", f"{given} does not exist; `sagemem init {given}` "
                                     "makes a memory folder there first")
    folder = use_folder(root, directory)
    echo(f"memory_dir {folder} for {root}")


def _here() -> Project | None:
    try:
        return find_project(Path.cwd())
    except OSError:
        return None


def _project() -> Project:
    project = _here()
    if project is None:
        raise NotInProject(Path(os.path.abspath(".")))
    return project
