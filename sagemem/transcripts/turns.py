"""Which transcript lines count: what the user typed and what the assistant said.

Claude Code writes one JSON object per line; a turn has ``type`` ``user`` or
``assistant`` and ``message: {role, content}``, content a string or a list of blocks
(``text``, ``tool_use``, ``tool_result``, ``thinking``, ``image``). ``spoken_text`` keeps,
by these rules in order:

1. only ``user`` and ``assistant`` lines whose message role agrees;
2. never a sidechain (a subagent's turn), a meta line (``isMeta``: Claude Code's own
   notes, such as the caveat before a local command), a compacted summary
   (``isCompactSummary``: Claude Code's retelling, not anyone's words);
3. never a user message carrying a ``tool_result`` (tool output is the tool's, not the
   user's), and of a list only the ``text`` blocks — no tool call, no thinking;
4. never injected context inside a turn: ``<system-reminder>``, the slash-command and
   shell tags (``<command-name>``, ``<local-command-stdout>``, ``<bash-stdout>``…) and
   sagemem's own ``<sagemem-memory>`` block, so a quote never cites sagemem itself.
"""

from __future__ import annotations

import re
from typing import Any

ROLES = ("user", "assistant")
_TAGS = ("system-reminder", "command-name", "command-message", "command-args",
         "command-contents", "local-command-stdout", "local-command-stderr", "bash-input",
         "bash-stdout", "bash-stderr", "user-prompt-submit-hook", "sagemem-memory")
# A tag's whole span, or from an unclosed opening tag to the end: injected text that lost
# its closing tag is still injected.
_INJECTED = re.compile(
    r"<(" + "|".join(_TAGS) + r")\b[^>]{0,200}>(?:.*?</\1\s*>|.*\Z)", re.S | re.I)
_NOT_SAID = re.compile(r"^\[Request interrupted by user[^\]]{0,40}\]$")


def spoken_text(line: object) -> tuple[str, str] | None:
    """(role, text) of a line someone said, or None for every other line."""
    if not isinstance(line, dict) or line.get("type") not in ROLES:
        return None
    if line.get("isSidechain") is True or line.get("isMeta") is True \
            or line.get("isCompactSummary") is True:
        return None
    message = line.get("message")
    if not isinstance(message, dict) or message.get("role") != line["type"]:
        return None
    text = _text_of(message.get("content"))
    if text is None:
        return None
    text = _INJECTED.sub(" ", text).strip()
    if not text or _NOT_SAID.match(text):
        return None
    return line["type"], text


def _text_of(content: Any) -> str | None:
    """A string as it is; of a list the text blocks joined, None if it carries a tool
    result (a user message that answers a tool call is the tool's output)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
             and isinstance(b.get("text"), str)]
    return "\n\n".join(texts) if texts else None
