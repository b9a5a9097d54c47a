"""Measure the redactor against the secret formats gitleaks and detect-secrets cover, and
against ordinary prose, and write the docs' table of what it caught, missed and flagged.

    python tools/redaction_table.py           # print the table
    python tools/redaction_table.py --write   # put it in docs/redaction.md, between its markers

The formats are ``tests/redaction/secret_formats.md`` (one example each, the secret
marked ``⟦…⟧``); the prose is ``tests/redaction/ordinary_prose*.md`` and the sample
folder, where any finding is a false alarm. ``tests/test_redact.py`` fails while
docs/redaction.md's table is not the one this prints.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from sagemem.writes.redact import MARK, redact

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ROOT / "tests" / "redaction" / "secret_formats.md"
PROSE = (*sorted((ROOT / "tests" / "redaction").glob("ordinary_prose*.md")),
         *sorted((ROOT / "sample_memory").glob("*.md")))
PAGE = ROOT / "docs" / "redaction.md"
BEGIN, END = "<!-- redaction-table: begin -->", "<!-- redaction-table: end -->"

_SECRET = re.compile(r"⟦(.*?)⟧", re.S)
_ENTRY = re.compile(r"^## (?P<name>[^\n]+)\n(?P<meta>[^\n]+)\n```text\n(?P<text>.*?)\n```$",
                    re.M | re.S)


@dataclass(frozen=True)
class Format:
    """One example of a format: ``kind`` is None for one kept on purpose (``why``)."""

    name: str
    gitleaks: str | None
    detect_secrets: str | None
    kind: str | None
    why: str | None
    marked: str

    @property
    def text(self) -> str:
        """The example as an agent would write it."""
        return _SECRET.sub(lambda m: m.group(1), self.marked)

    @property
    def redacted(self) -> str:
        """The example as it must reach disk."""
        return _SECRET.sub(lambda m: MARK.format(kind=self.kind), self.marked)


def formats(path: Path = FORMATS) -> list[Format]:
    """Every example in the corpus, in its order."""
    return [_format(m) for m in _ENTRY.finditer(path.read_text(encoding="utf-8"))]


def _format(match: re.Match[str]) -> Format:
    meta = dict(field.split(": ", 1) for field in match.group("meta").split(" · "))
    given = {key: None if value == "—" else value for key, value in meta.items()}
    return Format(match.group("name"), given["gitleaks"], given["detect-secrets"],
                  given["kind"], given.get("why"), match.group("text"))


def outcome(example: Format) -> str:
    """``caught`` (exactly as marked), ``kept`` (as it must be), or what went wrong:
    ``flagged`` (a format kept on purpose changed), ``partly or as another kind``,
    ``missed`` (nothing changed)."""
    result = redact(example.text)
    if example.kind is None:
        return "kept" if result.text == example.text else "flagged"
    if result.text == example.redacted:
        return "caught"
    return "partly or as another kind" if result.changed else "missed"


def false_alarms(paths: tuple[Path, ...] = PROSE) -> list[tuple[Path, int, str]]:
    """Each finding in the prose, where none should be: (file, line, kind)."""
    return [(path, found.line, found.kind) for path in paths
            for found in redact(path.read_text(encoding="utf-8")).found]


def table() -> str:
    """The page's table: one row per format, then the totals and the false alarms."""
    rows = ["| format | gitleaks | detect-secrets | sagemem |", "|---|---|---|---|"]
    outcomes = []
    for example in formats():
        result = outcome(example)
        outcomes.append((example, result))
        shown = (f"caught: `{example.kind}`" if result == "caught" else
                 "kept on purpose" if result == "kept" else f"**{result}**")
        rows.append(f"| {example.name} | {_rule(example.gitleaks)} | "
                    f"{_rule(example.detect_secrets)} | {shown} |")
    return "\n".join([*rows, "", _totals(outcomes), _prose()]) + "\n"


def _rule(name: str | None) -> str:
    return f"`{name}`" if name else "—"


def _totals(outcomes: list[tuple[Format, str]]) -> str:
    secrets = [(e, r) for e, r in outcomes if e.kind is not None]
    caught = sum(r == "caught" for _, r in secrets)
    per_tool = [
        f"{sum(r == 'caught' for e, r in secrets if getattr(e, attr))} of "
        f"{sum(1 for e, _ in secrets if getattr(e, attr))} {label}"
        for attr, label in (("gitleaks", "with a gitleaks rule"),
                            ("detect_secrets", "with a detect-secrets plugin"))]
    kept = [e for e, r in outcomes if e.kind is None]
    return (f"Caught {caught} of {len(secrets)} formats ({'; '.join(per_tool)}); missed "
            f"{len(secrets) - caught}; {len(kept)} kept on purpose "
            f"({', '.join(e.name.lower() for e in kept)}: why in the corpus).")


def _prose() -> str:
    alarms = false_alarms()
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in PROSE)
    listed = "".join(f"; {p.relative_to(ROOT)}:{line} `{kind}`" for p, line, kind in alarms)
    return (f"False alarms on the prose corpus ({len(PROSE)} files, {lines} lines: "
            f"`tests/redaction/ordinary_prose*.md` and `sample_memory/`): "
            f"{len(alarms)}{listed}.")


def write_page(page: Path = PAGE) -> bool:
    """Put the table in ``page`` between its markers; whether anything changed."""
    text = page.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:start] + "\n" + table() + text[end:]
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def page_table(page: Path = PAGE) -> str:
    """The table the page holds now."""
    text = page.read_text(encoding="utf-8")
    return text[text.index(BEGIN) + len(BEGIN) + 1:text.index(END)]


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        print(f"{PAGE.name} updated" if write_page() else f"{PAGE.name} already up to date")
    elif not argv:
        print(table(), end="")
    else:
        print("usage: python tools/redaction_table.py [--write]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
