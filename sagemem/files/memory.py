"""The Memory value: lenient parsing of one memory file.

A memory file is YAML frontmatter between ``---`` lines, then a Markdown body. Parsing
never hides a memory: a field that cannot be parsed falls back to its default and the
problem is recorded on the value (the audit reports it); a file with no frontmatter is a
memory with defaults (turning values into typed fields is ``fields.py``). The text is
kept exactly as it was on disk, so nothing here can change a file — edits live in
``edit.py``.

Reading uses the C-accelerated safe loader that python-frontmatter picks (PyYAML's
``CSafeLoader``): it is about 15 times faster than ruamel.yaml, which matters when a
listing or an audit parses ten thousand files. Writing uses ruamel.yaml round-trip, so
whatever libyaml accepts but the editor cannot safely edit (a key written twice, a
``? key``, a tab YAML 1.2 refuses) is recorded as a problem here: ``sagemem show`` then
explains every refused edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import SafeLoader

from ..errors import UnreadableFile
from .fields import Problem, read_fields
from .revision import revision_of

_OPEN = re.compile(r"\A(\ufeff?)---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_TOP_KEY = re.compile(r"^([^\s#\-][^:]*?)\s*:(?:\s|$)")
MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(SafeLoader):  # type: ignore[misc,valid-type]  # a C or Python loader
    """The fast safe loader, except that a date that cannot be (``2026-02-30``) stays
    text: PyYAML raises on it, which made the whole block unparsable and hid the field;
    ``fields._date`` now reports it as that field's problem."""


def _timestamp(loader: Any, node: Any) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError:  # month 13, February 30th, …
        return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def load_yaml(text: str) -> Any:
    """One YAML document, read as a memory's frontmatter is (impossible dates as text)."""
    return yaml.load(text, Loader=_Loader)


@dataclass(frozen=True)
class Split:
    """Where the frontmatter and the body sit in a file's text (string offsets)."""

    frontmatter: str | None
    fm_start: int
    fm_end: int
    body_start: int
    problem: Problem | None = None


@dataclass(frozen=True)
class Memory:
    """One memory file, parsed. ``text`` is the file exactly as it was read."""

    file: str
    text: str
    revision: str
    name: str | None
    description: str
    type: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    baseline: bool
    baseline_priority: int
    updated: date | None
    valid_at: date | None
    invalid_at: date | None
    superseded_by: str | None
    body: str
    body_line: int
    has_frontmatter: bool
    problems: tuple[Problem, ...]
    mtime: float | None = None
    archived: bool = False
    when: str | None = None
    """What occasion the memory is about (``when: 2026-12-01``, or free text such as
    ``Q3 planning``), as text: two memories with one title and different ``when`` are
    two memories (``writes/remember.py``)."""
    former_names: tuple[str, ...] = ()
    """Titles this memory had before it was renamed (``former_names:``, kept by every
    write that changes ``name``): saving by one of them updates this memory. Unlike
    ``aliases`` (words that should retrieve it), only these ever match a title."""

    @property
    def title(self) -> str:
        """What a person calls it: the ``name`` field, else the file name without .md."""
        return self.name or self.file[:-3]

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    def is_invalid(self, today: date) -> bool:
        """True once ``invalid_at`` has passed: the claim no longer holds."""
        return self.invalid_at is not None and self.invalid_at <= today

    def is_not_yet_valid(self, today: date) -> bool:
        """True before ``valid_at``: the claim holds from that day, not yet."""
        return self.valid_at is not None and self.valid_at > today


def decode(data: bytes, file: str) -> str:
    """UTF-8 text of a file, or a clear per-file error naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (bad byte at offset {exc.start})"
        raise UnreadableFile(Path(file), reason) from None


def split(text: str) -> Split:
    """Locate the frontmatter block; an unclosed one leaves the whole file as body."""
    opening = _OPEN.match(text)
    if not opening:
        start = 1 if text.startswith("\ufeff") else 0
        return Split(None, start, start, start)
    closing = _CLOSE.search(text, opening.end())
    if not closing:
        problem = Problem("frontmatter", "frontmatter is never closed with '---'", 1,
                          "unparsable")
        return Split(None, 0, 0, len(opening.group(1)), problem)
    return Split(text[opening.end():closing.start()], opening.end(), closing.start(),
                 closing.end())


def _body_line(text: str, body_start: int) -> int:
    """The body's first line; past the last line when the file ends on its closing ``---``
    without a newline (so the delimiter is never mistaken for body)."""
    line = line_of(text, body_start)
    ends_on_delimiter = body_start == len(text) and text and not text.endswith("\n")
    return line + 1 if ends_on_delimiter and body_start > 0 else line


def line_of(text: str, offset: int) -> int:
    """1-based line number of a string offset."""
    return text.count("\n", 0, offset) + 1


def file_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on newlines only, CR of CRLF dropped — not
    ``str.splitlines``, which also breaks at a lone CR, form feed, U+0085 or U+2028 and
    would number (and show) lines the file does not have."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def parse(data: bytes, file: str, *, mtime: float | None = None, archived: bool = False) -> Memory:
    """Parse a memory file's bytes. Raises UnreadableFile only for non-UTF-8 bytes."""
    text = decode(data, file)
    parts = split(text)
    problems: list[Problem] = [parts.problem] if parts.problem else []
    fields: dict[str, Any] = {}
    if parts.frontmatter is not None:
        first_line = line_of(text, parts.fm_start)
        fields = load_frontmatter(parts.frontmatter, first_line, problems)
    typed = read_fields(fields, problems)
    if parts.frontmatter is not None:
        problems = _with_lines(problems, parts.frontmatter, line_of(text, parts.fm_start))
    return Memory(
        file=file,
        text=text,
        revision=revision_of(data),
        body=text[parts.body_start:],
        body_line=_body_line(text, parts.body_start),
        has_frontmatter=parts.frontmatter is not None,
        mtime=mtime,
        archived=archived,
        **typed,
        problems=tuple(problems),
    )


def _with_lines(problems: list[Problem], block: str, first_line: int) -> list[Problem]:
    """Give each field problem the file line of its key, so the audit can point at it."""
    if all(p.line is not None for p in problems):
        return problems
    lines = block.splitlines()
    located: list[Problem] = []
    for problem in problems:
        key = problem.field.rsplit(".", 1)[-1]
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
        found = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
        line = problem.line if problem.line is not None or found is None else first_line + found
        located.append(Problem(problem.field, problem.message, line, problem.kind))
    return located


def load_frontmatter(block: str, first_line: int, problems: list[Problem]) -> dict[str, Any]:
    """The frontmatter mapping; when the block does not parse, each top-level key alone.

    Falling back is itself a problem: fields read one at a time may not be what the
    whole block meant, and the editor refuses such a block, so ``show`` must say why.
    """
    try:
        loaded, found = _load_whole(block, first_line)
    except Exception as exc:  # any YAML or recursion error: fall back to key-by-key parsing
        problems.append(Problem("frontmatter", f"does not parse as a whole ({_reason(exc)}); "
                                "each field was read on its own", first_line + _error_line(exc),
                                "unparsable"))
        return _load_by_key(block, first_line, problems)
    problems.extend(found)
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        problems.append(Problem("frontmatter", "frontmatter is not a mapping of fields",
                                first_line, "unparsable"))
        return {}
    return {str(k): v for k, v in loaded.items()}


def _load_whole(block: str, first_line: int) -> tuple[Any, list[Problem]]:
    """Load the block with the fast loader, with the problems only its node tree shows.

    Composing and constructing by hand costs what ``yaml.load`` costs and keeps the nodes,
    which still know about duplicate keys (the loaded dict silently keeps the last one).
    """
    loader = _Loader(block)
    try:
        root = loader.get_single_node()
        found = _node_problems(block, root, first_line)  # before constructing: merges rewrite
        return (None if root is None else loader.construct_document(root)), found
    finally:
        loader.dispose()


def _node_problems(block: str, root: Any, first_line: int) -> list[Problem]:
    """What a loaded dict hides but makes the block uneditable: duplicates, ``? key``, tabs."""
    if getattr(root, "id", None) != "mapping":
        return []
    return [*_duplicate_keys(root, first_line), *_complex_keys(root, first_line),
            *_strict_problems(block, first_line)]


def _mappings(root: Any) -> list[Any]:
    """Every mapping node under ``root``, each once (an alias bomb stays cheap).

    PyYAML nodes are told apart by their ``id`` ("scalar", "sequence", "mapping").
    """
    seen: set[int] = set()
    stack, found = [root], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.id == "mapping":
            found.append(node)
            stack.extend(n for pair in node.value for n in pair)
        elif node.id == "sequence":
            stack.extend(node.value)
    return found


def _duplicate_keys(root: Any, first_line: int) -> list[Problem]:
    """A key written twice in one mapping: the reader keeps the last, the editor refuses."""
    problems = []
    for mapping in _mappings(root):
        seen: set[tuple[str, str]] = set()
        for key, _ in mapping.value:
            if key.id != "scalar" or key.tag == MERGE_TAG:
                continue
            if (key.tag, key.value) in seen:
                problems.append(Problem(str(key.value), "appears twice; the last one is read",
                                        first_line + key.start_mark.line))
            seen.add((key.tag, key.value))
    return problems


def _complex_keys(root: Any, first_line: int) -> list[Problem]:
    """Fields written as ``? key`` / ``: value``, which the editor cannot locate safely.

    Only the mappings the editor writes to are checked (the top level and ``metadata``);
    in a block mapping every plain key starts at the mapping's column, a ``? key`` after it.
    """
    metadata: Any = next((v for k, v in root.value if k.value == "metadata"), None)
    mappings = [m for m in (root, metadata)
                if getattr(m, "id", None) == "mapping" and not m.flow_style]
    problems = []
    for mapping in mappings:
        for key, _ in mapping.value:
            if key.start_mark.column != mapping.start_mark.column:
                problems.append(Problem(str(key.value), "is written as a complex key "
                                        "('? key'); write it as 'key: value'",
                                        first_line + key.start_mark.line))
    return problems


def _strict_problems(block: str, first_line: int) -> list[Problem]:
    """Tabs libyaml accepts but YAML 1.2, and so the editor (ruamel.yaml), refuses.

    Only a block with a tab pays for the strict check; such files are rare.
    """
    if "\t" not in block:
        return []
    try:
        from ruamel.yaml import YAML  # only a frontmatter holding a tab pays for this

        YAML(typ="rt").compose(block)
    except Exception as exc:  # whatever the editor would refuse, show it here
        line = _error_line(exc)
        if "\t" in (block.splitlines()[line:line + 1] or [""])[0]:
            message = "has a tab where YAML 1.2 allows only spaces; replace it to edit the file"
        else:
            message = f"is not strict YAML 1.2 ({_reason(exc)}); fix it to edit the file"
        return [Problem("frontmatter", message, first_line + line)]
    return []


def _reason(exc: BaseException) -> str:
    """A YAML error in one line of at most 80 characters, cut between words: its text
    may hold newlines and an ``in "<unicode string>", line 1`` tail, which would break
    the indented lines it is shown in (``audit``, ``show``)."""
    text = str(getattr(exc, "problem", None) or exc or type(exc).__name__)
    text = " ".join(text.split('\n  in "')[0].split())
    return text if len(text) <= 80 else text[:78].rsplit(" ", 1)[0] + " …"


def _error_line(exc: BaseException) -> int:
    """The 0-based line of a YAML error inside the block, 0 when it has none."""
    mark = getattr(exc, "problem_mark", None)
    return int(getattr(mark, "line", 0) or 0)


def _chunks(block: str) -> list[tuple[int, str]]:
    """Split a frontmatter block into top-level keys, each with its continuation lines."""
    chunks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(block.splitlines(keepends=True)):
        if _TOP_KEY.match(line) or not chunks:
            chunks.append((number, [line]))
        else:
            chunks[-1][1].append(line)
    return [(number, "".join(lines)) for number, lines in chunks]


def _load_by_key(block: str, first_line: int, problems: list[Problem]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for offset, chunk in _chunks(block):
        key_match = _TOP_KEY.match(chunk)
        key = key_match.group(1).strip() if key_match else "frontmatter"
        try:
            loaded = load_yaml(chunk)
        except Exception as exc:  # this key alone is broken; the others still count
            problems.append(Problem(key, f"does not parse as YAML ({_reason(exc)}); default used",
                                    first_line + offset))
            continue
        if isinstance(loaded, dict):
            for name in fields.keys() & {str(k) for k in loaded}:
                problems.append(Problem(name, "appears twice; the last one is read",
                                        first_line + offset))
            fields.update({str(k): v for k, v in loaded.items()})
        elif loaded is not None:
            problems.append(Problem(key, "line is not a 'key: value' field; ignored",
                                    first_line + offset))
    return fields
