"""A memory's frontmatter fields: loose YAML values made typed, and what went wrong.

Reading never drops a field silently: a value of the wrong kind falls back to its default
and a ``Problem`` names the field, so the audit and ``sagemem show`` can point at it.
Limits of the format (``MAX_TAGS``, ``MAX_TAG_CHARS``) are reported but the value is
kept. The YAML itself is loaded in ``memory.py``; this module only sees the mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

TYPES = ("user", "feedback", "project", "reference")
DEFAULT_TYPE = "reference"
MAX_TAGS = 20
MAX_TAG_CHARS = 40
MAX_DESCRIPTION_CHARS = 300
"""The longest description a write may give (on one line, as MEMORY.md holds it). A
description is the memory's line in MEMORY.md, of which Claude Code loads 25,000 bytes
(``audit/report.py``): three 300 KB descriptions made a 902 KB index, and one long line
hid every line after it (issue 20). Claude Code asks for index lines under ~150
characters; 300 leaves room for a full sentence, and 300 Chinese characters are 900
bytes. A longer one already on disk is still read whole, and kept by writes that leave
it as it is."""
MAX_NAME_CHARS = 200
"""The longest title (``name``) a write may give: it opens the same MEMORY.md line. Both
bounds count characters once runs of whitespace are one space (``over_bound``)."""
KNOWN_KEYS = ("name", "description", "type", "metadata", "metadata.type", "tags", "aliases",
              "former_names", "baseline", "baselinePriority", "updated", "valid_at", "invalid_at",
              "superseded_by", "when", "redact")
"""The frontmatter keys ``read_fields`` gives a meaning (``redact``: the write path's, see
``writes/redact.py``); any other key is kept as written
but read by nobody — ``set`` warns, since ``baseline_priority`` is a typo that silently
does nothing."""


@dataclass(frozen=True)
class Problem:
    """Something wrong found while parsing: the field, what, and the file line if known.

    ``kind`` lets the audit sort problems without reading messages: ``unparsable`` (the
    frontmatter block as a whole was not read: fields fell back), ``limit`` (over a
    format limit, the value still kept) or ``field`` (one field's own trouble).
    """

    field: str
    message: str
    line: int | None = None
    kind: str = "field"


def read_fields(raw: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """Turn loose YAML values into typed fields, recording each one that had to default."""
    return {
        "name": _text(raw, "name", problems),
        "description": _text(raw, "description", problems) or "",
        "type": _type(raw, problems),
        "tags": _tags(raw, problems),
        "aliases": _words(raw, "aliases", problems),
        "baseline": _flag(raw, "baseline", problems),
        "baseline_priority": _number(raw, "baselinePriority", problems),
        "updated": _date(raw, "updated", problems),
        "valid_at": _date(raw, "valid_at", problems),
        "invalid_at": _date(raw, "invalid_at", problems),
        "superseded_by": _text(raw, "superseded_by", problems),
        "when": _text(raw, "when", problems),
        "former_names": _words(raw, "former_names", problems),
    }


def _text(raw: dict[str, Any], key: str, problems: list[Problem]) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, (str, int, float, date)) and not isinstance(value, bool):
        return str(value).strip() or None
    problems.append(Problem(key, f"expected text, got {_kind(value)}; ignored"))
    return None


def type_key(raw: dict[str, Any]) -> str | None:
    """The field that gives a memory its type: ``metadata.type`` wins over a top-level
    ``type``; None when neither is set (the type is then the default)."""
    metadata = raw.get("metadata")
    if isinstance(metadata, dict) and metadata.get("type") is not None:
        return "metadata.type"
    return "type" if raw.get("type") is not None else None


def _type(raw: dict[str, Any], problems: list[Problem]) -> str:
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        problems.append(Problem("metadata", f"expected a mapping, got {_kind(metadata)}; ignored"))
    key = type_key(raw)
    if key is None:
        return DEFAULT_TYPE
    value = raw["metadata"]["type"] if key == "metadata.type" else raw["type"]
    if isinstance(value, str) and value.strip().lower() in TYPES:
        return value.strip().lower()
    problems.append(Problem(key, f"unknown type {_show(value)}; read as {DEFAULT_TYPE!r}"))
    return DEFAULT_TYPE


def _words(raw: dict[str, Any], key: str, problems: list[Problem]) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        problems.append(Problem(key, f"expected a list, got {_kind(value)}; ignored"))
        return ()
    words = [str(v).strip() for v in value
             if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip()]
    if len(words) != len(value):
        problems.append(Problem(key, "entries that are not plain words were skipped"))
    return tuple(words)


def _tags(raw: dict[str, Any], problems: list[Problem]) -> tuple[str, ...]:
    """Tags, kept even over the format's limits: the audit reports them, reading never drops."""
    tags = _words(raw, "tags", problems)
    if len(tags) > MAX_TAGS:
        problems.append(Problem("tags", f"{len(tags)} tags, more than the {MAX_TAGS} allowed",
                                kind="limit"))
    long = [tag for tag in tags if len(tag) > MAX_TAG_CHARS]
    if long:
        problems.append(Problem("tags", f"tags longer than {MAX_TAG_CHARS} characters: "
                                f"{len(long)}, the first {_show(long[0])}", kind="limit"))
    return tags


def _flag(raw: dict[str, Any], key: str, problems: list[Problem]) -> bool:
    value = raw.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    problems.append(Problem(key, f"expected true or false, got {_show(value)}; read as false"))
    return False


def _number(raw: dict[str, Any], key: str, problems: list[Problem]) -> int:
    value = raw.get(key)
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    problems.append(Problem(key, f"expected a whole number, got {_show(value)}; read as 0"))
    return 0


def _date(raw: dict[str, Any], key: str, problems: list[Problem]) -> date | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            pass
    problems.append(Problem(key, f"not a date (YYYY-MM-DD): {_show(value)}; ignored"))
    return None


def _show(value: object) -> str:
    """A short, bounded rendering: never walks a container (it may be an alias bomb)."""
    if isinstance(value, (str, int, float, date)):
        return repr(str(value)[:40])
    return _kind(value)


def _kind(value: object) -> str:
    kinds = {dict: "a mapping", list: "a list", bool: "true/false"}
    return kinds.get(type(value), type(value).__name__)


DATE_FIELDS = ("updated", "valid_at", "invalid_at")


def field_problem(key: str, value: object) -> str | None:
    """Why ``value`` cannot be set as ``key`` (None when it can): a known field must
    hold what the reader accepts, or the edit would be silently ignored (an
    ``invalid_at`` that is no date leaves the memory valid)."""
    if value is None:
        return None
    if key in DATE_FIELDS and not isinstance(value, date):
        return "must be a date, YYYY-MM-DD"
    if key in ("type", "metadata.type") and value not in TYPES:
        return f"must be one of {', '.join(TYPES)}"
    if key in ("tags", "aliases", "former_names") and not isinstance(value, list):
        return "must be a list, [a, b]"
    return None


def over_bound(field: str, value: str | None, before: str | None) -> tuple[int, int] | None:
    """``(length, bound)`` when a write gives ``field`` (``name`` or ``description``) a
    value longer than its bound; None when within it, or when the value is the one
    ``before`` held (a long description written by hand stays editable)."""
    bound = {"name": MAX_NAME_CHARS, "description": MAX_DESCRIPTION_CHARS}[field]
    line = " ".join((value or "").split())
    if len(line) <= bound or (before is not None and " ".join(before.split()) == line):
        return None
    return len(line), bound


def set_warnings(file: str, fields: Mapping[str, object]) -> list[str]:
    """What ``set`` should warn about before writing ``fields`` into ``file``: keys no
    reader knows (with the key meant, when one is close) and a type that disagrees with
    the file-name prefix (``user_x.md`` set to ``project``)."""
    found = [w for key, value in fields.items() if value is not None
             for w in [_unknown_key(key)] if w is not None]
    prefix = file.partition("_")[0].lower() if "_" in file else ""
    for key in ("type", "metadata.type"):
        value = fields.get(key)
        if isinstance(value, str) and prefix in TYPES and value != prefix:
            found.append(f"type {value} disagrees with the file-name prefix {prefix}_ "
                         f"(rename the file, or set type={prefix})")
    return found


def _unknown_key(key: str) -> str | None:
    if key in KNOWN_KEYS:
        return None
    meant = _closest_key(key)
    hint = f"did you mean {meant}?" if meant else "it is kept, but sagemem does not read it"
    return f"{key} is not a field sagemem knows; {hint}"


def _closest_key(key: str) -> str | None:
    """The known key ``key`` was probably meant as: the same letters once case, ``_``, ``-``
    and ``.`` are ignored (``baseline_priority``), else a near spelling (``tag``)."""
    def bare(k: str) -> str:
        return "".join(c for c in k.lower() if c.isalnum())

    by_bare = {bare(k): k for k in KNOWN_KEYS}
    if bare(key) in by_bare:
        return by_bare[bare(key)]
    import difflib  # only a misspelt key gets here: a listing's parse never loads it

    close = difflib.get_close_matches(bare(key), list(by_bare), n=1, cutoff=0.75)
    return by_bare[close[0]] if close else None
