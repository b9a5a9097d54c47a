"""Control characters in memory text: shown visibly to people, escaped in JSON."""

from __future__ import annotations

import json

import pytest

from sagemem.files.controls import json_safe, visible

HOSTILE = ["\x1b[2J", "\x1b]0;owned\x07", "\x1b]52;c;ZXZpbA==\x07",
           "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x9b2J", "\x7f", "\x00", "\x08",
           "a\rb", "\u202eevil\u202c", "\u2066x\u2069", "a\u2028b\u2029c"]


@pytest.mark.parametrize("raw", HOSTILE)
def test_visible_leaves_no_control_character(raw: str) -> None:
    shown = visible(raw)
    assert all(ch in "\n\t" or (ch.isprintable() and ch != "\x7f") for ch in shown), shown


def test_visible_shows_escape_sequences_as_text() -> None:
    assert visible("\x1b[2J") == "\\x1b[2J"
    assert visible("\x9b") == "\\x9b"
    assert visible("\u202e") == "\\u202e"


def test_visible_keeps_newline_tab_crlf_and_ordinary_text() -> None:
    text = "line one\tcol\r\n中文 café {{x}} \u200b\nlast"
    assert visible(text) == text


def test_visible_shows_a_lone_carriage_return() -> None:
    assert visible("safe\roverwritten") == "safe\\x0doverwritten"


@pytest.mark.parametrize("raw", HOSTILE)
def test_json_safe_escapes_what_json_dumps_leaves_raw(raw: str) -> None:
    text = json_safe(json.dumps({"body": raw}, ensure_ascii=False))
    assert json.loads(text) == {"body": raw}
    assert all(ch.isprintable() and ch != "\x7f" for ch in text), text
