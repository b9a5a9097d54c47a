"""Proof under load: 8 processes and an editor never lose a write silently or tear a file;
kill -9 at random instants leaves the old bytes or the new ones. The full-size run (8 × 200,
200 kills) is ``benchmarks/bench_writes.py``; these are the same code, kept short for CI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_writes

pytestmark = pytest.mark.stress


def test_concurrent_writers_and_an_editor_lose_nothing_silently(tmp_path: Path) -> None:
    report = bench_writes.stress(tmp_path, writers=8, cycles=30)
    assert report["attempts"] == 8 * 30
    assert report["silent_loss"] == 0, report
    assert report["refused_without_record"] == 0, report
    assert report["in_final"] + report["in_conflict_record"] \
        + report["overwritten_by_editor"] == report["attempts"]
    assert report["in_conflict_record"] == report["refused"]
    assert report["torn_files"] == 0 and report["leftover_temp_files"] == 0
    assert report["written"] > 0 and report["refused"] > 0  # the race really happened


def test_concurrent_writers_alone_lose_nothing_at_all(tmp_path: Path) -> None:
    report = bench_writes.stress(tmp_path, writers=4, cycles=20, with_editor=False)
    assert report["in_final"] == report["written"]
    assert report["in_conflict_record"] == report["refused"]
    assert report["overwritten_by_editor"] == report["silent_loss"] == 0


def test_kill_9_leaves_the_old_or_the_new_bytes(tmp_path: Path) -> None:
    report = bench_writes.kill_nine(tmp_path, iterations=25)
    assert report["torn"] == 0, report
