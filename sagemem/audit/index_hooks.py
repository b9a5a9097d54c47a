"""The audit's check of MEMORY.md hooks against the descriptions they were written from.

An index line's hook is stale when the memory's description changed (``set``, ``edit``,
an MCP or memory-tool write) and its MEMORY.md line was left behind. What proves it is
the memory's own past: the hook still says what the description said before a sagemem
write replaced it (the replaced bytes are kept, ``writes/versions.py``, and the change
log says whose they were). A hook that was never the memory's description — a person's
or Claude Code's auto memory's own short words — is never reported.

Before this, every hook that differed from its description was reported as soon as one
line anywhere repeated its description: one ``sagemem new`` on the sample folder turned
0 hints into 22 (issue 20). A description changed outside sagemem (an editor, an agent
host's own file tools) leaves no kept version, so its line is not reported: a hint
missed is a look not taken; a false one is noise on every line a person wrote.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import SagememError
from ..files import indexfile
from ..files.memory import Memory, parse
from ..files.paths import INDEX_FILE, name_key
from ..writes import changelog, versions
from .scan import Finding, Scan, hint


def check_index_hooks(s: Scan, target_of: dict[str, str | None]) -> Iterable[Finding]:
    """Lines whose hook is a former description of their memory, not its current one.
    ``target_of`` maps each index line's target to the file it names (None: no file)."""
    if s.index is None:
        return []
    described = {name_key(m.file): m for m in s.memories}
    drifted = []
    for entry in s.index.entries:
        target = target_of.get(entry.target)
        memory = described.get(name_key(target)) if target is not None else None
        if memory is not None and entry.hook and memory.description and \
                not indexfile.hook_matches(entry.hook, memory.description):
            drifted.append((entry, memory))
    if not drifted:
        return []  # the change log is read only when some hook differs
    former = former_descriptions(s, {m.file for _, m in drifted})
    return [_stale(entry.line, memory) for entry, memory in drifted
            if any(indexfile.hook_matches(entry.hook, d) for d in former.get(memory.file, ()))]


def _stale(line: int, memory: Memory) -> Finding:
    return hint("index_stale_hook", INDEX_FILE, line,
                f"the line of {memory.file} no longer matches its description "
                f"(sagemem set {memory.file} description=… --update-index, "
                "or edit the line)", target=memory.file)


def former_descriptions(s: Scan, files: set[str]) -> dict[str, list[str]]:
    """Per file, the descriptions of the versions sagemem writes replaced (under this
    name or one it was renamed from), as far as kept copies still hold them."""
    entries = changelog.read(s.store.state_dir).entries  # newest first
    kept = versions.kept(s.store.state_dir)
    found: dict[str, list[str]] = {}
    for file in files:
        revisions = [r for r in _replaced(entries, file) if r in kept]
        found[file] = [d for r in revisions if (d := _description(s, r, file))]
    return found


def _replaced(entries: Iterable[changelog.Entry], file: str) -> list[str]:
    """The revisions sagemem writes of ``file`` replaced, following renames back."""
    names = {name_key(file)}
    replaced: list[str] = []
    for item in entries:
        if item.to is not None and name_key(item.to) in names:
            names.add(name_key(item.file))
        if name_key(item.file) in names and item.before and item.before != item.after \
                and item.before not in replaced:
            replaced.append(item.before)
    return replaced


def _description(s: Scan, revision: str, file: str) -> str | None:
    data = versions.load(s.store.state_dir, revision)
    if data is None:
        return None
    try:
        return parse(data, file).description
    except SagememError:
        return None
