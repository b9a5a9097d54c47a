"""``sagemem doctor`` on the other hosts: one finding each, wired or not and where, the
server's command still there, the file readable — in text and in ``--json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, project, memory = tmp_path / "home", tmp_path / "project", tmp_path / "memory"
    for folder in (home, project, memory):
        folder.mkdir()
    return home, project, memory


def sagemem(dirs: tuple[Path, Path, Path], *args: str) -> subprocess.CompletedProcess[str]:
    home, project, memory = dirs
    env = {k: v for k, v in os.environ.items()
           if k not in ("CODEX_HOME", "XDG_CONFIG_HOME", "SAGE_MEM_STATE_DIR")}
    env.update(HOME=str(home), SAGE_MEM_DIR=str(memory))
    return subprocess.run([sys.executable, "-m", "sagemem", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def host_findings(dirs: tuple[Path, Path, Path]) -> dict[str, list[dict[str, Any]]]:
    result = sagemem(dirs, "doctor", "--json")
    assert "Traceback" not in result.stderr
    found: dict[str, list[dict[str, Any]]] = {}
    for f in json.loads(result.stdout)["findings"]:
        if f["topic"] in ("cursor", "vscode", "codex", "gemini"):
            found.setdefault(f["topic"], []).append(f)
    return found


def test_doctor_says_nothing_of_a_host_that_is_not_on_this_machine(
        dirs: tuple[Path, Path, Path]) -> None:
    assert host_findings(dirs) == {}


def test_doctor_says_each_present_host_is_not_wired_before_install(
        dirs: tuple[Path, Path, Path]) -> None:
    home, project, _ = dirs
    for folder in (home / ".cursor", home / ".config" / "Code" / "User", project / ".codex",
                   home / ".gemini"):
        folder.mkdir(parents=True)
    found = host_findings(dirs)
    assert sorted(found) == ["codex", "cursor", "gemini", "vscode"]
    for host, findings in found.items():
        assert [f["level"] for f in findings] == ["note"]
        assert f"sagemem install {host}" in findings[0]["message"]


def test_doctor_names_the_files_each_installed_host_is_wired_in(
        dirs: tuple[Path, Path, Path]) -> None:
    for host in ("cursor", "vscode", "codex", "gemini"):
        assert sagemem(dirs, "install", host, "--yes").returncode == 0
    found = host_findings(dirs)
    home = dirs[0]
    assert found["cursor"] == [{"level": "ok", "topic": "cursor", "fix": "",
                                "message": f"Cursor wired: MCP server in "
                                           f"{home / '.cursor' / 'mcp.json'}"}]
    assert str(home / ".config" / "Code" / "User" / "mcp.json") in \
        found["vscode"][0]["message"]
    codex = found["codex"][0]["message"]
    assert str(home / ".codex" / "config.toml") in codex
    assert "hooks (UserPromptSubmit, SessionStart)" in codex
    assert "hooks (BeforeAgent, SessionStart)" in found["gemini"][0]["message"]


def test_doctor_reports_a_missing_command_and_an_unreadable_file(
        dirs: tuple[Path, Path, Path]) -> None:
    home = dirs[0]
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"sagemem": {"command": "/gone/bin/sagemem", "args": ["mcp"]}}}')
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{broken")
    found = host_findings(dirs)
    assert [f["level"] for f in found["cursor"]] == ["ok", "problem"]
    assert "/gone/bin/sagemem" in found["cursor"][1]["message"]
    assert [f["level"] for f in found["gemini"]] == ["note", "problem"]
    assert "is not valid JSON" in found["gemini"][1]["message"]
    text = sagemem(dirs, "doctor")
    assert text.returncode == 1
    assert "problem  gemini:" in text.stdout


def test_doctor_reports_a_hook_whose_program_is_gone(dirs: tuple[Path, Path, Path]) -> None:
    home = dirs[0]
    (home / ".codex").mkdir()
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "/gone/sagemem --dir /m hook codex"}]}]}}))
    found = host_findings(dirs)
    assert [f["level"] for f in found["codex"]] == ["ok", "problem"]
    assert "hooks.UserPromptSubmit[0].hooks[0] runs /gone/sagemem" in \
        found["codex"][1]["message"]
