"""Codex's ``config.toml`` edited as text: our one table appended at the end, and those
exact lines taken out again; every other byte, comment and layout of the user's stays.

Python reads TOML (``tomllib``) but writes none, and a round trip through a writer would
drop every comment, so the edit is text: a block of our own (a comment naming it, the
``[mcp_servers.sagemem]`` header, one line per key), in the file's line ending. Each edit
is proved by parsing the result: it must equal the data before with our table added (or
taken out) and nothing else changed; otherwise the file is refused and left alone, since
something in it (an inline ``mcp_servers = {…}``, a dotted key) makes our lines mean
something else there.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from ..claude_code.settings_file import Document, read_config_bytes, utf8_text
from ..errors import HostConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 reads no TOML, and an edit we cannot prove is an edit we refuse
    tomllib = None

MARKER = "# sagemem's MCP server"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


TomlDocument = Document
"""One TOML file as read: its bytes (None: absent), text and parsed tables."""


def read_toml(path: Path) -> TomlDocument:
    """The file parsed, or an empty document when it does not exist; refused when it is
    not UTF-8 TOML (Codex would not read it either)."""
    raw = read_config_bytes(path)
    if raw is None:
        return TomlDocument(path, None, "", {})
    text = utf8_text(path, raw)
    return TomlDocument(path, raw, text, _loads(path, text, "is not valid TOML"))


def with_text(doc: TomlDocument, text: str) -> TomlDocument:
    """The same file with an intermediate text (an upgrade: our old table taken out)."""
    return TomlDocument(doc.path, doc.raw, text, _parsed(doc.path, text))


def block(table: tuple[str, str], entry: dict[str, Any], host: str, newline: str) -> str:
    """Our table's lines: the marker comment, the header, one ``key = value`` each."""
    lines = [f"{MARKER} (sagemem install {host}; --undo takes it out)",
             f"[{'.'.join(_key(k) for k in table)}]",
             *(f"{_key(k)} = {_value(v)}" for k, v in entry.items())]
    return newline.join(lines) + newline


def add_table(doc: TomlDocument, table: tuple[str, str], entry: dict[str, Any],
              host: str) -> str:
    """The text with our table appended, proved by re-parsing (else refused)."""
    newline = _newline(doc.text)
    text = doc.text
    if text and not text.endswith("\n"):
        text += newline
    text += (newline if text else "") + block(table, entry, host, newline)
    expected = _with(doc.data, table, entry)
    if _loads(doc.path, text, "would not parse after sagemem's edit; add the table "
                              "by hand") != expected:
        raise HostConfigError(doc.path, f"defines [{'.'.join(table)}] in a way sagemem's "
                                        "appended table would change; add it by hand")
    return text


def remove_table(doc: TomlDocument, table: tuple[str, str]) -> str | None:
    """The text without the block install wrote (the blank line before it too); None
    when those exact lines are not there (changed by hand: no longer ours to take)."""
    match = _block_pattern(table).search(doc.text)
    if match is None:
        return None
    text = doc.text[:match.start()] + doc.text[match.end():]
    expected = _without(doc.data, table)
    parsed = _parsed(doc.path, text)
    return text if parsed == expected or parsed == _without_empty(expected, table) else None


def has_block(text: str, table: tuple[str, str]) -> bool:
    """Whether the text holds a table block in the shape install writes."""
    return _block_pattern(table).search(text) is not None


def _block_pattern(table: tuple[str, str]) -> re.Pattern[str]:
    """Our lines exactly: the marker, the header, the keys ``block`` writes (a key added
    by hand stops the match, and the parse check then refuses a partial removal)."""
    header = re.escape("[" + ".".join(_key(k) for k in table) + "]")
    return re.compile(rf"(?:\r?\n)?{re.escape(MARKER)}[^\r\n]*\r?\n{header}\r?\n"
                      r"(?:(?:command|args|env) = [^\r\n]*(?:\r?\n|\Z))+")


def _with(data: dict[str, Any], table: tuple[str, str], entry: dict[str, Any]
          ) -> dict[str, Any]:
    outer, name = table
    inner = data.get(outer, {})
    return {**data, outer: {**(inner if isinstance(inner, dict) else {}), name: entry}}


def _without(data: dict[str, Any], table: tuple[str, str]) -> dict[str, Any]:
    outer, name = table
    inner = data.get(outer)
    if not isinstance(inner, dict) or name not in inner:
        return data
    return {**data, outer: {k: v for k, v in inner.items() if k != name}}


def _without_empty(data: dict[str, Any], table: tuple[str, str]) -> dict[str, Any]:
    """``_without``'s result with the outer table gone once empty: it existed only
    because our header named it."""
    return {k: v for k, v in data.items() if not (k == table[0] and v == {})}


def _parsed(path: Path, text: str) -> dict[str, Any]:
    return _loads(path, text, "would not parse after sagemem's edit")


def _loads(path: Path, text: str, problem: str) -> dict[str, Any]:
    if tomllib is None:
        raise HostConfigError(path, "cannot be checked: this Python (3.10) has no TOML "
                                    "reader; run sagemem on Python 3.11 or later")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HostConfigError(path, f"{problem} ({exc})") from exc


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _value(value: Any) -> str:
    """A TOML value for the strings, lists and string tables an entry holds (a JSON
    string with ASCII escapes is a TOML basic string)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
