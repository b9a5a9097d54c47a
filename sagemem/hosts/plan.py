"""``sagemem install <host>`` and ``--undo``: every change planned before any is made,
then written with Claude Code's backups and records (``claude_code/changes.py``).

The guarantees are the Claude Code install's: a second install changes nothing; undo
of a file nobody touched since gives back its bytes exactly (a file install created is
removed, and the folders it made once empty); a file changed since loses only what the
record says install wrote. Unlike Claude Code's files, a symlinked host file is refused:
these hosts' files are seldom managed by dotfiles, and an edit through a link lands in
a file we did not mean to change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..claude_code.changes import (
    RECORDS_DIR,
    FileChange,
    OwnedHook,
    Record,
    read_backup,
    read_record,
    sha256,
)
from ..claude_code.settings_file import parse_text, parsed, read_document, value_at
from ..claude_code.wiring import Wiring
from ..errors import HostConfigError, ScopeNotSupported
from . import json_entries as entries
from .spec import SERVER_NAME, Host, Scope
from .toml_file import add_table, has_block, read_toml, remove_table, with_text


@dataclass(frozen=True)
class HostPlan:
    """The changes one host's install (or undo) makes in one scope, what it leaves and
    why, the records folder, and (undo) the files whose backups and records go."""

    host: Host
    scope: Scope
    records: Path
    changes: tuple[FileChange, ...]
    notices: tuple[str, ...] = ()
    forget: tuple[Path, ...] = ()


def host_files(host: Host, scope: Scope, *, home: Path, project: Path) -> tuple[Path, ...]:
    """The server file and (if separate) the hooks file; a scope without one refused."""
    if scope == "project" and os.path.realpath(project) == os.path.realpath(home):
        raise ScopeNotSupported(host.name, scope, "the current directory is your home, "
                                "whose files are the user scope's; run it in the project")
    server = host.locate(scope, home, project)
    if server is None:
        raise ScopeNotSupported(host.name, scope, host.unlocated)
    hooks = host.hooks.locate(scope, home, project) if host.hooks else None
    return (server,) if hooks is None or hooks == server else (server, hooks)


def records_of(paths: tuple[Path, ...]) -> Path:
    """The records folder: beside the host's file, as ``.claude/sagemem-install/``."""
    return paths[0].parent / RECORDS_DIR


def plan_install(host: Host, scope: Scope, wiring: Wiring, *, home: Path,
                 project: Path) -> HostPlan:
    """Every change install would make; a file already wired the same is left out."""
    paths = host_files(host, scope, home=home, project=project)
    records = records_of(paths)
    for path in paths:
        _refuse_link(path)
    changes: list[FileChange] = []
    notices: list[str] = []
    if host.format == "toml":
        _add(changes, paths[0], _wired_toml(host, paths[0], wiring, records), "MCP server")
    else:
        changes += _wired_json(host, paths[0], wiring, records, notices,
                               hooks_here=len(paths) == 1 and host.hooks is not None)
    if len(paths) > 1:
        changes += _wired_json(host, paths[1], wiring, records, notices, server=False,
                               hooks_here=True)
    if scope == "project" and changes:
        notices.append(PROJECT_PATHS)
    return HostPlan(host, scope, records, tuple(changes), tuple(notices))


def _wired_json(host: Host, path: Path, wiring: Wiring, records: Path, notices: list[str],
                *, server: bool = True, hooks_here: bool) -> list[FileChange]:
    """A JSON file's change: the server (``server``), the hooks (``hooks_here``)."""
    doc = read_document(path)
    record = read_record(path, records)
    text: str = doc.text
    owned: tuple[OwnedHook, ...] = ()
    if server:
        text = entries.wire_server(doc, text, host.servers_key, host.server(wiring),
                                   ours=_server_ours(record, path, records,
                                                     host.servers_key))
    if hooks_here and host.hooks is not None:
        hook = host.hooks.hook(wiring)
        text, owned = entries.wire_hooks(doc, text, host.hooks.events, hook,
                                         _recorded(record))
        notices += entries.strangers(path, parsed(text), host.hooks.events,
                                     host.name, owned, hook)
    changes: list[FileChange] = []
    _add(changes, path, (doc.raw, text.encode("utf-8")), _what(host, server, hooks_here),
         owned)
    return changes


def _what(host: Host, server: bool, hooks_here: bool) -> str:
    if server and hooks_here and host.hooks is not None:
        return "MCP server and hooks"
    return "MCP server" if server else "hooks"


PROJECT_PATHS = ("the project's file names this machine's sagemem and memory folder by "
                 "their absolute paths: a teammate runs install --project for themselves "
                 "rather than sharing the entry")


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise HostConfigError(path, "is a symlink; sagemem edits only a real file there "
                                    "(edit the file it points to by hand, or replace the "
                                    "link with a copy)")


def _recorded(record: Record | None) -> tuple[OwnedHook, ...]:
    return record.hooks or () if record is not None else ()


def _server_ours(record: Record | None, path: Path, records: Path, key: str) -> bool:
    """Install wrote this file and the original held no server of our name."""
    if record is None:
        return False
    backup = read_backup(path, records)
    old = parsed(backup.decode("utf-8", "replace")) if backup else {}
    return value_at(old, (key, SERVER_NAME)) is None


def _wired_toml(host: Host, path: Path, wiring: Wiring, records: Path
                ) -> tuple[bytes | None, bytes]:
    """The TOML file's bytes before and after: our table appended (an older one of ours
    taken out first); a table of that name install did not write is refused."""
    doc = read_toml(path)
    table = (host.servers_key, SERVER_NAME)
    entry = host.server(wiring)
    servers = doc.data.get(host.servers_key)
    current = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if current == entry:
        return doc.raw, doc.raw or b""
    if current is not None:
        if read_record(path, records) is None or not has_block(doc.text, table):
            raise HostConfigError(path, f"has an MCP server [{'.'.join(table)}] that "
                                        "install did not write; rename or remove it, then "
                                        "install again")
        text = remove_table(doc, table)
        if text is None:
            raise HostConfigError(path, f"has [{'.'.join(table)}] changed by hand; remove "
                                        "it, then install again")
        doc = with_text(doc, text)
    return doc.raw, add_table(doc, table, entry, host.name).encode("utf-8")


def _add(changes: list[FileChange], path: Path, texts: tuple[bytes | None, bytes],
         what: str, owned: tuple[OwnedHook, ...] = ()) -> None:
    before, after = texts
    if after != before:
        changes.append(FileChange(path, before, after, what, owned))


# -- undo --------------------------------------------------------------------------------

def plan_undo(host: Host, scope: Scope, *, home: Path, project: Path) -> HostPlan:
    """What taking the install out would change: a file still as sagemem left it gets its
    backup back byte for byte (one sagemem created is removed); one changed since keeps
    the changes and loses only what install wrote."""
    paths = host_files(host, scope, home=home, project=project)
    records = records_of(paths)
    for path in paths:
        _refuse_link(path)
    forget = tuple(p for p in paths if read_record(p, records) is not None
                   or read_backup(p, records) is not None)
    changes: list[FileChange] = []
    notices: list[str] = []
    for path in forget:
        change = _undo_one(host, path, path == paths[0], records, notices)
        if change is not None:
            changes.append(change)
    return HostPlan(host, scope, records, tuple(changes), tuple(notices), forget)


def _undo_one(host: Host, path: Path, is_server: bool, records: Path,
              notices: list[str]) -> FileChange | None:
    record, backup = read_record(path, records), read_backup(path, records)
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        return None
    hooks_here = host.hooks is not None and (not is_server or host.format == "json")
    what = _what(host, is_server, hooks_here)
    if record is not None and record.sha256 == sha256(current) and \
            (record.created or backup is not None):
        return FileChange(path, current, None if record.created else backup, what)
    if host.format == "toml" and is_server:
        after = remove_table(read_toml(path), (host.servers_key, SERVER_NAME))
        if after is None:
            notices.append(f"{path}: sagemem's table is not there as install wrote it: "
                           "left as it is")
            return None
    else:
        text, _ = parse_text(path, current)
        old = parsed(backup.decode("utf-8", "replace")) if backup else {}
        events = host.hooks.events if host.hooks is not None and hooks_here else ()
        after = entries.strip(text, old, host.servers_key if is_server else None, events,
                              _recorded(record))
    after_bytes = after.encode("utf-8")
    return FileChange(path, current, after_bytes, what) if after_bytes != current else None
