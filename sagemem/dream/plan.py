"""A consolidation plan: the documented JSON any planner writes and ``dream run`` applies.

A plan is a list of operations — ``create``, ``rewrite``, ``archive`` — each naming its
file, the revision it was planned against (``rewrite``, ``archive``), the new text
(``create``, ``rewrite``: the whole file, frontmatter included) and a ``reason``. There is
no delete: an archive moves the file to ``archive/``, where ``sagemem restore`` finds it.

A plan that is not one (not JSON, no ``operations`` list, an unknown ``op``, a missing
file name or text) is refused whole with ``InvalidPlan`` before anything is read; what can
only be judged against the folder (a stale revision, an archive without a reason, a
second operation on one file) is refused one operation at a time when the plan is
applied, and the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidPlan, InvalidRevision, SagememError
from ..files.paths import INDEX_FILE, check_name
from ..files.revision import checked_revision

FORMAT = "sagemem-dream-plan"
VERSION = 1
OPS = ("create", "rewrite", "archive")
KINDS = ("duplicate", "dates", "expired", "idle", "links", "index", "other")
"""What an operation tidies; ``dream auto`` applies only the ``SAFE_KINDS`` by default."""
SAFE_KINDS = ("dates", "links", "index", "expired")
MAX_OPERATIONS = 100_000
MAX_PLAN_BYTES = 64 * 1024 * 1024
"""A plan carries whole texts; 100,000 memories of ~600 bytes is 60 MB. Bigger is not a
plan, and is refused before it is parsed."""


@dataclass(frozen=True)
class Operation:
    """One step of a plan. ``text``: the whole new file (create, rewrite); ``revision``:
    the file's revision (full, or its first 8+ hex characters) when it was planned;
    ``kind``: what it tidies (``KINDS``), ``other`` when the planner did not say."""

    op: str
    file: str
    reason: str = ""
    revision: str | None = None
    text: str | None = None
    kind: str = "other"
    source: Sequence[str] = field(default=(), hash=False)
    """The files an operation draws on (a merge names the duplicates it takes in)."""

    @property
    def self_described(self) -> bool:
        """Whether the planner said why; a rewrite without a reason still lands, marked."""
        return bool(self.reason.strip())

    def to_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"op": self.op, "file": self.file, "kind": self.kind}
        if self.revision is not None:
            item["revision"] = self.revision
        if self.text is not None:
            item["text"] = self.text
        item["reason"] = self.reason
        if self.source:
            item["source"] = list(self.source)
        return item


@dataclass(frozen=True)
class Plan:
    """What a planner proposes, in order; ``planner`` names who made it (``tidy``,
    ``llm``, a file name, an agent)."""

    operations: tuple[Operation, ...]
    planner: str = "file"
    notes: tuple[str, ...] = ()
    """What the planner wants a reviewer to know (a truncated answer, a skipped file)."""

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "planner": self.planner,
                "notes": list(self.notes),
                "operations": [o.to_json() for o in self.operations]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2) + "\n"


def loads(data: bytes | str, *, planner: str = "file") -> Plan:
    """Parse a plan document; ``InvalidPlan`` names the first thing wrong with it."""
    if len(data) > MAX_PLAN_BYTES:
        raise InvalidPlan(f"it is over {MAX_PLAN_BYTES // (1024 * 1024)} MiB")
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidPlan(f"it is not JSON ({exc})") from None
    except RecursionError:
        raise InvalidPlan("it is nested too deeply to be a plan") from None
    return from_json(document, planner=planner)


def from_json(document: object, *, planner: str = "file") -> Plan:
    """A plan from its parsed JSON: the whole document, or a bare list of operations."""
    if isinstance(document, list):
        document = {"operations": document}
    if not isinstance(document, Mapping):
        raise InvalidPlan("it must be a JSON object with an \"operations\" list")
    if document.get("format", FORMAT) != FORMAT:
        raise InvalidPlan(f"its format is {document.get('format')!r}, not {FORMAT!r}")
    version = document.get("version", VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
        raise InvalidPlan(f"its version is {version!r}; this sagemem reads version {VERSION}")
    operations = document.get("operations")
    if not isinstance(operations, list):
        raise InvalidPlan("it has no \"operations\" list")
    if len(operations) > MAX_OPERATIONS:
        raise InvalidPlan(f"it has {len(operations)} operations; at most {MAX_OPERATIONS}")
    notes = document.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise InvalidPlan("\"notes\" must be a list of strings")
    named = document.get("planner", planner)
    return Plan(tuple(operation_from_json(item, number)
                      for number, item in enumerate(operations, 1)),
                named if isinstance(named, str) and named.strip() else planner,
                tuple(notes))


def operation_from_json(item: object, number: int = 1) -> Operation:
    """One operation, checked for shape; ``number`` (from 1) is named in a refusal."""
    where = f"operation {number}"
    if not isinstance(item, Mapping):
        raise InvalidPlan(f"{where} is not a JSON object")
    op = item.get("op", item.get("operation"))
    if op not in OPS:
        raise InvalidPlan(f"{where}: \"op\" must be one of {', '.join(OPS)} (got {op!r})")
    file = _string(item, "file", where, required=True)
    assert file is not None
    file = _file_name(file, op, where)
    text = _string(item, "text", where, required=op != "archive")
    if op == "archive" and text is not None:
        raise InvalidPlan(f"{where}: an archive carries no \"text\" (it moves the file whole)")
    revision = _revision(item, op, where)
    reason = _string(item, "reason", where) or ""
    kind = _string(item, "kind", where) or "other"
    if kind not in KINDS:
        raise InvalidPlan(f"{where}: \"kind\" must be one of {', '.join(KINDS)} (got {kind!r})")
    source = item.get("source", [])
    if not isinstance(source, list) or not all(isinstance(s, str) for s in source):
        raise InvalidPlan(f"{where}: \"source\" must be a list of file names")
    return Operation(op, file, reason.strip(), revision, text, kind, tuple(source))


def _string(item: Mapping[str, Any], key: str, where: str, *,
            required: bool = False) -> str | None:
    value = item.get(key)
    if value is None:
        if required:
            raise InvalidPlan(f"{where}: \"{key}\" is missing")
        return None
    if not isinstance(value, str):
        raise InvalidPlan(f"{where}: \"{key}\" must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidPlan(f"{where}: \"{key}\" is not valid Unicode text (it holds a lone "
                          "surrogate)") from None
    return value


def _file_name(file: str, op: str, where: str) -> str:
    if file == INDEX_FILE:
        if op != "rewrite":
            raise InvalidPlan(f"{where}: {INDEX_FILE} can only be rewritten")
        return file
    try:
        return check_name(file if file.endswith(".md") else f"{file}.md")
    except SagememError as exc:  # InvalidName / ReservedName: the plan's fault, said as such
        raise InvalidPlan(f"{where}: {exc}") from None


def _revision(item: Mapping[str, Any], op: str, where: str) -> str | None:
    given = _string(item, "revision", where)
    if op == "create":
        if given:
            raise InvalidPlan(f"{where}: a create has no \"revision\" (the file is new)")
        return None
    if given is None:
        raise InvalidPlan(f"{where}: {'an' if op == 'archive' else 'a'} {op} needs the "
                          "\"revision\" it was planned against")
    try:
        return checked_revision(given)
    except InvalidRevision as exc:
        raise InvalidPlan(f"{where}: {exc}") from None


def files_of(operations: Iterable[Operation]) -> list[str]:
    """Every file the operations name, in order, once."""
    return list(dict.fromkeys(o.file for o in operations))
