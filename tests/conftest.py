"""Shared fixtures: every test runs with no SAGE_MEM_* variable from the real environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("SAGE_MEM_"):
            monkeypatch.delenv(key)
    # The suite's expectations are lexical (issue 13 keeps those numbers with semantic
    # off); the tests of vectors and modes turn it on themselves.
    monkeypatch.setenv("SAGE_MEM_SEMANTIC", "off")
    # A real ~/.sage-mem/global must not join every test's searches; the layer tests
    # point it at a folder of their own.
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", "off")
    # Nor may the real ~/.claude's transcripts join every test's injections; the
    # transcript tests turn recall on over their own fixtures.
    monkeypatch.setenv("SAGE_MEM_TRANSCRIPTS", "off")


def write_memory(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_bytes(text.encode("utf-8"))
    return path


MEMORY_TEXT = """---
name: {name}
description: {description}
metadata:
  type: {type}
---
{body}
"""


@pytest.fixture
def fake() -> Any:
    """A deterministic embedder (``fake_embedder.FakeEmbedder``), registered as "fake"."""
    from fake_embedder import FakeEmbedder, factory_of

    from sagemem.embed.embedder import register_embedder

    embedder = FakeEmbedder()
    register_embedder("fake", factory_of(embedder))
    return embedder
