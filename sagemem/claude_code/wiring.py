"""What install's entries run: the sagemem command, the folders it is given, and how both
are spelt so the file works where it is read.

The user's files (``~/.claude/settings.json``, ``~/.claude.json``) stay on this machine:
there the command is the absolute path of the sagemem that ran install (a virtual
environment's sagemem is found without it on PATH) and the folders are absolute.

A project's files (``.claude/settings.json``, ``.mcp.json``) are committed and read on
every teammate's machine, so nothing in them may be this machine's: the command is a bare
``sagemem`` from PATH, and a folder is named the way Claude Code lets each reader resolve
it. Claude Code runs a hook command through the shell with ``$CLAUDE_PROJECT_DIR`` set to
the project root, expands ``${VAR}`` and ``${VAR:-default}`` in ``.mcp.json``'s command,
args and env, and takes settings ``env`` values literally (sagemem itself expands a
leading ``~``). So a folder inside the project is ``--dir "$CLAUDE_PROJECT_DIR"/<rel>`` in
the hook, ``${CLAUDE_PROJECT_DIR:-.}/<rel>`` for the server and ``<rel>`` in ``env`` (the
model's shell starts at the project root); one under the home is ``~/<rel>``; any other
is absolute, with a note that it is this machine's path.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOOK_TIMEOUT_S = 10
"""Claude Code's per-hook ``timeout`` (seconds); the hook keeps to ``hook_budget_ms``
(5 s) well inside it, since a killed hook injects nothing."""
PROJECT_ROOT = "CLAUDE_PROJECT_DIR"


@dataclass(frozen=True)
class Wiring:
    """What the entries run: ``command`` starts sagemem, ``hook_options`` (shell words)
    and ``server_options`` go before the subcommand, ``env`` names the folders."""

    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    hook_options: str = ""
    server_options: tuple[str, ...] = ()
    server_env: Mapping[str, str] | None = None

    def hook_command(self) -> str:
        """The shell line Claude Code runs for each hook event."""
        words = [shlex.join(self.command), self.hook_options, "hook claude-code"]
        return " ".join(w for w in words if w)

    def hook(self) -> dict[str, Any]:
        """The hook object install writes (and records as its own)."""
        return {"type": "command", "command": self.hook_command(), "timeout": HOOK_TIMEOUT_S}

    def hook_group(self, matcher: str | None) -> dict[str, Any]:
        """The group install appends for that hook: a group of its own, never a share of
        someone else's."""
        return {**({"matcher": matcher} if matcher else {}), "hooks": [self.hook()]}

    def server(self) -> dict[str, Any]:
        """The ``mcpServers`` entry: the same command with ``mcp``, its env expanded
        by Claude Code (``server_env``) where the hook's shell would expand it."""
        env = self.env if self.server_env is None else self.server_env
        return {"type": "stdio", "command": self.command[0],
                "args": [*self.command[1:], *self.server_options, "mcp"], "env": dict(env)}


def sagemem_command(argv0: str | None = None, python: str | None = None) -> tuple[str, ...]:
    """The running sagemem as an absolute command: the console script we run as, else
    the one beside this Python (a venv's bin/), else on PATH, else ``python -m sagemem``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    python = sys.executable if python is None else python
    script = Path(argv0)
    if script.name.startswith("sagemem") and script.suffix in ("", ".exe") \
            and script.is_file():
        return (os.path.abspath(script),)
    beside = Path(python).parent / ("sagemem.exe" if os.name == "nt" else "sagemem")
    if beside.is_file():
        return (str(beside),)
    found = shutil.which("sagemem")
    if found:
        return (os.path.abspath(found),)
    return (os.path.abspath(python), "-m", "sagemem")


def user_wiring(memory_dir: Path | None, state_dir: Path | None) -> Wiring:
    """The user scope's: this machine's absolute command and, when the user named them
    (``--dir``, ``SAGE_MEM_DIR``), the folders. ``memory_dir`` None names none: the hooks
    and the server then follow each project's folder (docs/configuration.md, "Which
    folder"), since a user-scope entry runs in every project."""
    env: dict[str, str] = {}
    if memory_dir is not None:
        env["SAGE_MEM_DIR"] = str(memory_dir)
        if state_dir is not None:
            env["SAGE_MEM_STATE_DIR"] = str(state_dir)
    return Wiring(sagemem_command(), env)


def project_wiring(memory_dir: Path, state_dir: Path | None, *, project: Path,
                   home: Path, on_path: str | None) -> tuple[Wiring, tuple[str, ...]]:
    """The project scope's, portable (see the module doc), and a note for each part that
    could only be spelt as this machine's. ``on_path``: where PATH finds ``sagemem``."""
    notes: list[str] = []
    if on_path:
        command: tuple[str, ...] = ("sagemem",)
    else:
        command = sagemem_command()
        notes.append(f"sagemem is not on PATH, so the project's hooks name {command[0]}, "
                     "a path of this machine; put sagemem on PATH (pipx install sagemem) "
                     "and install again for files a team can share")
    env: dict[str, str] = {}
    server_env: dict[str, str] = {}
    hook_options: list[str] = []
    for key, option, folder in (("SAGE_MEM_DIR", "--dir", memory_dir),
                                ("SAGE_MEM_STATE_DIR", "--state-dir", state_dir)):
        if folder is None:
            continue
        spelt = _portable(folder, project, home)
        if spelt is None:
            env[key] = server_env[key] = str(folder)
            notes.append(f"{folder} is outside the project and your home: the project's "
                         "files name it by this machine's absolute path")
        elif spelt[0] == "project":
            env[key] = spelt[1]
            server_env[key] = f"${{{PROJECT_ROOT}:-.}}/{spelt[1]}"
            hook_options.append(f'{option} "${PROJECT_ROOT}"/{shlex.quote(spelt[1])}')
        else:
            env[key] = server_env[key] = spelt[1]
    return Wiring(command, env, " ".join(hook_options), (), server_env), tuple(notes)


def _portable(folder: Path, project: Path, home: Path) -> tuple[str, str] | None:
    """``("project", rel)`` inside the project, ``("home", "~/rel")`` under the home."""
    for kind, base in (("project", project), ("home", home)):
        try:
            rel = Path(os.path.abspath(folder)).relative_to(os.path.abspath(base))
        except ValueError:
            continue
        if kind == "project":
            return kind, rel.as_posix()
        return kind, f"~/{rel.as_posix()}" if rel.parts else "~"
    return None
