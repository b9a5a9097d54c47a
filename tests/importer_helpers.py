"""Shared by the importer tests: fixture copies outside any git checkout, and a check
that an Incoming reads back through sagemem's own parser."""

from __future__ import annotations

import shutil
from pathlib import Path

from sagemem.files.memory import Memory, parse
from sagemem.transfer.incoming import Batch, Incoming

FIXTURES = Path(__file__).parent / "fixtures" / "importers"


def copy_fixture(name: str, target: Path) -> Path:
    """A copy of ``fixtures/importers/<name>`` at ``target`` (tmp_path is outside the
    repository's checkout, so no ``.git`` above it decides the project root)."""
    shutil.copytree(FIXTURES / name, target)
    return target


def parsed(item: Incoming) -> Memory:
    memory = parse(item.text.encode("utf-8"), item.name)
    assert memory.has_frontmatter and not memory.problems, (item.name, memory.problems)
    return memory


def by_name(batch: Batch) -> dict[str, Incoming]:
    return {item.name: item for item in batch.items}


def source_of(item: Incoming) -> str:
    line = next(li for li in item.text.splitlines() if li.startswith("source: "))
    return line[len("source: "):]
