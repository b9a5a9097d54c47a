"""The one safe read path: names, reserved names, symlinks, the size gate, swapped files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sagemem import (
    FileChangedDuringRead,
    FileTooLarge,
    InvalidName,
    MemoryNotFound,
    ReservedName,
    SettingsError,
    UnsafeFile,
)
from sagemem.files import paths
from sagemem.files.paths import check_name, reserved_names, safe_read


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "user_a.md").write_text("---\ndescription: a\n---\nbody\n", encoding="utf-8")
    return directory


@pytest.mark.parametrize("name", [
    "MEMORY.md", "memory.md", "Memory.MD", "session-log.md", "SESSION-LOG.md",
])
def test_reserved_names_and_their_case_aliases_are_refused(name: str) -> None:
    with pytest.raises(ReservedName):
        check_name(name, reserved_names(None))


def test_nfd_spelling_of_a_reserved_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reserved.json").write_text(json.dumps(["café.md"]), encoding="utf-8")
    decomposed = "cafe\u0301.md"
    with pytest.raises(ReservedName):
        check_name(decomposed, reserved_names(tmp_path))


def test_reserved_json_adds_names(tmp_path: Path) -> None:
    (tmp_path / "reserved.json").write_text('["notes.md"]', encoding="utf-8")
    with pytest.raises(ReservedName):
        check_name("NOTES.md", reserved_names(tmp_path))
    assert check_name("user_notes.md", reserved_names(tmp_path)) == "user_notes.md"


def test_malformed_reserved_json_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "reserved.json").write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"reserved\.json"):
        reserved_names(tmp_path)


@pytest.mark.parametrize("name,reason", [
    ("", "empty"), ("../etc.md", "separator"), ("a/b.md", "separator"), ("a\\b.md", "separator"),
    (".hidden.md", "leading dot"), ("notes.txt", "ends in .md"), ("bell\x07.md", "control"),
    ("x" * 300 + ".md", "longer"), (".md", "leading dot"),
])
def test_bad_names_are_refused_with_a_reason(name: str, reason: str) -> None:
    with pytest.raises(InvalidName, match=reason):
        check_name(name)


def test_names_keep_their_on_disk_spelling() -> None:
    assert check_name("cafe\u0301.md") == "cafe\u0301.md"


def test_fifo_settings_file_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "reserved.json")
    with pytest.raises(SettingsError, match="regular"):
        reserved_names(tmp_path)


def test_symlinked_state_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reserved.json").symlink_to("/dev/zero")
    with pytest.raises(SettingsError, match="symlink"):
        reserved_names(tmp_path)


def test_safe_read_returns_bytes(folder: Path) -> None:
    read = safe_read(folder, "user_a.md")
    assert read.data.startswith(b"---") and read.size == len(read.data)


def test_missing_file_is_not_found(folder: Path) -> None:
    with pytest.raises(MemoryNotFound):
        safe_read(folder, "user_nope.md")


def test_symlink_inside_the_directory_is_refused(folder: Path) -> None:
    (folder / "user_link.md").symlink_to(folder / "user_a.md")
    with pytest.raises(UnsafeFile, match="symlink"):
        safe_read(folder, "user_link.md")


def test_symlink_pointing_outside_is_refused(folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("secret", encoding="utf-8")
    (folder / "user_out.md").symlink_to(secret)
    with pytest.raises(UnsafeFile):
        safe_read(folder, "user_out.md")


def test_directory_named_like_a_memory_is_refused(folder: Path) -> None:
    (folder / "user_dir.md").mkdir()
    with pytest.raises(UnsafeFile, match="regular"):
        safe_read(folder, "user_dir.md")


def test_oversized_file_is_refused_before_reading(folder: Path, monkeypatch) -> None:
    (folder / "user_big.md").write_bytes(b"x" * 2048)
    opened: list[object] = []
    real_open = os.open
    monkeypatch.setattr(paths.os, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    with pytest.raises(FileTooLarge) as info:
        safe_read(folder, "user_big.md", max_bytes=1024)
    assert info.value.size == 2048 and info.value.limit == 1024
    assert opened == []


def test_default_limit_is_512_kib(folder: Path) -> None:
    (folder / "user_limit.md").write_bytes(b"x" * (512 * 1024))
    assert safe_read(folder, "user_limit.md").size == 512 * 1024
    (folder / "user_over.md").write_bytes(b"x" * (512 * 1024 + 1))
    with pytest.raises(FileTooLarge):
        safe_read(folder, "user_over.md")


def test_file_swapped_between_check_and_read_is_refused(folder: Path, monkeypatch) -> None:
    real_read = paths._read_at_most

    def swap_then_read(fd: int, limit: int) -> bytes:
        data = real_read(fd, limit)
        replacement = folder / "swap.tmp"
        replacement.write_text("---\ndescription: swapped in\n---\n", encoding="utf-8")
        os.replace(replacement, folder / "user_a.md")
        return data

    monkeypatch.setattr(paths, "_read_at_most", swap_then_read)
    with pytest.raises(FileChangedDuringRead):
        safe_read(folder, "user_a.md")


def test_file_growing_during_read_is_refused(folder: Path, monkeypatch) -> None:
    real_read = paths._read_at_most

    def append_then_read(fd: int, limit: int) -> bytes:
        with open(folder / "user_a.md", "ab") as handle:
            handle.write(b"more\n")
        return real_read(fd, limit)

    monkeypatch.setattr(paths, "_read_at_most", append_then_read)
    with pytest.raises(FileChangedDuringRead):
        safe_read(folder, "user_a.md")


def test_file_replaced_once_mid_read_is_read_again_not_refused(folder: Path,
                                                                monkeypatch) -> None:
    real_read = paths._read_at_most
    swaps = iter([True])

    def swap_once_then_read(fd: int, limit: int) -> bytes:
        data = real_read(fd, limit)
        if next(swaps, False):  # another writer's atomic replace, once
            replacement = folder / "swap.tmp"
            replacement.write_text("---\ndescription: swapped in\n---\n", encoding="utf-8")
            os.replace(replacement, folder / "user_a.md")
        return data

    monkeypatch.setattr(paths, "_read_at_most", swap_once_then_read)
    assert b"swapped in" in safe_read(folder, "user_a.md").data
