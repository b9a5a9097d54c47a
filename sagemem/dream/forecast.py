"""What a plan would do to the folder, decided before anything is written.

The same forecast serves a report (nothing changes: this *is* the answer) and an
applying run (its loss ceiling is judged here, so a run over it is refused before its
first write). Each operation is checked against the folder as it is: some refusals are
final (an archive without a reason, a second operation on one file, a locked memory, a
rewrite of a memory that does not exist); a stale revision or a create over an existing
file is only *expected* to be refused — the guard decides when the run applies, and
records both sides as a conflict then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..files.paths import INDEX_FILE, name_key
from .apply import Outcome, change_of, fields_changed
from .lines import LostLine, lost_lines, prior_line_count, unindexed
from .plan import Operation, Plan


@dataclass(frozen=True)
class Check:
    """One operation judged against the folder: ``outcome`` is ``planned`` or
    ``refused``; ``final`` refusals are never attempted."""

    outcome: Outcome
    final: bool = False


@dataclass(frozen=True)
class Forecast:
    """The predicted run: each operation's check, the texts after, the lines lost."""

    checks: tuple[Check, ...]
    after: Mapping[str, str]
    lost: tuple[LostLine, ...]
    prior_lines: int
    """Fact lines of the memories the plan rewrites, before: the ceiling's denominator."""
    dropped: int
    """Lines of those memories no active memory holds after and nothing took the place
    of (archived whole, or reworded: not here)."""
    worst: tuple[tuple[int, str, int], ...]
    """(operation number, file, lines it drops), most first: named when refused."""
    folder_lines: int = 0
    """Fact lines of every live memory before: what the archives are measured against."""
    archived_lines: int = 0
    """Fact lines of the memories the plan archives (whole: restorable from archive/)."""

    @property
    def loss_share(self) -> float:
        """Dropped lines over the rewritten memories' lines: the ceiling on rewrites."""
        return self.dropped / self.prior_lines if self.prior_lines else 0.0

    @property
    def archive_share(self) -> float:
        """Archived lines over the folder's: the ceiling on archives — a run that takes a
        quarter of what the folder holds out of the active memories needs --allow-loss
        too, though each file stays whole in archive/."""
        return self.archived_lines / self.folder_lines if self.folder_lines else 0.0


def forecast(plan: Plan, before: Mapping[str, str], index: tuple[str, str | None],
             locked: frozenset[str], *, unreadable: frozenset[str] = frozenset(),
             archived: frozenset[str] = frozenset()) -> Forecast:
    """Judge ``plan`` against ``before`` (each live memory's text by file name), MEMORY.md's
    text and revision, the locked names, the memories that could not be read and the
    name keys of archive/; ``after`` applies every operation not refused."""
    index_text, index_revision = index
    on_disk = {name_key(f): f for f in before}
    revisions = {f: _revision_of_text(t) for f, t in before.items()}
    after = dict(before)
    index_after = index_text
    checks: list[Check] = []
    seen: dict[str, int] = {}
    for number, op in enumerate(plan.operations, 1):
        file = on_disk.get(name_key(op.file), op.file)
        refusal = _done_already(op, file, before, index_text, archived) or \
            _refusal(op, file, seen, revisions, index_revision, locked) \
            if file not in unreadable else (f"{file} cannot be read (see the notes); it is "
                                            "left as it is", True)
        seen.setdefault(name_key(op.file), number)
        if refusal is not None:
            why, final = refusal
            checks.append(Check(Outcome(number, op, "refused", why), final))
            continue
        was = index_text if op.file == INDEX_FILE else before.get(file)
        size, lines = change_of(was if op.op != "create" else None,
                                None if op.op == "archive" else op.text)
        fields = fields_changed(before.get(file), op.text) \
            if op.op == "rewrite" and op.file != INDEX_FILE else ()
        checks.append(Check(Outcome(number, op, "planned", bytes=size, lines=lines,
                                    fields=fields)))
        if op.file == INDEX_FILE:
            index_after = op.text or ""
            continue
        if op.op == "archive":
            after.pop(file, None)
        else:
            assert op.text is not None
            after[file] = op.text
    predicted = _with_losses(tuple(checks), before, after)
    if index_after == index_text:
        return predicted
    return replace(predicted, lost=(*predicted.lost,
                                    *unindexed(index_text, index_after, after)))


def _revision_of_text(text: str) -> str:
    from ..files.revision import revision_of

    return revision_of(text.encode("utf-8"))


def _done_already(op: Operation, file: str, before: Mapping[str, str], index_text: str,
                  archived: frozenset[str]) -> tuple[str, bool] | None:
    """An operation the folder already shows done (a plan applied twice): nothing to do,
    said so, and never a conflict of the run with itself."""
    if op.op == "archive":
        if file not in before and name_key(file) in archived:
            return f"{file} is in archive/ already: nothing to do", True
        return None
    now = index_text if op.file == INDEX_FILE else before.get(file)
    if now is not None and now == op.text:
        return f"{file} already reads as planned: nothing to do", True
    return None


def _refusal(op: Operation, file: str, seen: Mapping[str, int],
             revisions: Mapping[str, str], index_revision: str | None,
             locked: frozenset[str]) -> tuple[str, bool] | None:
    """Why ``op`` will not land, and whether that is final; None: it is planned."""
    if (earlier := seen.get(name_key(op.file))) is not None:
        return f"operation {earlier} of this plan already changes {op.file}", True
    if op.op == "archive" and not op.self_described:
        return "an archive needs a reason (it is kept beside the file in archive.jsonl)", True
    if op.file == INDEX_FILE:
        return _stale(op, index_revision)
    if op.op == "create":
        if file in revisions:
            return f"{file} already exists (the run records both sides as a conflict)", False
        return None
    if file not in revisions:
        return f"there is no memory {op.file} to {op.op}", True
    if op.op == "archive" and name_key(file) in locked:
        return f"{file} is locked (sagemem unlock {file} to let it be archived)", True
    return _stale(op, revisions[file])


def _stale(op: Operation, revision: str | None) -> tuple[str, bool] | None:
    assert op.revision is not None
    if revision is not None and revision.startswith(op.revision):
        return None
    now = (revision or "missing")[:12]
    return (f"{op.file} changed since the plan was made (planned at {op.revision[:12]}, now "
            f"{now}); plan it again", False)


def _with_losses(checks: tuple[Check, ...], before: Mapping[str, str],
                 after: Mapping[str, str]) -> Forecast:
    planned = [c.outcome for c in checks if c.outcome.status == "planned"]
    rewritten = [o.operation.file for o in planned
                 if o.operation.op == "rewrite" and o.operation.file != INDEX_FILE]
    archived = [o.operation.file for o in planned if o.operation.op == "archive"]
    lost = lost_lines(before, after, rewritten + archived, archived=archived)
    return Forecast(checks, after, tuple(lost), prior_line_count(before, rewritten),
                    sum(1 for line in lost if line.dropped), _worst(planned, lost),
                    prior_line_count(before, before), sum(1 for line in lost if line.archived))


def _worst(planned: list[Outcome], lost: list[LostLine]) -> tuple[tuple[int, str, int], ...]:
    dropped: dict[str, int] = {}
    for line in lost:
        if line.dropped:
            dropped[line.file] = dropped.get(line.file, 0) + 1
    ranked = [(o.number, o.operation.file, dropped[o.operation.file]) for o in planned
              if o.operation.op == "rewrite" and dropped.get(o.operation.file)]
    return tuple(sorted(ranked, key=lambda item: (-item[2], item[0])))
