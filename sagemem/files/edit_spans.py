"""Where a frontmatter entry's text lies, found with ruamel.yaml's composer.

The composer's nodes know where each key and value start and end in the text; this
module turns them into the lines [start, end) an entry owns, so ``edit.py`` can replace
exactly those characters and nothing else. Whatever cannot be located with certainty (a
``? key``, a key written twice, a field merged in by ``<<``) is refused, never guessed.
Imported only by the editor: ruamel.yaml is slow to import and the hook never needs it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import UneditableFrontmatter
from .memory import MERGE_TAG

# The line breaks YAML (and so ruamel's marks) count; str.splitlines knows more of them.
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


@dataclass(frozen=True)
class Block:
    """The frontmatter being edited: its text, its composed root, where each line starts."""

    text: str
    root: MappingNode | None
    starts: tuple[int, ...]
    newline: str
    file: str


@dataclass(frozen=True)
class Entry:
    """One ``key: value`` of a mapping: its nodes and the lines [start, end) it owns."""

    key: Node
    value: Node
    start: int
    end: int


def editor_yaml() -> YAML:
    """The editor's ruamel.yaml: round-trip, quotes kept, no line ever wrapped."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.allow_unicode = True
    return yaml


def compose(text: str, newline: str, file: str) -> Block:
    try:
        root = editor_yaml().compose(text)
    except Exception as exc:  # any YAML error: editing blind could destroy data
        raise UneditableFrontmatter(file, f"it does not parse ({type(exc).__name__})") from None
    if root is not None and not isinstance(root, MappingNode):
        raise UneditableFrontmatter(file, "it is not a mapping of fields")
    if root is not None and root.flow_style:
        raise UneditableFrontmatter(file, "it is written as one flow mapping {...}")
    ends = [m.end() for m in _BREAK.finditer(text) if m.end() < len(text)]
    return Block(text, root, tuple([0, *ends] if text else []), newline, file)


def value_of(mapping: MappingNode | None, name: str) -> Node | None:
    pairs = _pairs(mapping, name)
    return pairs[0][1] if pairs else None


def _pairs(mapping: MappingNode | None, name: str) -> list[tuple[Node, Node]]:
    if mapping is None:
        return []
    return [(k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.value == name]


# Positions -----------------------------------------------------------------------------

def line_start(block: Block, line: int) -> int:
    return block.starts[line] if line < len(block.starts) else len(block.text)


def line_at(block: Block, index: int) -> int:
    return bisect_right(block.starts, index) - 1


def line_text(block: Block, line: int) -> str:
    return block.text[line_start(block, line):line_start(block, line + 1)]


def column_of(block: Block, node: Node) -> int:
    index = node.start_mark.index
    return int(index - line_start(block, line_at(block, index)))


def owns(entry_key: Node, value: Node) -> bool:
    """False for an alias (``*name``): its node sits where the anchor was, before the key."""
    return bool(value.start_mark.index >= entry_key.end_mark.index)


# Locating an entry ---------------------------------------------------------------------

def find_entry(block: Block, parent: MappingNode | None, limit: int, key: str) -> Entry | None:
    """The entry of ``key`` in ``parent`` (whose lines end at ``limit``), if it is there."""
    pairs = _pairs(parent, key)
    if parent is not None and not pairs and any(
            k.tag == MERGE_TAG for k, _ in parent.value):
        raise UneditableFrontmatter(
            block.file, f"'{key}' may come from a '<<' merge; edit it where it is defined")
    if not pairs:
        return None
    if len(pairs) > 1:
        raise UneditableFrontmatter(block.file, f"'{key}' is written more than once")
    assert parent is not None
    key_node, value = pairs[0]
    _check_key(block, parent, key_node, key)
    start = line_at(block, key_node.start_mark.index)
    return Entry(key_node, value, start, _entry_end(block, parent, key_node, value, limit))


def _check_key(block: Block, parent: MappingNode, key_node: Node, key: str) -> None:
    """Refuse a key not written as a plain ``key:`` (``? key``): its span is not certain."""
    index = key_node.start_mark.index
    if parent.flow_style:
        opened = block.text[:index].rstrip()[-1:] in ("{", ",")
    else:
        opened = not block.text[line_start(block, line_at(block, index)):index].strip()
    if not opened or not re.match(r"[ \t]*:", block.text[key_node.end_mark.index:]):
        raise UneditableFrontmatter(
            block.file, f"'{key}' is not written as a plain '{key}: value' (a '? {key}' key?)")


def _entry_end(block: Block, parent: MappingNode, key_node: Node, value: Node,
               limit: int) -> int:
    """The line after an entry: the next key's line, less the blank lines and comments
    before it that sit no deeper than this key (they introduce the next key). A ``#``
    line inside a block scalar is text of the value, never trimmed (the value's own
    extent is a floor)."""
    later = [line_at(block, k.start_mark.index) for k, _ in parent.value
             if k.start_mark.index > key_node.start_mark.index]
    end = min(later, default=limit)
    floor = _last_line(block, key_node, value) + 1
    column = column_of(block, key_node)
    while end > floor and _is_filler(line_text(block, end - 1), column):
        end -= 1
    return max(end, floor)


def _last_line(block: Block, key_node: Node, value: Node) -> int:
    """The last line with text of the entry's value (the key's line for a null or alias)."""
    last = _last_index(block, value, key_node.end_mark.index)
    return line_at(block, key_node.start_mark.index if last is None else last)


def _last_index(block: Block, node: Node, after: int) -> int | None:
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
            node = last[1] if has_text and owns(last[0], last[1]) else last[0]
    start = node.start_mark.index
    text = block.text[start:node.end_mark.index].rstrip()
    return start + len(text) - 1 if text and start >= after else None


def _is_filler(line: str, column: int) -> bool:
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" \t"))
    return not stripped or (stripped.startswith("#") and indent <= column)
