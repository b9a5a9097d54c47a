"""One memory-tool command's parameters, each checked as it is taken: a wrong or missing
one is a Refusal naming it and what it should be, never a KeyError out of the handler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import messages
from .paths import Refusal, ToolPath, parse_path


@dataclass(frozen=True)
class Input:
    """One command's parameters, each checked as it is taken."""

    values: Mapping[str, object]
    command: str
    reserved: frozenset[str]

    def path(self, key: str) -> ToolPath:
        """``key``'s path under /memories, mapped (``paths.parse_path``) or refused."""
        value = self.values.get(key)
        if not isinstance(value, str):
            raise Refusal(f"Error: {self.command} needs `{key}`, a path under /memories "
                          "(e.g. /memories/notes.md)")
        return parse_path(value, self.reserved)

    def text(self, key: str, *, also: str | None = None) -> str:
        """``key``'s text (else ``also``'s, another spelling the model uses), refused if
        it is no string or holds what UTF-8 cannot carry (a lone surrogate)."""
        value = self.values.get(key)
        if value is None and also is not None:
            value = self.values.get(also)
        if not isinstance(value, str):
            raise Refusal(f"Error: {self.command} needs `{key}`, a string")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise Refusal(messages.NOT_TEXT.format(key=key, offset=exc.start)) from None
        return value

    def integer(self, key: str) -> int:
        """``key``'s whole number (a JSON ``true`` is no line number)."""
        value = self.values.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise Refusal(f"Error: {self.command} needs `{key}`, a whole number of lines "
                          "(0 inserts before the first line)")
        return value


def view_range(value: object, n_lines: int) -> tuple[int, int]:
    """The 1-based, inclusive lines ``view_range`` asks for (all when None; an end of -1
    or past the last line means up to the last)."""
    if value is None:
        return 1, n_lines
    if not (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise Refusal("Error: `view_range` is two line numbers, [start, end]; end -1 "
                      "means the last line")
    start, end = value
    end = max(n_lines, start) if end == -1 else end
    if not 1 <= start <= max(n_lines, 1) or end < start:
        raise Refusal(f"Error: Invalid `view_range` parameter: [{value[0]}, {value[1]}]. "
                      f"It should be [start, end] with 1 <= start <= {max(n_lines, 1)} and "
                      "start <= end, or end -1 for the rest of the file")
    return start, min(end, n_lines)
