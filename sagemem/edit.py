"""Round-trip frontmatter edits: change one field, leave every other byte as it was.

ruamel.yaml's composer turns the block into nodes that know exactly where they start and
end in the text. An edit replaces only the characters of a one-line value (so a comment
after it stays), or else only the lines of the field being changed, with a snippet
dumped by ruamel.yaml. Comments, key order, quoting, line endings and the body are never
re-emitted, so they cannot drift. Every edit is read back with the reading parser: the
field must read exactly as requested and every other field exactly as before. What the
editor cannot locate with certainty (a ``? key``, a field merged in by ``<<``, a key
written twice) is refused, never guessed.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from . import memory as memory_mod
from .errors import UneditableFrontmatter

DELETE = None
"""Pass as a value to remove a field."""

NESTED_TYPE = "metadata.type"
_NULL_TAG = "tag:yaml.org,2002:null"
# The line breaks YAML (and so ruamel's marks) count; str.splitlines knows more of them.
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_COMPARE_LIMIT = 100_000

_Splice = tuple[int, int, str]
"""Replace ``block[start:end]`` with the text."""

_NOTHING: _Splice = (0, 0, "")


@dataclass(frozen=True)
class _Block:
    """The frontmatter being edited: its text, its composed root, where each line starts."""

    text: str
    root: MappingNode | None
    starts: tuple[int, ...]
    newline: str
    file: str


@dataclass(frozen=True)
class _Entry:
    """One ``key: value`` of a mapping: its nodes and the lines [start, end) it owns."""

    key: Node
    value: Node
    start: int
    end: int


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
    block = _compose(parts.frontmatter, newline, file)
    if key == "type":
        key = _type_key(block.root)
    start, end, new = _edit(block, key, value)
    edited = block.text[:start] + new + block.text[end:]
    return text[: parts.fm_start] + edited + text[parts.fm_end:], key


def _compose(text: str, newline: str, file: str) -> _Block:
    try:
        root = _yaml().compose(text)
    except Exception as exc:  # any YAML error: editing blind could destroy data
        raise UneditableFrontmatter(file, f"it does not parse ({type(exc).__name__})") from None
    if root is not None and not isinstance(root, MappingNode):
        raise UneditableFrontmatter(file, "it is not a mapping of fields")
    if root is not None and root.flow_style:
        raise UneditableFrontmatter(file, "it is written as one flow mapping {...}")
    ends = [m.end() for m in _BREAK.finditer(text) if m.end() < len(text)]
    return _Block(text, root, tuple([0, *ends] if text else []), newline, file)


def _type_key(root: MappingNode | None) -> str:
    metadata = _value_of(root, "metadata")
    if isinstance(metadata, MappingNode) and _value_of(metadata, "type") is not None:
        return NESTED_TYPE
    return "type" if _value_of(root, "type") is not None else NESTED_TYPE


def _value_of(mapping: MappingNode | None, name: str) -> Node | None:
    pairs = _pairs(mapping, name)
    return pairs[0][1] if pairs else None


def _pairs(mapping: MappingNode | None, name: str) -> list[tuple[Node, Node]]:
    if mapping is None:
        return []
    return [(k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.value == name]


# Positions -----------------------------------------------------------------------------

def _offset(block: _Block, line: int) -> int:
    return block.starts[line] if line < len(block.starts) else len(block.text)


def _line_at(block: _Block, index: int) -> int:
    return bisect_right(block.starts, index) - 1


def _line_text(block: _Block, line: int) -> str:
    return block.text[_offset(block, line):_offset(block, line + 1)]


def _column(block: _Block, node: Node) -> int:
    index = node.start_mark.index
    return int(index - _offset(block, _line_at(block, index)))


def _own(entry_key: Node, value: Node) -> bool:
    """False for an alias (``*name``): its node sits where the anchor was, before the key."""
    return bool(value.start_mark.index >= entry_key.end_mark.index)


# Locating an entry ---------------------------------------------------------------------

def _entry(block: _Block, parent: MappingNode | None, limit: int, key: str) -> _Entry | None:
    """The entry of ``key`` in ``parent`` (whose lines end at ``limit``), if it is there."""
    pairs = _pairs(parent, key)
    if parent is not None and not pairs and any(
            k.tag == memory_mod.MERGE_TAG for k, _ in parent.value):
        raise UneditableFrontmatter(
            block.file, f"'{key}' may come from a '<<' merge; edit it where it is defined")
    if not pairs:
        return None
    if len(pairs) > 1:
        raise UneditableFrontmatter(block.file, f"'{key}' is written more than once")
    assert parent is not None
    key_node, value = pairs[0]
    _check_key(block, parent, key_node, key)
    start = _line_at(block, key_node.start_mark.index)
    return _Entry(key_node, value, start, _entry_end(block, parent, key_node, value, limit))


def _check_key(block: _Block, parent: MappingNode, key_node: Node, key: str) -> None:
    """Refuse a key not written as a plain ``key:`` (``? key``): its span is not certain."""
    index = key_node.start_mark.index
    if parent.flow_style:
        opened = block.text[:index].rstrip()[-1:] in ("{", ",")
    else:
        opened = not block.text[_offset(block, _line_at(block, index)):index].strip()
    if not opened or not re.match(r"[ \t]*:", block.text[key_node.end_mark.index:]):
        raise UneditableFrontmatter(
            block.file, f"'{key}' is not written as a plain '{key}: value' (a '? {key}' key?)")


def _entry_end(block: _Block, parent: MappingNode, key_node: Node, value: Node,
               limit: int) -> int:
    """The line after an entry: the next key's line, less the blank lines and comments
    before it that sit no deeper than this key (they introduce the next key). A ``#``
    line inside a block scalar is text of the value, never trimmed (the value's own
    extent is a floor)."""
    later = [_line_at(block, k.start_mark.index) for k, _ in parent.value
             if k.start_mark.index > key_node.start_mark.index]
    end = min(later, default=limit)
    floor = _last_line(block, key_node, value) + 1
    column = _column(block, key_node)
    while end > floor and _is_filler(_line_text(block, end - 1), column):
        end -= 1
    return max(end, floor)


def _last_line(block: _Block, key_node: Node, value: Node) -> int:
    """The last line with text of the entry's value (the key's line for a null or alias)."""
    last = _last_index(block, value, key_node.end_mark.index)
    return _line_at(block, key_node.start_mark.index if last is None else last)


def _last_index(block: _Block, node: Node, after: int) -> int | None:
    """Where the last character of a value's own text is, None if unknown (an alias).

    A block collection's end mark runs on over the comments after it, so its last leaf
    is asked instead; scalars and flow collections end exactly where their text does.
    """
    while isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        if isinstance(node, SequenceNode):
            node, after = last, node.start_mark.index
        else:
            has_text = last[1].end_mark.index > last[1].start_mark.index
            node = last[1] if has_text and _own(last[0], last[1]) else last[0]
    start = node.start_mark.index
    text = block.text[start:node.end_mark.index].rstrip()
    return start + len(text) - 1 if text and start >= after else None


def _is_filler(line: str, column: int) -> bool:
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" \t"))
    return not stripped or (stripped.startswith("#") and indent <= column)


# Editing -------------------------------------------------------------------------------

def _edit(block: _Block, key: str, value: object) -> _Splice:
    if key == NESTED_TYPE:
        return _edit_metadata_type(block, value)
    return _edit_in(block, block.root, len(block.starts), key, value)


def _edit_metadata_type(block: _Block, value: object) -> _Splice:
    """Set ``metadata.type``; a missing, null or ``{}`` metadata becomes a fresh block."""
    entry = _entry(block, block.root, len(block.starts), "metadata")
    fresh = {"metadata": {"type": value}}
    if entry is None:
        return _NOTHING if value is DELETE else _add(block, block.root, len(block.starts),
                                                     fresh)
    metadata = entry.value
    if _is_empty(metadata):
        return _NOTHING if value is DELETE else _lines(
            block, entry, _snippet(fresh, _column(block, entry.key), block.newline))
    if not isinstance(metadata, MappingNode) or not _own(entry.key, metadata):
        raise UneditableFrontmatter(block.file, "'metadata' is not a mapping written in place")
    return _edit_in(block, metadata, entry.end, "type", value)


def _is_empty(node: Node) -> bool:
    if isinstance(node, ScalarNode):
        return bool(node.tag == _NULL_TAG)
    return isinstance(node, MappingNode) and not node.value


def _edit_in(block: _Block, parent: MappingNode | None, limit: int, key: str,
             value: object) -> _Splice:
    entry = _entry(block, parent, limit, key)
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
    return _lines(block, entry, _snippet({key: value}, _column(block, entry.key),
                                         block.newline))


def _fits_inline(block: _Block, entry: _Entry) -> bool:
    """True when the value is one line of its own after the key: swap just its characters."""
    value = entry.value
    start, end = value.start_mark.index, value.end_mark.index
    if not _own(entry.key, value) or end <= start:
        return False
    if isinstance(value, ScalarNode) and value.style in ("|", ">"):
        return False
    if isinstance(value, (MappingNode, SequenceNode)) and not value.flow_style:
        return False
    return _line_at(block, end - 1) == entry.start


def _lines(block: _Block, entry: _Entry, snippet: str) -> _Splice:
    return _offset(block, entry.start), _offset(block, entry.end), snippet


def _add(block: _Block, parent: MappingNode | None, limit: int,
         fields: Mapping[str, object]) -> _Splice:
    """Add a missing key after the last line of ``parent``, at its keys' indentation."""
    if parent is not None and parent.flow_style:
        return _add_to_flow(block, parent, fields)
    at = limit
    while at > 0 and not _line_text(block, at - 1).strip():
        at -= 1
    column = _column(block, parent.value[0][0]) if parent is not None and parent.value else 0
    return _offset(block, at), _offset(block, at), _snippet(fields, column, block.newline)


def _add_to_flow(block: _Block, parent: MappingNode, fields: Mapping[str, object]) -> _Splice:
    """``{a: 1}`` becomes ``{a: 1, key: value}``; the value must fit on one line."""
    [(key, value)] = fields.items()
    inline = _inline_value(value)
    if inline is None or not parent.value:
        raise UneditableFrontmatter(block.file, f"'{key}' cannot be added to a flow mapping")
    last_key, last_value = parent.value[-1]
    at = last_value.end_mark.index if _own(last_key, last_value) else last_key.end_mark.index
    return _inside(block, parent, (at, at, f", {key}: {inline}"))


def _remove_from_flow(block: _Block, parent: MappingNode, entry: _Entry) -> _Splice:
    """Drop ``key: value`` and one comma next to it from a ``{...}`` mapping."""
    keys = [k for k, _ in parent.value]
    at = next(i for i, k in enumerate(keys) if k is entry.key)
    end = entry.value.end_mark.index if _own(entry.key, entry.value) else entry.key.end_mark.index
    if at + 1 < len(keys):
        return _inside(block, parent, (entry.key.start_mark.index, keys[at + 1].start_mark.index,
                                       ""))
    if at == 0:
        return _inside(block, parent, (entry.key.start_mark.index, end, ""))
    previous = parent.value[at - 1]
    start = previous[1].end_mark.index if _own(*previous) else previous[0].end_mark.index
    return _inside(block, parent, (start, end, ""))


def _inside(block: _Block, parent: MappingNode, splice: _Splice) -> _Splice:
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
    _yaml().dump(_yaml_value(dict(fields)), out)
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
    problems: list[memory_mod.Problem] = []
    first_line = memory_mod.line_of(text, parts.fm_start)
    loaded = memory_mod.load_frontmatter(parts.frontmatter, first_line, problems)
    if problems:
        first = problems[0]
        raise UneditableFrontmatter(file, f"line {first.line}: {first.field} {first.message}")
    return loaded


def _loaded(text: str) -> dict[str, Any] | None:
    """The frontmatter as the reader sees it, or None if it has any problem."""
    parts = memory_mod.split(text)
    problems: list[memory_mod.Problem] = []
    loaded = memory_mod.load_frontmatter(parts.frontmatter or "", 1, problems)
    return None if problems or parts.problem else loaded


def _already(loaded: dict[str, Any], key: str, value: object) -> bool:
    """True when the field already reads as ``value`` (``type`` where it is in effect)."""
    if key != "type":
        return _matches(_lookup(loaded, key), value)
    nested = _lookup(loaded, NESTED_TYPE)
    return (nested if nested is not None else loaded.get("type")) == value


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
    """
    text = f"---{newline}---{newline}"
    if body:
        text += newline + body.rstrip("\r\n") + newline
    present = {k: v for k, v in fields.items() if v not in (None, (), [])}
    return set_fields(text, present, "new memory")
