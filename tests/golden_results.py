"""The parse result of a golden file as JSON-able data (shared by the test and its regenerator).

Regenerate after an intended parser change, then review the diff:
    python tests/golden_results.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sagemem.files.memory import parse

GOLDEN = Path(__file__).parent / "golden"
# sagemem's messages that quote the YAML library's own reason in parentheses: ruamel.yaml
# words it (and has no upper bound in pyproject), so a comparison keeps sagemem's words
# and that a reason is there, not the reason's wording.
_YAML_REASON = re.compile(r"^(does not parse as a whole|is not strict YAML 1\.2|"
                          r"does not parse as YAML) \((.+)\); ")


def without_yaml_wording(data: Any) -> Any:
    """``data`` with each quoted YAML reason replaced by ``…``, recursively."""
    if isinstance(data, str):
        return _YAML_REASON.sub(r"\1 (…); ", data)
    if isinstance(data, list):
        return [without_yaml_wording(item) for item in data]
    if isinstance(data, dict):
        return {key: without_yaml_wording(value) for key, value in data.items()}
    return data


def parsed(path: Path) -> dict[str, Any]:
    memory = parse(path.read_bytes(), path.name)
    return {
        "name": memory.name,
        "description": memory.description,
        "type": memory.type,
        "tags": list(memory.tags),
        "aliases": list(memory.aliases),
        "baseline": memory.baseline,
        "baselinePriority": memory.baseline_priority,
        "updated": memory.updated and memory.updated.isoformat(),
        "valid_at": memory.valid_at and memory.valid_at.isoformat(),
        "invalid_at": memory.invalid_at and memory.invalid_at.isoformat(),
        "superseded_by": memory.superseded_by,
        "has_frontmatter": memory.has_frontmatter,
        "body_line": memory.body_line,
        "body": memory.body,
        "problems": [[p.field, p.message, p.line] for p in memory.problems],
    }


if __name__ == "__main__":
    for source in sorted(GOLDEN.glob("*.md")):
        result = json.dumps(parsed(source), ensure_ascii=False, indent=2) + "\n"
        source.with_suffix(".result.json").write_text(result, encoding="utf-8")
