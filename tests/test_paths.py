"""The one safe read path: names, reserved names, symlinks, the size gate, swapped files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


# -- one name, however it is spelt (issue 20, item 10) --------------------------------------

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
DEVICE_REFUSAL = "a device name on Windows"


def test_case_width_and_unicode_form_variants_are_one_name() -> None:
    spellings = ["user_pets.md", "USER_PETS.md", "ｕｓｅｒ_pets.md", "ＵＳＥＲ_ＰＥＴＳ.ｍｄ"]
    assert {paths.name_key(s) for s in spellings} == {"user_pets.md"}
    assert paths.name_key("cafe\u0301.md") == paths.name_key("café.md")


def test_a_full_width_reserved_name_is_refused() -> None:
    with pytest.raises(ReservedName):
        check_name("ＭＥＭＯＲＹ.md", reserved_names(None))


@pytest.mark.parametrize("name", [
    "CON.md", "con.md", "nul.md", "Nul.MD", "prn.md", "AUX.md", "com1.md", "COM9.md",
    "lpt1.md", "LPT9.md", "con.notes.md", "nul .md", "com¹.md",
])
def test_windows_device_names_are_refused_for_a_new_file(name: str) -> None:
    with pytest.raises(InvalidName, match=DEVICE_REFUSAL):
        paths.check_new_name(name)
    assert check_name(name) == name  # one made by hand still reads, so it can be renamed


@pytest.mark.parametrize("name", ["console.md", "user_con.md", "com10.md", "lpt0.md",
                                  "nulls.md", "auxiliary.md", "com.md"])
def test_names_that_only_start_like_a_device_are_allowed(name: str) -> None:
    assert paths.check_new_name(name) == name


def test_a_nul_in_a_name_is_refused_as_a_nul_not_as_a_separator() -> None:
    with pytest.raises(InvalidName) as caught:
        check_name("user\x00pets.md")
    assert "NUL" in caught.value.reason and "separator" not in caught.value.reason


def sample_copy(tmp_path: Path) -> tuple[Path, Path]:
    import shutil

    shutil.copytree(SAMPLE, tmp_path / "memory", ignore=shutil.ignore_patterns("eval"))
    return tmp_path / "memory", tmp_path / "state"


def cli(directory: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``sagemem`` CLI as a user runs it: a subprocess."""
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(directory),
                           "--state-dir", str(state), *args], capture_output=True,
                          text=True, encoding="utf-8", timeout=60, check=False,
                          env={k: v for k, v in os.environ.items()
                               if not k.startswith("SAGE_MEM_")} | {"SAGE_MEM_SEMANTIC": "off",
                                                                   "SAGE_MEM_GLOBAL_DIR": "off"})


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc
    assert proc.stdout == "" and proc.stderr.startswith("error: "), proc
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    return proc.stderr


NEW_TEXT = "---\nname: variant\ndescription: a variant\nmetadata:\n  type: user\n---\nBody.\n"


def test_the_cli_refuses_to_create_a_variant_or_a_device_name(tmp_path: Path) -> None:
    directory, state = sample_copy(tmp_path)
    source = tmp_path / "new.md"
    source.write_text(NEW_TEXT, encoding="utf-8")
    before = sorted(p.name for p in directory.iterdir())
    new = ["new", "--type", "user", "--name", "variant", "--description", "a variant"]
    assert "user_pets.md already exists" in one_error_line(
        cli(directory, state, *new, "--file", "ｕｓｅｒ_pets.md"))
    assert "user_pets.md already exists" in one_error_line(
        cli(directory, state, "write", "USER_PETS.md", "--expect", "new", "--from", str(source)))
    for device in ("CON.md", "nul"):
        assert DEVICE_REFUSAL in one_error_line(cli(directory, state, *new, "--file", device))
        assert DEVICE_REFUSAL in one_error_line(
            cli(directory, state, "write", device, "--expect", "new", "--from", str(source)))
    assert sorted(p.name for p in directory.iterdir()) == before


def test_the_memory_tool_refuses_a_variant_or_a_device_name_on_create_and_rename(
        tmp_path: Path) -> None:
    from sagemem import MemoryStore
    from sagemem.memory_tool import MemoryToolHandler

    directory, state = sample_copy(tmp_path)
    tool = MemoryToolHandler(MemoryStore(directory, state))
    before = sorted(p.name for p in directory.iterdir())
    taken = tool.handle({"command": "create", "path": "/memories/ｕｓｅｒ_pets.md",
                         "file_text": "A variant.\n"})
    assert taken.startswith("Error:") and "already exists" in taken
    device = tool.handle({"command": "create", "path": "/memories/nul.md",
                          "file_text": "A device.\n"})
    assert device.startswith("Error:") and DEVICE_REFUSAL in device
    renamed = tool.handle({"command": "rename", "old_path": "/memories/user_pets.md",
                           "new_path": "/memories/CON.md"})
    assert renamed.startswith("Error:") and DEVICE_REFUSAL in renamed
    assert sorted(p.name for p in directory.iterdir()) == before


def test_the_mcp_server_over_stdio_refuses_a_variant_a_device_name_or_a_nul(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    directory, state = sample_copy(tmp_path)
    before = sorted(p.name for p in directory.iterdir())
    params = StdioServerParameters(command=sys.executable, args=["-m", "sagemem", "mcp"], env={
        **os.environ, "SAGE_MEM_DIR": str(directory), "SAGE_MEM_STATE_DIR": str(state)})

    async def main() -> list[object]:
        async with Client(params) as client:
            return [await client.call_tool("write_memory", {
                "name": name, "content": NEW_TEXT, "expected_revision": "new"})
                    for name in ("ＵＳＥＲ_ＰＥＴＳ.md", "CON.md", "user\x00pets.md")]

    variant, device, nul = asyncio.run(main())
    assert variant.structured_content["status"] == "refused"  # type: ignore[attr-defined]
    assert variant.structured_content["file"] == "user_pets.md"  # type: ignore[attr-defined]
    assert device.is_error  # type: ignore[attr-defined]
    assert DEVICE_REFUSAL in device.content[0].text  # type: ignore[attr-defined]
    assert nul.is_error and "no NUL character" in nul.content[0].text  # type: ignore[attr-defined]
    assert sorted(p.name for p in directory.iterdir()) == before


def test_read_and_show_take_the_exact_spelling_then_the_only_variant(tmp_path: Path) -> None:
    directory, state = sample_copy(tmp_path)
    pets = (directory / "user_pets.md").read_text(encoding="utf-8")
    (directory / "USER_PETS.md").write_text(pets.replace("芝麻", "Mochi"), encoding="utf-8")
    assert "芝麻" in cli(directory, state, "show", "user_pets").stdout
    assert "Mochi" in cli(directory, state, "read", "USER_PETS").stdout
    assert "Mochi" in cli(directory, state, "show", "USER_PETS.md").stdout
    (directory / "user_pets.md").unlink()
    for command in ("show", "read"):
        for spelling in ("user_pets", "ｕｓｅｒ_pets", "User_Pets.md"):
            proc = cli(directory, state, command, spelling)
            assert proc.returncode == 0 and "Mochi" in proc.stdout, (command, spelling, proc)


def test_a_name_two_files_answer_to_is_an_error_naming_both(tmp_path: Path) -> None:
    directory, state = sample_copy(tmp_path)
    pets = (directory / "user_pets.md").read_text(encoding="utf-8")
    (directory / "USER_PETS.md").write_text(pets.replace("芝麻", "Mochi"), encoding="utf-8")
    for command in ("show", "read"):
        error = one_error_line(cli(directory, state, command, "User_Pets"))
        assert "USER_PETS.md, user_pets.md" in error, error


def claude_code_hook(directory: Path, state: Path, tool: str, file_path: Path
                     ) -> subprocess.CompletedProcess[bytes]:
    """``sagemem hook claude-code`` as Claude Code runs it before a Write: JSON on stdin."""
    payload = {"session_id": "8e0c4f1a-2b7d-4c9e-a1f3-5d6b7c8e9f01", "cwd": str(directory),
               "transcript_path": "/home/u/.claude/projects/x/s.jsonl",
               "permission_mode": "default", "hook_event_name": "PreToolUse",
               "tool_name": tool, "tool_use_id": "toolu_01",
               "tool_input": {"file_path": str(file_path), "content": NEW_TEXT}}
    env = {**os.environ, "SAGE_MEM_DIR": str(directory), "SAGE_MEM_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "sagemem", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env,
                          timeout=60, check=False)


def test_the_write_gate_denies_creating_a_variant_or_a_device_name(tmp_path: Path) -> None:
    directory, state = sample_copy(tmp_path)
    for new, says in (("USER_PETS.md", "user_pets.md"), ("ｕｓｅｒ_pets.md", "user_pets.md"),
                      ("nul.md", DEVICE_REFUSAL)):
        answer = claude_code_hook(directory, state, "Write", directory / new)
        assert answer.returncode == 0, answer
        decision = json.loads(answer.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny"
        assert says in decision["permissionDecisionReason"]
    allowed = claude_code_hook(directory, state, "Write", directory / "user_new_note.md")
    assert (allowed.returncode, allowed.stdout) == (0, b"")
