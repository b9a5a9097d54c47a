"""Round-trip frontmatter edits: change one field, leave every other byte as it was.

ruamel.yaml's composer turns the block into nodes that know exactly where they start and
end in the text; ``edit_spans.py`` turns them into the lines each field owns. An edit
replaces only the characters of a one-line value (so a comment after it stays), or else
only the lines of the field being changed, with a snippet dumped by ruamel.yaml.
Comments, key order, quoting, line endings and the body are never re-emitted, so they
cannot drift. Every edit is read back with the reading parser: the
field must read exactly as requested and every other field exactly as before. What the
editor cannot locate with certainty (a ``? key``, a field merged in by ``<<``, a key
written twice) is refused, never guessed.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import date
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..errors import UneditableFrontmatter
from . import memory as memory_mod
from .body import in_line_endings
from .edit_spans import (
    Block,
    Entry,
    column_of,
    compose,
    editor_yaml,
    find_entry,
    line_at,
    line_start,
    line_text,
    owns,
    value_of,
)
from .fields import Problem

DELETE = None
"""Pass as a value to remove a field."""

NESTED_TYPE = "metadata.type"
_NULL_TAG = "tag:yaml.org,2002:null"
_COMPARE_LIMIT = 100_000

_Splice = tuple[int, int, str]
"""Replace ``block[start:end]`` with the text."""

_NOTHING: _Splice = (0, 0, "")


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
    before = _loaded_or_refuse(text, file)
    if _already(before, key, value):
        return text  # setting a field to what it already is must not change a byte
    candidates = (value, _quoted(value)) if isinstance(value, (str, list, tuple)) else (value,)
    for candidate in candidates:
        edited, path = _set_one(text, key, candidate, file)
        if _reads_back(before, edited, path, value):
            return edited
    raise UneditableFrontmatter(
        file, f"{key} would not read back as {value!r} without changing another field")


def _quoted(value: object) -> object:
    """``value`` with every string double-quoted, so YAML cannot read it as anything else."""
    if isinstance(value, str):
        return DoubleQuotedScalarString(value)
    if isinstance(value, (list, tuple)):
        return [_quoted(v) for v in value]
    return value


def _set_one(text: str, key: str, value: object, file: str) -> tuple[str, str]:
    """``text`` with one field spliced in, and the key actually set (``type`` resolved)."""
    parts = memory_mod.split(text)
    if parts.frontmatter is None:
        key = NESTED_TYPE if key == "type" else key
        return _with_new_block(text, parts.body_start, key, value), key
    newline = "\r\n" if text[: parts.fm_start].endswith("\r\n") else "\n"
    block = compose(parts.frontmatter, newline, file)
    if key == "type":
        key = _type_key(block.root)
    start, end, new = _edit(block, key, value)
    edited = block.text[:start] + new + block.text[end:]
    return text[: parts.fm_start] + edited + text[parts.fm_end:], key


def _type_key(root: MappingNode | None) -> str:
    metadata = value_of(root, "metadata")
    if isinstance(metadata, MappingNode) and value_of(metadata, "type") is not None:
        return NESTED_TYPE
    return "type" if value_of(root, "type") is not None else NESTED_TYPE


# Editing -------------------------------------------------------------------------------

def _edit(block: Block, key: str, value: object) -> _Splice:
    if key == NESTED_TYPE:
        return _edit_metadata_type(block, value)
    return _edit_in(block, block.root, len(block.starts), key, value)


def _edit_metadata_type(block: Block, value: object) -> _Splice:
    """Set ``metadata.type``; a missing, null or ``{}`` metadata becomes a fresh block."""
    entry = find_entry(block, block.root, len(block.starts), "metadata")
    fresh = {"metadata": {"type": value}}
    if entry is None:
        return _NOTHING if value is DELETE else _add(block, block.root, len(block.starts),
                                                     fresh)
    metadata = entry.value
    if _is_empty(metadata):
        return _NOTHING if value is DELETE else _lines(
            block, entry, _snippet(fresh, column_of(block, entry.key), block.newline))
    if not isinstance(metadata, MappingNode) or not owns(entry.key, metadata):
        raise UneditableFrontmatter(block.file, "'metadata' is not a mapping written in place")
    return _edit_in(block, metadata, entry.end, "type", value)


def _is_empty(node: Node) -> bool:
    if isinstance(node, ScalarNode):
        return bool(node.tag == _NULL_TAG)
    return isinstance(node, MappingNode) and not node.value


def _edit_in(block: Block, parent: MappingNode | None, limit: int, key: str,
             value: object) -> _Splice:
    entry = find_entry(block, parent, limit, key)
    if entry is None:
        return _NOTHING if value is DELETE else _add(block, parent, limit, {key: value})
    assert parent is not None
    if value is DELETE:
        return _remove_from_flow(block, parent, entry) if parent.flow_style else _lines(
            block, entry, "")
    inline = _inline_value(value)
    if inline is not None and _fits_inline(block, entry):
        return entry.value.start_mark.index, entry.value.end_mark.index, inline
    if parent.flow_style:
        raise UneditableFrontmatter(block.file, f"'{key}' sits in a flow mapping {{...}}")
    return _lines(block, entry, _snippet({key: value}, column_of(block, entry.key),
                                         block.newline))


def _fits_inline(block: Block, entry: Entry) -> bool:
    """True when the value is one line of its own after the key: swap just its characters."""
    value = entry.value
    start, end = value.start_mark.index, value.end_mark.index
    if not owns(entry.key, value) or end <= start:
        return False
    if isinstance(value, ScalarNode) and value.style in ("|", ">"):
        return False
    if isinstance(value, (MappingNode, SequenceNode)) and not value.flow_style:
        return False
    return line_at(block, end - 1) == entry.start


def _lines(block: Block, entry: Entry, snippet: str) -> _Splice:
    return line_start(block, entry.start), line_start(block, entry.end), snippet


def _add(block: Block, parent: MappingNode | None, limit: int,
         fields: Mapping[str, object]) -> _Splice:
    """Add a missing key after the last line of ``parent``, at its keys' indentation."""
    if parent is not None and parent.flow_style:
        return _add_to_flow(block, parent, fields)
    at = limit
    while at > 0 and not line_text(block, at - 1).strip():
        at -= 1
    column = column_of(block, parent.value[0][0]) if parent is not None and parent.value else 0
    return line_start(block, at), line_start(block, at), _snippet(fields, column, block.newline)


def _add_to_flow(block: Block, parent: MappingNode, fields: Mapping[str, object]) -> _Splice:
    """``{a: 1}`` becomes ``{a: 1, key: value}``; the value must fit on one line."""
    [(key, value)] = fields.items()
    inline = _inline_value(value)
    if inline is None or not parent.value:
        raise UneditableFrontmatter(block.file, f"'{key}' cannot be added to a flow mapping")
    last_key, last_value = parent.value[-1]
    at = last_value.end_mark.index if owns(last_key, last_value) else last_key.end_mark.index
    return _inside(block, parent, (at, at, f", {key}: {inline}"))


def _remove_from_flow(block: Block, parent: MappingNode, entry: Entry) -> _Splice:
    """Drop ``key: value`` and one comma next to it from a ``{...}`` mapping."""
    keys = [k for k, _ in parent.value]
    at = next(i for i, k in enumerate(keys) if k is entry.key)
    end = entry.value.end_mark.index if owns(entry.key, entry.value) else entry.key.end_mark.index
    if at + 1 < len(keys):
        return _inside(block, parent, (entry.key.start_mark.index, keys[at + 1].start_mark.index,
                                       ""))
    if at == 0:
        return _inside(block, parent, (entry.key.start_mark.index, end, ""))
    previous = parent.value[at - 1]
    start = previous[1].end_mark.index if owns(*previous) else previous[0].end_mark.index
    return _inside(block, parent, (start, end, ""))


def _inside(block: Block, parent: MappingNode, splice: _Splice) -> _Splice:
    """``splice`` if it lies within the braces of ``parent``; refuse anything else."""
    if parent.start_mark.index < splice[0] <= splice[1] < parent.end_mark.index:
        return splice
    raise UneditableFrontmatter(block.file, "a flow mapping {...} it cannot edit in place")


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
    editor_yaml().dump(_yaml_value(dict(fields)), out)
    lines = out.getvalue().splitlines()
    return "".join(" " * indent + line + newline for line in lines)


def _inline_value(value: object) -> str | None:
    """The one-line YAML text of a value, or None if it needs several lines."""
    dumped = _snippet({"k": value}, 0, "\n")
    if dumped.count("\n") != 1:
        return None
    return dumped[len("k: "):-1]


# Reading back --------------------------------------------------------------------------

def _loaded_or_refuse(text: str, file: str) -> dict[str, Any]:
    """The frontmatter as the reader sees it; refuse a file the reader has problems with.

    Whatever the reader had to guess at (a block read key by key, a duplicate key, a tab
    YAML 1.2 refuses) ``sagemem show`` lists, and an edit on top of a guess could destroy
    data, so the first such problem is the reason given.
    """
    parts = memory_mod.split(text)
    if parts.frontmatter is None:
        if parts.problem is not None:
            raise UneditableFrontmatter(file, parts.problem.message)
        return {}
    problems: list[Problem] = []
    first_line = memory_mod.line_of(text, parts.fm_start)
    loaded = memory_mod.load_frontmatter(parts.frontmatter, first_line, problems)
    if problems:
        first = problems[0]
        raise UneditableFrontmatter(file, f"line {first.line}: {first.field} {first.message}")
    return loaded


def _loaded(text: str) -> dict[str, Any] | None:
    """The frontmatter as the reader sees it, or None if it has any problem."""
    parts = memory_mod.split(text)
    problems: list[Problem] = []
    loaded = memory_mod.load_frontmatter(parts.frontmatter or "", 1, problems)
    return None if problems or parts.problem else loaded


def field_value(text: str, key: str, file: str = "memory") -> object:
    """What ``key`` reads as in ``text``, None when unset — what a field-level write
    compares with the value its caller read, to tell a change to this field from one to
    another field (which is no conflict)."""
    return _value(_loaded_or_refuse(text, file), key)


def _value(loaded: dict[str, Any], key: str) -> Any:
    """``key``'s value; ``type`` where it is in effect (``metadata.type`` wins)."""
    if key != "type":
        return _lookup(loaded, key)
    nested = _lookup(loaded, NESTED_TYPE)
    return nested if nested is not None else loaded.get("type")


def _already(loaded: dict[str, Any], key: str, value: object) -> bool:
    """True when the field already reads as ``value``."""
    if key != "type":
        return _matches(_lookup(loaded, key), value)
    return bool(_value(loaded, key) == value)


def _lookup(loaded: dict[str, Any], key: str) -> Any:
    current: Any = loaded
    for part in key.split("."):
        current = current.get(part) if isinstance(current, dict) else None
    return current


def _reads_back(before: dict[str, Any], text: str, key: str, value: object) -> bool:
    """The edited field reads as ``value`` and every other field as it did before."""
    after = _loaded(text)
    if after is None or not _matches(_lookup(after, key), value):
        return False
    top, _, leaf = key.partition(".")
    if not _same_except(before, after, top):
        return False
    if not leaf:
        return True
    return _same_except(_section(before, top), _section(after, top), leaf)


def _section(loaded: dict[str, Any], key: str) -> dict[str, Any]:
    inner = loaded.get(key)
    return inner if isinstance(inner, dict) else {}


def _matches(current: object, value: object) -> bool:
    if value is DELETE:
        return current is None
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(current, date) and isinstance(value, date):
        return current == value
    return bool(current == value and type(current) is type(value))


def _same_except(before: dict[str, Any], after: dict[str, Any], skip: str) -> bool:
    keys = before.keys() - {skip}
    return keys == after.keys() - {skip} and all(_same(before[k], after[k]) for k in keys)


def _same(a: object, b: object) -> bool:
    """Deep equality with exact types. Pairs already compared are skipped, so an alias
    bomb costs what its text costs; past a bound it gives up and says unequal."""
    pending, seen = [(a, b)], set()
    for _ in range(_COMPARE_LIMIT):
        if not pending:
            return True
        x, y = pending.pop()
        if (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y):
            return False
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif x != y and not (x != x and y != y):  # NaN equals nothing, not even itself
            return False
    return False


def render_new(fields: Mapping[str, object], body: str, newline: str = "\n") -> str:
    """The text of a new memory file: frontmatter with ``fields`` in order, then ``body``.

    ``type`` lands in ``metadata.type``. Built by setting each field on an empty block,
    so every value goes through the read-back check of an edit (``yes`` stays text).
    The body takes ``newline`` too: a CRLF body from an MCP client made a file sagemem
    wrote itself fail the audit's ``crlf_line_endings``.
    """
    text = f"---{newline}---{newline}"
    if body:
        text += newline + in_line_endings(body.rstrip("\r\n"), newline) + newline
    present = {k: v for k, v in fields.items() if v not in (None, (), [])}
    return set_fields(text, present, "new memory")
