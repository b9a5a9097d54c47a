"""Claude Code's JSON files (``settings.json``, ``.mcp.json``, ``~/.claude.json``) read and
edited in place: an edit rewrites only the span it changes, every other byte stays.

A ``json`` round trip would re-indent the whole file, reorder nothing but still rewrite
the user's hooks and Claude Code's own state; so the parsed value only tells us *what*
is there, and a small scanner finds *where* (the byte span of each member) in the text.
New members take the indentation of their neighbours, or the file's indent unit, and the
file's line ending (a CRLF file stays CRLF throughout).
A file that is not plain JSON (a ``//`` comment, a trailing comma, not an object) is
refused, never repaired: Claude Code reads plain JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HostConfigError

BOM = "\ufeff"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
_WS = " \t\r\n"
Key = str | int
"""A step of a path: a member name in an object, an index in an array."""


@dataclass(frozen=True)
class Element:
    """A member of an object (``key`` its name) or an item of an array (``key`` None):
    where it starts (its key, or its value) and its value's span ``[value_start, end)``."""

    key: str | None
    start: int
    value_start: int
    end: int


@dataclass(frozen=True)
class Document:
    """One host config file as read (JSON here, TOML in ``hosts/toml_file.py``): its bytes
    (None: it does not exist yet), text and value."""

    path: Path
    raw: bytes | None
    text: str
    data: dict[str, Any]


def read_document(path: Path) -> Document:
    """The file parsed, or an empty document when it does not exist; refused
    (HostConfigError) when it is not a plain JSON object Claude Code would read."""
    raw = read_config_bytes(path)
    return Document(path, None, "", {}) if raw is None else Document(path, raw,
                                                                     *parse_text(path, raw))


def read_config_bytes(path: Path) -> bytes | None:
    """A host config file's bytes, None when it does not exist; unreadable: refused."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HostConfigError(path, f"cannot be read ({exc.strerror or exc})") from exc


def utf8_text(path: Path, raw: bytes) -> str:
    """The file's text; not UTF-8 (no host would read it either): refused."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HostConfigError(path, f"is not UTF-8 (bad byte at offset {exc.start})") from exc


def parse_text(path: Path, raw: bytes) -> tuple[str, dict[str, Any]]:
    """The text and the object it holds; every reason it is not plain JSON, refused."""
    text = utf8_text(path, raw)
    try:
        data = json.loads(text.removeprefix(BOM))
    except (ValueError, RecursionError) as exc:
        raise HostConfigError(path, _why_not_json(text, exc)) from exc
    if not isinstance(data, dict):
        raise HostConfigError(path, f"holds a JSON {json_kind(data)}, not an object")
    return text, data


def parsed(text: str) -> Any:
    """The data of a settings text already read and checked (``parse_text``); an empty
    one is an empty object, as a host reads it."""
    return json.loads(text.removeprefix(BOM)) if text.strip() else {}


def json_kind(value: Any) -> str:
    """What JSON calls a parsed value's type (``array``, not Python's ``list``): the
    word a person finds in the file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    kinds = ((dict, "object"), (list, "array"), (str, "string"), ((int, float), "number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "value")


def _why_not_json(text: str, exc: Exception) -> str:
    """A comment is named as such: JSONC is what people paste from editors' settings."""
    comment = _comment_line(text)
    if comment is not None:
        return (f"has a comment at line {comment}; Claude Code's settings are plain JSON "
                "(no // or /* */), remove it")
    if isinstance(exc, json.JSONDecodeError):
        return f"is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
    return f"is not valid JSON ({type(exc).__name__})"


def _comment_line(text: str) -> int | None:
    """The line of the first ``//`` or ``/*`` outside a string, if any."""
    i = 0
    while i < len(text):
        if text[i] == '"':
            match = _STRING.match(text, i)
            i = match.end() if match else len(text)
        elif text.startswith(("//", "/*"), i):
            return text.count("\n", 0, i) + 1
        else:
            i += 1
    return None


def value_at(data: Any, path: tuple[Key, ...]) -> Any:
    """The parsed value at ``path``, or None when any step is missing."""
    for step in path:
        in_list = isinstance(step, int) and isinstance(data, list) and step < len(data)
        if not (in_list or (isinstance(step, str) and isinstance(data, dict) and step in data)):
            return None
        data = data[step]
    return data


# -- where things are in the text -------------------------------------------------------

def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    """The end of the JSON value starting at ``i`` (the text is known to parse)."""
    if text[i] == '"':
        match = _STRING.match(text, i)
        assert match is not None
        return match.end()
    if text[i] not in "[{":
        match = _SCALAR.match(text, i)
        assert match is not None
        return match.end()
    depth = 0
    while True:
        char = text[i]
        if char == '"':
            i = _value_end(text, i)
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def elements(text: str, start: int) -> list[Element]:
    """The members (or items) of the object (array) whose bracket is at ``start``."""
    found: list[Element] = []
    i = _skip(text, start + 1)
    while text[i] not in "]}":
        key, begin = None, i
        if text[start] == "{":
            key_end = _value_end(text, i)
            key = json.loads(text[i:key_end])
            i = _skip(text, _skip(text, key_end) + 1)  # past the colon
        end = _value_end(text, i)
        found.append(Element(key, begin, i, end))
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return found


def locate(text: str, path: tuple[Key, ...]) -> tuple[int, int]:
    """The span of the value at ``path`` (which must exist); the last member of a name
    wins, as in ``json.loads``."""
    start = _skip(text, len(BOM) if text.startswith(BOM) else 0)
    end = _value_end(text, start)
    for step in path:
        members = elements(text, start)
        if isinstance(step, int):
            chosen = members[step]
        else:
            chosen = [m for m in members if m.key == step][-1]
        start, end = chosen.value_start, chosen.end
    return start, end


# -- edits: each returns the new text ---------------------------------------------------

def replace_value(text: str, path: tuple[Key, ...], value: Any) -> str:
    """``path``'s value replaced, laid out at its own indentation."""
    start, end = locate(text, path)
    return text[:start] + _dump(value, _line_indent(text, start), text) + text[end:]


def add_element(text: str, path: tuple[Key, ...], value: Any, key: str | None = None) -> str:
    """A member ``key`` (or, with no key, an item) added at the end of the container at
    ``path``, in its neighbours' layout."""
    start, end = locate(text, path)
    members = elements(text, start)
    if members:
        last = members[-1]
        indent = _own_line_indent(text, members[0].start)
        separator = "," + _newline(text) + indent if indent is not None else ", "
        where = last.end
    else:
        base = _line_indent(text, start)
        unit = _indent_unit(text)
        indent = base + unit if unit is not None else None
        separator = _newline(text) + (indent or "") if indent is not None else ""
        where = start + 1
    element = _dump(value, indent, text)
    if key is not None:
        element = f"{json.dumps(key, ensure_ascii=False)}: {element}"
    if not members:
        closing = _newline(text) + _line_indent(text, start) if indent is not None else ""
        return text[:where] + separator + element + closing + text[end - 1:]
    return text[:where] + separator + element + text[where:]


def remove_element(text: str, path: tuple[Key, ...], index: int) -> str:
    """The ``index``-th member (item) of the container at ``path`` taken out with its
    comma: the exact inverse of ``add_element`` on a container that had members."""
    start, end = locate(text, path)
    members = elements(text, start)
    if len(members) == 1:
        return text[:start + 1] + text[end - 1:]
    if index > 0:
        return text[:members[index - 1].end] + text[members[index].end:]
    return text[:members[0].start] + text[members[1].start:]


def remove_member(text: str, path: tuple[Key, ...], key: str) -> str:
    """The member ``key`` of the object at ``path`` taken out (every one of that name)."""
    start, _ = locate(text, path)
    for index in reversed([i for i, m in enumerate(elements(text, start)) if m.key == key]):
        text = remove_element(text, path, index)
    return text


def set_member(text: str, path: tuple[Key, ...], key: str, value: Any) -> str:
    """``path.key`` set to ``value``, creating the objects of ``path`` that are missing."""
    data = json.loads(text.removeprefix(BOM)) if text.strip() else None
    if data is None:
        return _dump(_nest(path, key, value), "", text) + _newline(text)
    for depth, step in enumerate(path):
        if not isinstance(value_at(data, path[:depth + 1]), dict):
            nested = _nest(path[depth + 1:], key, value)
            if step in value_at(data, path[:depth]):  # a null there: replaced, never a
                return replace_value(text, path[:depth + 1], nested)  # second "hooks"
            return add_element(text, path[:depth], nested, key=str(step))
    if key in value_at(data, path):
        return replace_value(text, (*path, key), value)
    return add_element(text, path, value, key=key)


def _nest(path: tuple[Key, ...], key: str, value: Any) -> Any:
    nested: Any = {key: value}
    for step in reversed(path):
        nested = {step: nested}
    return nested


# -- layout ------------------------------------------------------------------------------

def _dump(value: Any, indent: str | None, text: str) -> str:
    """``value`` as JSON in the file's indent unit, continuation lines at ``indent``;
    on one line when ``indent`` is None (an inline container, a one-line file)."""
    unit = _indent_unit(text)
    if indent is None or unit is None:
        return json.dumps(value, ensure_ascii=False)
    newline = _newline(text)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _newline(text: str) -> str:
    """The file's line ending: CRLF when its lines end so (Windows editors), else LF."""
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str | None:
    """The file's indent unit: the leading whitespace of its first indented line; None for
    a file on one line (new content is then written on one line too)."""
    if not text.strip():
        return "  "  # a new file: Claude Code's own layout
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else None


def _line_indent(text: str, i: int) -> str:
    """The leading whitespace of the line holding ``i``."""
    line_start = text.rfind("\n", 0, i) + 1
    match = re.match(r"[ \t]*", text[line_start:i])
    assert match is not None
    return match.group(0)


def _own_line_indent(text: str, i: int) -> str | None:
    """The indentation before ``i`` when ``i`` starts its line, else None (inline)."""
    line_start = text.rfind("\n", 0, i) + 1
    before = text[line_start:i]
    return before if line_start > 0 and not before.strip() else None
