"""Control characters in memory text, which no terminal, JSON reader or model gets raw.

A memory file may hold anything: ``ESC[2J`` clears the screen, OSC 0 sets the window
title, OSC 52 writes the clipboard, OSC 8 hides a link behind text, a lone carriage
return overwrites what was printed, and the bidi overrides reorder what a reader sees
(Trojan Source). ``visible`` writes each one as text (``\\x1b``, ``\\u202e``) for people
and for the injected block; ``json_safe`` escapes the ones ``json.dumps`` leaves raw.
Newline and tab stay; so does CR before LF (a CRLF file's line ends are harmless).
"""

from __future__ import annotations

import os
import re

# C0 but newline and tab, DEL, C1 (U+0080-U+009F: 0x9b is a one-byte CSI), the line and
# paragraph separators (a line break to str.splitlines and JavaScript, not to the file),
# the bidi embeddings, overrides and isolates. Zero-width and other format characters stay: they
# cannot drive a terminal, and the injected block uses U+200B itself.
_RAW = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_RAW}]|\r(?!\n)")
# What json.dumps(ensure_ascii=False) writes raw (it escapes C0 itself).
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written out as text."""
    return _CONTROL.sub(_shown, text)


def visible_name(name: str) -> str:
    """A file name on one line: its control characters, newline and tab too, and bytes
    that are not UTF-8 (``\\xff``) written out as text."""
    text = visible(os.fsencode(name).decode("utf-8", "backslashreplace"))
    return text.replace("\n", "\\x0a").replace("\t", "\\x09")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def json_safe(json_text: str) -> str:
    """JSON text with DEL, C1 and bidi controls escaped as ``\\uXXXX`` (same value).

    Outside strings JSON has only ASCII whitespace, so every match is inside a string.
    """
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
