"""``files/keep.py``: text a write could not save is kept privately, or not at all."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemem.files.keep import keep_text

NOW = datetime(2026, 11, 30, 2, 39, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def system_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "systemp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_kept_text_is_a_private_file_in_a_private_directory(tmp_path: Path) -> None:
    kept = keep_text("my words\n", "user_tea.md", tmp_path / "state" / "edits", now=NOW)
    assert kept is not None and kept.read_text() == "my words\n"
    assert kept.parent == tmp_path / "state" / "edits" and kept.name.endswith("-user_tea.md")
    assert (mode(kept), mode(kept.parent)) == (0o600, 0o700)


def test_two_kept_texts_of_one_second_do_not_collide(tmp_path: Path) -> None:
    first = keep_text("one\n", "user_tea.md", tmp_path / "edits", now=NOW)
    second = keep_text("two\n", "user_tea.md", tmp_path / "edits", now=NOW)
    assert first != second and first and second and second.read_text() == "two\n"


def test_an_unusable_directory_falls_back_to_a_private_temp_directory(
        tmp_path: Path, system_temp: Path) -> None:
    blocked = tmp_path / "edits"
    blocked.write_text("a file where the folder should be")
    kept = keep_text("my words\n", "user_tea.md", blocked, now=NOW)
    assert kept is not None and kept.read_text() == "my words\n"
    assert kept.parent.parent == system_temp
    assert (mode(kept), mode(kept.parent)) == (0o600, 0o700)


def test_a_symlinked_directory_is_not_followed(tmp_path: Path, system_temp: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "edits").symlink_to(elsewhere)
    kept = keep_text("my words\n", "user_tea.md", tmp_path / "edits", now=NOW)
    assert kept is not None and kept.parent.parent == system_temp
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("written_before_failing", [0, 3])
def test_a_full_disk_keeps_nothing_and_leaves_no_partial_file(
        tmp_path: Path, system_temp: Path, monkeypatch: pytest.MonkeyPatch,
        written_before_failing: int) -> None:
    budget = [written_before_failing]

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        if budget[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = min(budget[0], len(data))
        budget[0] -= taken
        return real_write(fd, bytes(data[:taken]))

    real_write = os.write
    monkeypatch.setattr(os, "write", full_disk)
    assert keep_text("my words\n", "user_tea.md", tmp_path / "edits", now=NOW) is None
    assert list((tmp_path / "edits").iterdir()) == []
    assert list(system_temp.rglob("*")) == []
