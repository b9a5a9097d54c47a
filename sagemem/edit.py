"""Round-trip frontmatter edits: change one field, leave every other byte as it was.

ruamel.yaml's round-trip loader tells where each key sits (line and column); the edit
replaces only the lines (or, for a one-line scalar, only the characters) of the field
being changed, with a snippet dumped by ruamel.yaml. Comments, key order, quoting,
line endings and the body are never re-emitted, so they cannot drift. Every edit is
read back with the reading parser and must yield exactly the requested value.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from . import memory as memory_mod
from .errors import UneditableFrontmatter

DELETE = None
"""Pass as a value to remove a field."""

NESTED_TYPE = "metadata.type"


@dataclass(frozen=True)
class _Place:
    """A field's lines inside the frontmatter block: [start, end) and its indentation."""

    start: int
    end: int
    indent: int
    value_line: int
    value_col: int
    scalar: bool  # a scalar or a flow sequence: its text can be swapped within the line


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.allow_unicode = True
    return yaml


def set_fields(text: str, changes: Mapping[str, object], file: str = "memory") -> str:
    """Return ``text`` with the given frontmatter fields set (``None`` removes one).

    Keys are YAML keys; ``metadata.type`` addresses the nested type. ``type`` sets the
    type wherever the file keeps it (``metadata.type`` wins, as on reading).
    """
    for key, value in changes.items():
        text = _set_checked(text, key, value, file)
    return text


def _set_checked(text: str, key: str, value: object, file: str) -> str:
    """Set one field and read it back; a value read differently is re-emitted quoted."""
    if _already(text, key, value):
        return text  # setting a field to what it already is must not change a byte
    edited, key = _set_one(text, key, value, file)
    if _reads_back(edited, key, value):
        return edited
    if isinstance(value, (str, list, tuple)):
        edited, key = _set_one(text, key, _quoted(value), file)
        if _reads_back(edited, key, value):
            return edited
    raise UneditableFrontmatter(file, f"{key} would not read back as {value!r}")


def _quoted(value: object) -> object:
    """``value`` with every string double-quoted, so YAML cannot read it as anything else."""
    if isinstance(value, str):
        return DoubleQuotedScalarString(value)
    if isinstance(value, (list, tuple)):
        return [_quoted(v) for v in value]
    return value


def _set_one(text: str, key: str, value: object, file: str) -> tuple[str, str]:
    parts = memory_mod.split(text)
    if parts.frontmatter is None:
        if parts.problem is not None:
            raise UneditableFrontmatter(file, parts.problem.message)
        key = NESTED_TYPE if key == "type" else key
        return _with_new_block(text, parts.body_start, key, value), key
    block = parts.frontmatter
    data = _load_block(block, file)
    if key == "type":
        key = _type_key(data)
    newline = "\r\n" if block.endswith("\r\n") else "\n"
    edited = _edit_block(block, data, key, value, newline)
    return text[: parts.fm_start] + edited + text[parts.fm_end:], key


def _load_block(block: str, file: str) -> CommentedMap:
    try:
        data = _yaml().load(block)
    except Exception as exc:  # any YAML error: editing blind could destroy data
        raise UneditableFrontmatter(file, f"it does not parse ({type(exc).__name__})") from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, CommentedMap):
        raise UneditableFrontmatter(file, "it is not a mapping of fields")
    return data


def _type_key(data: CommentedMap) -> str:
    metadata = data.get("metadata")
    if isinstance(metadata, CommentedMap) and "type" in metadata:
        return NESTED_TYPE
    if "type" in data:
        return "type"
    return NESTED_TYPE


def _edit_block(block: str, data: CommentedMap, key: str, value: object, newline: str) -> str:
    lines = block.splitlines(keepends=True)
    parent, leaf, base_end = _parent_of(data, key, len(lines))
    if parent is None:  # metadata missing or not a mapping: add a fresh one
        if value is DELETE:
            return block
        return _insert(lines, len(lines), _snippet({"metadata": {"type": value}}, 0, newline))
    if leaf not in parent:
        if value is DELETE:
            return block
        return _insert_new(lines, parent, leaf, value, base_end, newline)
    place = _place(lines, parent, leaf, base_end)
    if value is DELETE:
        return "".join(lines[: place.start] + lines[place.end:])
    inline = _inline_value(value) if place.scalar else None
    flow = bool(parent is not data and parent.fa.flow_style())
    if inline is not None and place.value_line == place.start and (
            flow or place.end - place.start == 1):
        lines[place.start] = _replace_scalar(lines[place.start], place.value_col, inline, flow)
        return "".join(lines)
    if flow:
        raise UneditableFrontmatter("memory", f"'{key}' sits in a flow mapping {{...}}")
    snippet = _snippet({leaf: value}, place.indent, newline)
    return "".join([*lines[:place.start], snippet, *lines[place.end:]])


def _parent_of(data: CommentedMap, key: str, n_lines: int) -> tuple[Any, str, int]:
    """The mapping that holds ``key``, the key within it, and where that mapping ends."""
    if key != NESTED_TYPE:
        return data, key, n_lines
    metadata = data.get("metadata")
    if not isinstance(metadata, CommentedMap):
        if "metadata" in data:
            raise UneditableFrontmatter("memory", "'metadata' is not a mapping")
        return None, "type", n_lines
    start = data.lc.key("metadata")[0]
    return metadata, "type", _next_key_line(data, start, n_lines)


def _next_key_line(mapping: CommentedMap, line: int, default: int) -> int:
    later = [mapping.lc.key(k)[0] for k in mapping if mapping.lc.key(k)[0] > line]
    return min(later, default=default)


def _place(lines: list[str], parent: CommentedMap, leaf: str, base_end: int) -> _Place:
    start, indent = parent.lc.key(leaf)
    end = _next_key_line(parent, start, base_end)
    while end - 1 > start and _is_filler(lines[end - 1]):
        end -= 1  # blank and comment lines before the next key belong to the next key
    value_line, value_col = parent.lc.value(leaf)
    value = parent[leaf]
    scalar = not isinstance(value, (CommentedMap, CommentedSeq)) or bool(
        isinstance(value, CommentedSeq) and value.fa.flow_style()
    )
    return _Place(start, end, indent, value_line, value_col, scalar)


def _is_filler(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _insert_new(lines: list[str], parent: CommentedMap, leaf: str, value: object,
                base_end: int, newline: str) -> str:
    """Add a missing key after the last key of a nested block mapping, else at the end."""
    nested_block = base_end < len(lines) and len(parent) and not parent.fa.flow_style()
    if nested_block:
        keys = list(parent)
        last = _place(lines, parent, keys[-1], base_end)
        indent = parent.lc.key(keys[0])[1]
        return _insert(lines, last.end, _snippet({leaf: value}, indent, newline))
    if base_end < len(lines):  # an empty or flow-style metadata mapping: rewrite it whole
        raise UneditableFrontmatter("memory", "'metadata' is written in flow style {...}")
    at = len(lines)
    while at > 0 and not lines[at - 1].strip():
        at -= 1
    return _insert(lines, at, _snippet({leaf: value}, 0, newline))


def _insert(lines: list[str], at: int, snippet: str) -> str:
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\r\n" if snippet.endswith("\r\n") else "\n"
    return "".join([*lines[:at], snippet, *lines[at:]])


def _with_new_block(text: str, body_start: int, key: str, value: object) -> str:
    if value is DELETE:
        return text
    fields: dict[str, object] = {"metadata": {"type": value}} if key in ("type", NESTED_TYPE) \
        else {key: value}
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text[:body_start]
    return f"{head}---{newline}{_snippet(fields, 0, newline)}---{newline}{text[body_start:]}"


def _yaml_value(value: object) -> object:
    """Plain Python values in the shapes memory files use (lists in flow style)."""
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_yaml_value(v) for v in value)
        seq.fa.set_flow_style()
        return seq
    if isinstance(value, dict):
        return CommentedMap((k, _yaml_value(v)) for k, v in value.items())
    return value


def _snippet(fields: Mapping[str, object], indent: int, newline: str) -> str:
    out = io.StringIO()
    _yaml().dump(_yaml_value(dict(fields)), out)
    lines = out.getvalue().splitlines()
    return "".join(" " * indent + line + newline for line in lines)


def _inline_value(value: object) -> str | None:
    """The one-line YAML text of a value, or None if it needs several lines."""
    dumped = _snippet({"k": value}, 0, "\n")
    if dumped.count("\n") != 1:
        return None
    return dumped[len("k: "):-1]


def _replace_scalar(line: str, col: int, new: str, flow: bool = False) -> str:
    """Replace a one-line value that starts at ``col``, keeping what follows it."""
    content = line.rstrip("\r\n")
    ending = line[len(content):]
    comment = _value_end(content, col, flow)
    value_end = len(content[:comment].rstrip())
    return content[:col] + new + content[value_end:] + ending


def _value_end(line: str, start: int, flow: bool) -> int:
    """Where a value starting at ``start`` ends: at a comment, or in a flow mapping at
    the next ``,`` or ``}`` (quotes respected)."""
    quote: str | None = None
    i = start
    while i < len(line):
        ch = line[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if quote and ch == quote:
            if quote == "'" and line[i + 1: i + 2] == "'":
                i += 2
                continue
            quote = None
        elif not quote and ch in "\"'" and (i == start or line[i - 1] in " [,{"):
            quote = ch
        elif not quote and ((ch == "#" and i > start and line[i - 1] in " \t")
                            or (flow and ch in ",}")):
            return i
        i += 1
    return len(line)


def _already(text: str, key: str, value: object) -> bool:
    """True when the field already reads as ``value`` (``type`` where it is in effect)."""
    if key != "type":
        return _reads_back(text, key, value)
    loaded = _loaded(text)
    if loaded is None:
        return False
    nested = _lookup(loaded, NESTED_TYPE)
    return (nested if nested is not None else loaded.get("type")) == value


def _loaded(text: str) -> dict[str, Any] | None:
    """The frontmatter as the reader sees it, or None if it has any problem."""
    parts = memory_mod.split(text)
    problems: list[memory_mod.Problem] = []
    loaded = memory_mod.load_frontmatter(parts.frontmatter or "", 1, problems)
    return None if problems else loaded


def _lookup(loaded: dict[str, Any], key: str) -> Any:
    current: Any = loaded
    for part in key.split("."):
        current = current.get(part) if isinstance(current, dict) else None
    return current


def _reads_back(text: str, key: str, value: object) -> bool:
    loaded = _loaded(text)
    if loaded is None:
        return False
    current = _lookup(loaded, key)
    if value is DELETE:
        return current is None
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(current, date) and isinstance(value, date):
        return current == value
    return bool(current == value and type(current) is type(_plain(value)))


def _plain(value: object) -> object:
    if isinstance(value, str):
        return str(value)
    return value


def render_new(fields: Mapping[str, object], body: str, newline: str = "\n") -> str:
    """The text of a new memory file: frontmatter with ``fields`` in order, then ``body``.

    ``type`` lands in ``metadata.type``. Built by setting each field on an empty block,
    so every value goes through the read-back check of an edit (``yes`` stays text).
    """
    text = f"---{newline}---{newline}"
    if body:
        text += newline + body.rstrip("\r\n") + newline
    present = {k: v for k, v in fields.items() if v not in (None, (), [])}
    return set_fields(text, present, "new memory")
