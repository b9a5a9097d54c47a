"""What the agent-facing commands print: search results, read pages, evaluation reports,
injections and their explanation, sessions, the access ledger and task checkpoints —
the documented JSON shapes and their text forms.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..config import JSON_VERSION
from ..files.memory import file_lines
from ..files.plural import counted
from .output import fit, width_of, wrap

if TYPE_CHECKING:  # and imported where used: `sagemem search` needs no ledger or tasks
    from ..history.ledger import MemoryAccess
    from ..inject.block import Injection
    from ..inject.session import Budget, SessionState
    from ..inject.tasks import Checkpoint
    from ..search.reading import ReadResult
    from ..search.results import SearchResponse, SearchResult
    from ..transcripts.search import TranscriptSearch


def search_json(response: SearchResponse) -> dict[str, Any]:
    """The documented search object: query, results, coverage (field names are fixed)."""
    return {
        "version": JSON_VERSION,
        "query": response.query,
        "results": [asdict(r) for r in response.results],
        "coverage": asdict(response.coverage),
        **({"relevance": asdict(response.relevance)} if response.relevance else {}),
        **notices_json(response.notices),
    }


def notices_json(notices: Iterable[str]) -> dict[str, Any]:
    """``{"notices": [...]}`` when something degraded (the index, the ledger…), else {}:
    the key is only there when it has something to say."""
    listed = list(notices)
    return {"notices": listed} if listed else {}


def _marks(result: SearchResult) -> str:
    """What a hit's heading says about its validity and place: found, but not current."""
    mark = f"  (invalid since {result.invalid_at}" if result.invalid else ""
    if mark and result.superseded_by:
        mark += f"; see {result.superseded_by}"
    mark += ")" if mark else ""
    mark += f"  (valid from {result.valid_at})" if result.not_yet_valid else ""
    return mark + ("  (archived)" if result.archived else "")


def search_text(response: SearchResponse, columns: int = 80) -> list[str]:
    """Each hit as ``file.md:40-52``, its description, then its paragraph."""
    lines: list[str] = []
    given = _injected_files(response)
    for result in response.results:
        weak = "  (weak)" if given is not None and result.file not in given else ""
        tag, flag = ("[global] ", " --global") if result.layer == "global" else ("", "")
        lines += wrap(f"{tag}{result.file}:{result.start_line}-{result.end_line}  [{result.type}]"
                      f"  {result.score:.2f}{weak}{_marks(result)}", columns)
        lines.append("  " + fit(result.description, columns - 2).rstrip())
        paragraph = file_lines(result.paragraph)  # the lines start_line-end_line count
        lines += [part for line in paragraph[:PARAGRAPH_LINES]
                  for part in wrap("    " + line, columns)]
        if len(paragraph) > PARAGRAPH_LINES:
            lines.append(f"    … (sagemem read{flag} {result.file} --start-line "
                         f"{result.start_line})")
        lines.append("")
    if not response.results:
        lines.append("(no memory matches)")
    coverage = response.coverage
    lines.append(f"scanned {counted(coverage.files_scanned, 'file')}, "
                 f"{counted(coverage.candidates, 'candidate')}, "
                 f"{counted(coverage.paragraphs_filtered, 'paragraph')} filtered")
    if given is not None and response.results:
        lines.append(_gate_line(response, len(given)))
    return lines


def _injected_files(response: SearchResponse) -> set[str] | None:
    """The results inject would give (None for a lexical search: it gives them all)."""
    if response.relevance is None:
        return None
    from ..search.gate import injectable

    return {r.file for r in injectable(response)}


def _gate_line(response: SearchResponse, given: int) -> str:
    """What inject would do with this question: the relevance gate's verdict."""
    relevance = response.relevance
    assert relevance is not None
    if relevance.words_only:
        return (f"relevance judged by words alone (meaning not ready); inject would give "
                f"{counted(given, 'memory', 'memories')}")
    if not relevance.passes:
        return (f"relevance {relevance.score:+.2f}: below the gate; these may have nothing "
                "to do with the question, and inject would give none")
    return (f"relevance {relevance.score:+.2f}: passes the gate; inject would give "
            f"{counted(given, 'memory', 'memories')}")


PARAGRAPH_LINES = 12


def read_json(result: ReadResult, notices: Iterable[str] = ()) -> dict[str, Any]:
    return {"version": JSON_VERSION, **asdict(result), **notices_json(notices)}


_SEARCH_METRICS = (("recall@5", "recall@5"), ("mrr@10", "mrr@10"), ("passage_hit", "passage"))
_INJECT_METRICS = (("inject_recall", "inj.recall"), ("spurious_unrelated", "spur.unrel"),
                   ("spurious_injected", "spur.inj"))
_SHORT = {"lexical": "lex", "semantic": "sem", "hybrid": "hyb"}


def eval_text(report: dict[str, Any]) -> list[str]:
    """Two tables, by kind — what search returns, what inject would inject — with the
    modes side by side; then the first mode's worst misses."""
    modes = report.get("modes") or {report.get("mode", "lexical"): report}
    lines = [f"set {report['set']}: {report['queries']} queries "
             f"({report['answerable']} answerable, {report['unrelated']} unrelated)"]
    for title, metrics in (("search", _SEARCH_METRICS), ("inject", _INJECT_METRICS)):
        lines += ["", *_mode_table(title, metrics, modes)]
    for mode, mode_report in modes.items():
        if mode_report.get("curve"):
            lines += ["", *_curve_table(mode, mode_report["curve"])]
        elif "curve" in mode_report:
            lines += ["", f"curve ({mode}): none — words alone decide what is injected, "
                          "there is no gate to move"]
    if report["worst_misses"]:
        lines.append("")
        lines.append(f"worst misses ({report.get('mode', 'lexical')}):")
        for miss in report["worst_misses"]:
            lines.append(f"  {miss['id']} [{miss['kind']}] {fit(miss['query'], 50).rstrip()}")
            lines.append(f"      wanted {', '.join(miss['relevant']) or 'nothing'}; "
                         f"got {', '.join(miss['returned']) or 'nothing'}")
    return lines


def _mode_table(title: str, metrics: tuple[tuple[str, str], ...],
                modes: dict[str, dict[str, Any]]) -> list[str]:
    """One row per kind; per metric, one column per mode."""
    cell = max(6, 12 // len(modes))  # a lone mode's column is as wide as its label
    head = f"{title:<12}" + "".join(f"{label:>{cell * len(modes) + 2}}" for _, label in metrics)
    sub = f"{'':<12}" + "".join("  " + "".join(f"{_SHORT.get(m, m[:3]):>{cell}}"
                                               for m in modes) for _ in metrics)
    first = next(iter(modes.values()))
    kinds = ["all", *first["by_kind"]]
    rows = []
    for kind in kinds:
        cells = ""
        for key, _ in metrics:
            values = [(r if kind == "all" else r["by_kind"].get(kind, {})).get(key)
                      for r in modes.values()]
            cells += "  " + "".join(f"{_metric(v):>{cell}}" for v in values)
        rows.append(f"{kind:<12}{cells}")
    return [head, sub, *rows]


def _curve_table(mode: str, curve: list[dict[str, Any]]) -> list[str]:
    """The gate's trade-off in ``mode``: one row per threshold, the default marked."""
    head = f"gate ({_SHORT.get(mode, mode[:3])})  threshold" + "".join(
        f"{label:>12}" for _, label in _INJECT_METRICS)
    rows = [f"{'default' if point['default'] else '':<12}{point['threshold']:>+10.3f}"
            + "".join(f"{_metric(point[key]):>12}" for key, _ in _INJECT_METRICS)
            for point in curve]
    return [head, *rows]


def _metric(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"[1:] if 0 <= value < 1 else f"{value:.2f}"


# -- injection -------------------------------------------------------------------

def injection_json(injection: Injection) -> dict[str, Any]:
    """The documented inject object (field names are fixed; later versions only add)."""
    return {
        "version": JSON_VERSION,
        "text": injection.text,
        "items": [asdict(item) for item in injection.items],
        "suppressed": [asdict(s) for s in injection.suppressed],
        "status_card": injection.status_card,
        "budget": {"used": injection.budget_used, "body_pool": injection.body_pool,
                   "card_reserve": injection.card_reserve},
        **notices_json(injection.notices),
    }


def explain_text(attempts: Iterable[dict[str, Any]]) -> list[str]:
    """Every candidate of the last attempts, its score and what became of it."""
    lines = []
    for attempt in attempts:
        repeat = "  (repeat of the last question: not searched)" if attempt.get("repeat") else ""
        lines.append(f"step {attempt.get('step')} at {attempt.get('at')}: "
                     f"{fit(str(attempt.get('question', '')), 50).rstrip()}{repeat}")
        for c in attempt.get("candidates", []):
            lines.append(f"  {c['outcome']:<17} {c['reason']:<9} {c['score']:>7.3f}  "
                         f"{c['file']}:{c['lines']}")
        if not attempt.get("candidates"):
            lines.append("  (no candidates)")
    return lines


def session_text(state: SessionState, budget: Budget) -> list[str]:
    return [f"session          {state.session}",
            f"steps            {state.steps}",
            f"body pool        {state.body_used} of {budget.body_pool} bytes used",
            f"card reserve     {state.card_used} of {budget.card_reserve} bytes used",
            f"status cards     {len(state.card_signatures)} shown",
            f"last question    {state.last_signature or '-'}"]


# -- access ledger ---------------------------------------------------------------

def ledger_json(entries: dict[str, MemoryAccess]) -> dict[str, Any]:
    """``ledger --json``: the shape of ``<state>/access.json``, every kind spelt out."""
    from ..history.ledger import KINDS
    return {"version": JSON_VERSION,
            "memories": {file: {kind: asdict(getattr(access, kind)) for kind in KINDS}
                         for file, access in sorted(entries.items())}}


def ledger_text(entries: dict[str, MemoryAccess], columns: int = 80) -> list[str]:
    """One line per memory: each kind's count and last day side by side, never summed."""
    from ..history.ledger import KINDS
    if not entries:
        return ["(no access recorded)"]
    file_w = max(12, min(max(width_of(f) for f in entries), columns - 52))
    header = [fit("FILE", file_w), *(fit(kind.upper(), 16) for kind in KINDS)]
    lines = [" ".join(header).rstrip()]
    for file, access in sorted(entries.items()):
        cells = [f"{a.count:>5} {(a.last or '-')[:10]:<10}"
                 for a in (access.injected, access.read, access.use)]
        name = fit(file, file_w)
        if width_of(file) > file_w:  # never cut a name that is pasted into commands
            lines.append(file)
            name = " " * file_w
        lines.append(" ".join([name, *cells]).rstrip())
    return lines


# -- task checkpoints ------------------------------------------------------------

def checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    """``task show --json``: the handle, the counts, every item and every problem."""
    from ..inject.tasks import handle
    return {
        "version": JSON_VERSION,
        "task_id": checkpoint.task_id,
        "directory": checkpoint.path.parent.name,
        "path": str(checkpoint.path),
        "readable": checkpoint.readable,
        "revision": checkpoint.revision or None,
        "handle": handle(checkpoint),
        "counts": {"open": checkpoint.open_count, "done": checkpoint.done_count,
                   "done_without_evidence": checkpoint.unproven_count},
        "items": [{"line": i.line, "text": i.text, "done": i.done, "evidence": i.evidence}
                  for i in checkpoint.items],
        "problems": list(checkpoint.problems),
    }


def checkpoint_text(checkpoint: Checkpoint) -> list[str]:
    """``task show``: the handle, then one line per item, then the problems."""
    from ..inject.tasks import handle
    lines = [handle(checkpoint)]
    for item in checkpoint.items:
        mark = "x" if item.done else " "
        flag = "  (no evidence)" if item.done and not item.evidence else ""
        lines.append(f"{item.line:>5}  [{mark}] {item.text}{flag}")
    lines.extend(f"problem: {problem}" for problem in checkpoint.problems)
    return lines


def transcripts_json(query: str, found: TranscriptSearch) -> dict[str, Any]:
    """``search --transcripts --json``: each hit with its citation, and what was read."""
    return {
        "version": JSON_VERSION,
        "query": query,
        "transcripts": [{"citation": hit.citation, **asdict(hit)} for hit in found.hits],
        "files_searched": found.files_searched,
        "turns_searched": found.turns_searched,
        **notices_json(found.notices),
    }


def transcripts_text(found: TranscriptSearch) -> list[str]:
    """Each hit as ``transcript <session>:<line>  date  role``, then its excerpt; the
    excerpts are redacted and their control characters already made visible."""
    lines: list[str] = []
    for hit in found.hits:
        lines += [f"{hit.citation}  {hit.date or 'undated'}  {hit.role}", f"    {hit.excerpt}",
                  ""]
    if not found.hits:
        lines.append("No past session matches.")
    lines.append(f"Searched {counted(found.files_searched, 'transcript')}, "
                 f"{counted(found.turns_searched, 'turn')}; not saved memories.")
    return lines
