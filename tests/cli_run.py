"""Running the CLI against one store, for the CLI test modules: in-process
(``store_runner``) or as a shell runs it (``sagemem``)."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from sagemem.cli import main
from sagemem.store import MemoryStore


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Run = Callable[..., Result]


def store_runner(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    """``sagemem --dir <store> --state-dir <store's state> ARGS…``, optionally with
    ``stdin`` text, returning the exit code and what it printed."""

    def run(*args: str, stdin: str | None = None) -> Result:
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
        try:
            code = main(["--dir", str(store.directory), "--state-dir", str(store.state_dir),
                         *args])
        finally:
            sys.stdin = sys.__stdin__
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def one_line_error(result: Result, code: int = 1) -> str:
    """The single ``error:`` line a failing command prints (and nothing on stdout)."""
    assert result.code == code, result
    assert result.out == "" and result.err.startswith("error: ")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    return result.err


def sagemem(store: MemoryStore, *args: str, stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
    """``python -m sagemem --dir … --state-dir …`` as a shell runs it."""
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(store.directory),
                           "--state-dir", str(store.state_dir), *args], input=stdin,
                          capture_output=True, text=True, encoding="utf-8", timeout=60,
                          check=False)
