"""What ``sagemem doctor`` says of the other hosts: for each, wired or not and in which
file, the command its entry runs still there, the file readable — one finding each.
A host with no folder of its own here (no ``~/.cursor``, no ``.cursor/``…) is not on
this machine: saying it is not wired would be a line of noise for every user without it.
Changes nothing; Claude Code's own checks stay in ``claude_code/doctor.py``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..claude_code.findings import Finding
from ..claude_code.owned import hooks_in
from ..claude_code.settings_file import read_document, value_at
from ..errors import HostConfigError, ScopeNotSupported
from .plan import host_files
from .registry import HOSTS
from .spec import SERVER_NAME, Host, Scope
from .toml_file import read_toml

SCOPES: tuple[Scope, ...] = ("user", "project")


def host_findings(*, home: Path, project: Path) -> list[Finding]:
    """One finding per host (and one per problem found in its files)."""
    findings: list[Finding] = []
    for host in HOSTS.values():
        findings += _host(host, home, project)
    return findings


def _host(host: Host, home: Path, project: Path) -> list[Finding]:
    wired: list[str] = []
    problems: list[Finding] = []
    present = False
    for scope in SCOPES:
        try:
            paths = host_files(host, scope, home=home, project=project)
        except ScopeNotSupported:
            continue
        present = present or any(p.parent.is_dir() for p in paths)
        for path in paths:
            try:
                data = _data(host, path, is_server=path == paths[0])
            except HostConfigError as exc:
                problems.append(Finding("problem", host.name, str(exc).removesuffix(
                    "; nothing was changed"), f"fix the file, then: sagemem install "
                    f"{host.name} --{scope}"))
                continue
            wired += _wired_in(host, path, data, path == paths[0], problems)
    if wired:
        return [Finding("ok", host.name, f"{host.title} wired: {'; '.join(wired)}"), *problems]
    if not present:
        return problems
    return [Finding("note", host.name, f"{host.title} not wired (sagemem install "
                                       f"{host.name})"), *problems]


def _data(host: Host, path: Path, *, is_server: bool) -> dict[str, Any]:
    if host.format == "toml" and is_server:
        return read_toml(path).data
    return read_document(path).data


def _wired_in(host: Host, path: Path, data: dict[str, Any], is_server: bool,
              problems: list[Finding]) -> list[str]:
    found: list[str] = []
    server = value_at(data, (host.servers_key, SERVER_NAME)) if is_server else None
    if isinstance(server, dict):
        command = server.get("command")
        found.append(f"MCP server in {path}")
        if not isinstance(command, str) or not _runs(command):
            problems.append(Finding("problem", host.name, f"{path}: the MCP server runs "
                                    f"{command!r}, which does not exist",
                                    f"sagemem install {host.name} (writes this sagemem)"))
    if host.hooks is not None:
        events = [e for e, _ in host.hooks.events
                  if any(f"hook {host.name}" in h.command for h in hooks_in(data, e))]
        if events:
            found.append(f"hooks ({', '.join(events)}) in {path}")
            problems += _gone_hook(host, path, data)
    return found


def _gone_hook(host: Host, path: Path, data: dict[str, Any]) -> list[Finding]:
    """A problem when the program our hook runs is gone (a deleted virtual environment):
    the host would fail that hook on every prompt."""
    assert host.hooks is not None
    for event, _ in host.hooks.events:
        for hook in hooks_in(data, event):
            words = hook.command.split()
            if f"hook {host.name}" in hook.command and words and not _runs(words[0]):
                return [Finding("problem", host.name, f"{path}: {hook.where()} runs "
                                f"{words[0]}, which does not exist",
                                f"sagemem install {host.name} (writes this sagemem)")]
    return []


def _runs(command: str) -> bool:
    """Whether a server's command is there: an absolute path a file, a bare name on PATH."""
    return os.path.isfile(command) if os.path.isabs(command) else bool(shutil.which(command))
