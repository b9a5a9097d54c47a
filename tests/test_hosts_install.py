"""``sagemem install cursor|vscode|codex|gemini``, run as a shell runs it (HOME a temp
dir, the project the cwd): each host's documented shape, a second install a no-op, undo
byte for byte, and every refusal a single line that leaves the file alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Codex's config.toml is edited only where tomllib can prove the edit (Python 3.11+)
NEEDS_TOMLLIB = pytest.mark.skipif(sys.version_info < (3, 11), reason="no tomllib")
HOSTS = ("cursor", "vscode", pytest.param("codex", marks=NEEDS_TOMLLIB), "gemini")


def toml(text: str) -> dict[str, Any]:
    """The file parsed by tomllib, imported here: Python 3.10 has none."""
    module = pytest.importorskip("tomllib")
    data: dict[str, Any] = module.loads(text)
    return data


class Env:
    """A HOME, a project (the cwd) and a memory folder of their own."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.memory = tmp_path / "memory"
        for folder in (self.home, self.project, self.memory):
            folder.mkdir()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("CODEX_HOME", "XDG_CONFIG_HOME", "SAGE_MEM_STATE_DIR")}
        env.update(HOME=str(self.home), SAGE_MEM_DIR=str(self.memory))
        return subprocess.run([sys.executable, "-m", "sagemem", "install", *args],
                              cwd=self.project, env=env, capture_output=True, text=True,
                              timeout=60, check=False)

    def config(self, host: str, scope: str = "user") -> Path:
        base = self.home if scope == "user" else self.project
        return {"cursor": base / ".cursor" / "mcp.json",
                "vscode": (self.home / ".config" / "Code" / "User" / "mcp.json"
                           if scope == "user" else base / ".vscode" / "mcp.json"),
                "codex": base / ".codex" / "config.toml",
                "gemini": base / ".gemini" / "settings.json"}[host]

    def tree(self) -> dict[str, bytes]:
        return {str(p.relative_to(p.parents[len(p.parents) - 1])): p.read_bytes()
                for root in (self.home, self.project) for p in sorted(root.rglob("*"))
                if p.is_file()}


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert result.returncode == code, result
    assert result.stdout == "" and result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    return result.stderr


def sagemem_entry(env: Env, **extra: Any) -> dict[str, Any]:
    command = sys.executable  # the venv's console script, found beside this Python
    script = Path(command).parent / "sagemem"
    return {**extra, "command": str(script), "args": ["mcp"],
            "env": {"SAGE_MEM_DIR": str(env.memory)}}


def hook_object(env: Env, host: str) -> dict[str, Any]:
    script = Path(sys.executable).parent / "sagemem"
    command = f"{script} --dir {env.memory} hook {host}"
    if host == "gemini":
        return {"type": "command", "command": command, "name": "sagemem", "timeout": 10000}
    return {"type": "command", "command": command, "timeout": 10}


def test_cursor_gets_its_documented_mcp_servers_entry(env: Env) -> None:
    ok(env.run("cursor", "--yes"))
    assert json.loads(env.config("cursor").read_text()) == {
        "mcpServers": {"sagemem": sagemem_entry(env)}}


def test_vscode_gets_a_stdio_entry_under_servers_in_both_scopes(env: Env) -> None:
    ok(env.run("vscode", "--yes"))
    ok(env.run("vscode", "--project", "--yes"))
    for scope in ("user", "project"):
        assert json.loads(env.config("vscode", scope).read_text()) == {
            "servers": {"sagemem": sagemem_entry(env, type="stdio")}}


@NEEDS_TOMLLIB
def test_codex_gets_its_mcp_table_and_hooks_json(env: Env) -> None:
    ok(env.run("codex", "--yes"))
    assert toml(env.config("codex").read_text()) == {
        "mcp_servers": {"sagemem": sagemem_entry(env)}}
    hook = hook_object(env, "codex")
    assert json.loads((env.home / ".codex" / "hooks.json").read_text()) == {"hooks": {
        "UserPromptSubmit": [{"hooks": [hook]}],
        "SessionStart": [{"matcher": "clear", "hooks": [hook]}]}}


def test_gemini_gets_its_server_and_hooks_in_settings_json(env: Env) -> None:
    ok(env.run("gemini", "--project", "--yes"))
    hook = hook_object(env, "gemini")
    assert json.loads(env.config("gemini", "project").read_text()) == {
        "mcpServers": {"sagemem": sagemem_entry(env)},
        "hooks": {"BeforeAgent": [{"hooks": [hook]}],
                  "SessionStart": [{"matcher": "clear", "hooks": [hook]}]}}


@pytest.mark.parametrize("host", HOSTS)
def test_a_second_install_changes_nothing(env: Env, host: str) -> None:
    ok(env.run(host, "--yes"))
    before = env.tree()
    result = ok(env.run(host, "--yes"))
    assert "nothing to change" in result.stderr
    assert env.tree() == before


@pytest.mark.parametrize("host", HOSTS)
def test_undo_of_a_fresh_install_leaves_no_file_or_folder(env: Env, host: str) -> None:
    ok(env.run(host, "--project", "--yes"))
    ok(env.run(host, "--project", "--undo", "--yes"))
    assert list(env.project.iterdir()) == []


PRE_EXISTING = {
    "cursor": '{\n    "mcpServers": {\n        "other": {"command": "npx", "args": ["x"]}\n'
              '    },\n    "theme":   "dark"\n}\n',
    "vscode": '{\r\n\t"servers": {\r\n\t\t"git": {"type": "stdio", "command": "uvx"}\r\n'
              '\t},\r\n\t"inputs": []\r\n}\r\n',
    "codex": '# my codex\nmodel = "o3"  # the model\n\n[mcp_servers.docs]\ncommand = "npx"\n'
             'args = ["-y", "docs"]\n\n[profiles.fast]\nmodel = "o4-mini"',
    "gemini": '{"theme": "GitHub", "hooks": {"BeforeAgent": [{"hooks": [{"type": "command",'
              ' "command": "./mine.sh"}]}]}, "mcpServers": {}}',
}


@pytest.mark.parametrize("host", HOSTS)
def test_undo_gives_back_a_pre_existing_file_byte_for_byte(env: Env, host: str) -> None:
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.write_bytes(PRE_EXISTING[host].encode())
    ok(env.run(host, "--project", "--yes"))
    assert path.read_bytes() != PRE_EXISTING[host].encode()
    ok(env.run(host, "--project", "--undo", "--yes"))
    assert path.read_bytes() == PRE_EXISTING[host].encode()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.parametrize("host", HOSTS)
def test_install_keeps_the_users_other_entries_and_layout(env: Env, host: str) -> None:
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.write_bytes(PRE_EXISTING[host].encode())
    ok(env.run(host, "--project", "--yes"))
    after = path.read_bytes().decode()
    assert after.startswith(PRE_EXISTING[host][:40])
    assert ("\r\n" in after) == ("\r\n" in PRE_EXISTING[host])  # CRLF kept CRLF
    if host == "codex":
        assert after.startswith(PRE_EXISTING[host])  # appended, nothing above it touched
        assert toml(after)["mcp_servers"]["docs"] == {"command": "npx",
                                                               "args": ["-y", "docs"]}


@pytest.mark.parametrize("host", HOSTS)
def test_undo_after_the_user_edited_the_file_takes_out_only_ours(env: Env, host: str
                                                                  ) -> None:
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.write_bytes(PRE_EXISTING[host].encode())
    ok(env.run(host, "--project", "--yes"))
    if host == "codex":
        path.write_text(path.read_text() + '\n[mcp_servers.later]\ncommand = "y"\n')
        ok(env.run(host, "--project", "--undo", "--yes"))
        data = toml(path.read_text())
        assert "sagemem" not in data["mcp_servers"] and "later" in data["mcp_servers"]
        assert path.read_text().startswith(PRE_EXISTING[host])
        return
    data = json.loads(path.read_text())
    data["added_later"] = True
    path.write_text(json.dumps(data, indent=2))
    ok(env.run(host, "--project", "--undo", "--yes"))
    expected = json.loads(PRE_EXISTING[host])
    assert json.loads(path.read_text()) == {**expected, "added_later": True}


FOREIGN = {
    "cursor": '{"mcpServers": {"sagemem": {"command": "my-own-sagemem"}}}\n',
    "vscode": '{"servers": {"sagemem": {"type": "stdio", "command": "mine"}}}\n',
    "codex": '[mcp_servers.sagemem]\ncommand = "mine"\n',
    "gemini": '{"mcpServers": {"sagemem": {"command": "mine"}}}\n',
}


@pytest.mark.parametrize("host", HOSTS)
def test_a_sagemem_entry_install_did_not_write_is_refused(env: Env, host: str) -> None:
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.write_text(FOREIGN[host])
    assert "install did not write" in one_line_error(env.run(host, "--project", "--yes"))
    assert path.read_text() == FOREIGN[host]
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


INVALID = {"cursor": '{"mcpServers": {,}}', "vscode": '{\n  // a comment\n  "servers": {}\n}',
           "codex": '[mcp_servers\ncommand = "x"\n', "gemini": '["not", "an", "object"]'}


@pytest.mark.parametrize("host", HOSTS)
def test_an_invalid_file_is_refused_and_left_alone(env: Env, host: str) -> None:
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.write_text(INVALID[host])
    one_line_error(env.run(host, "--project", "--yes"))
    assert path.read_text() == INVALID[host]
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="Python 3.10 only")
def test_codex_on_a_python_without_tomllib_is_refused_in_one_line(env: Env) -> None:
    assert "Python 3.11" in one_line_error(env.run("codex", "--yes"))
    assert list(env.home.iterdir()) == []


@NEEDS_TOMLLIB
def test_an_inline_mcp_servers_table_in_codex_is_refused(env: Env) -> None:
    path = env.config("codex", "project")
    path.parent.mkdir()
    text = 'mcp_servers = { docs = { command = "npx" } }\n'
    path.write_text(text)
    assert "config.toml" in one_line_error(env.run("codex", "--project", "--yes"))
    assert path.read_text() == text


@pytest.mark.parametrize("host", HOSTS)
def test_a_symlinked_config_file_is_refused(env: Env, host: str, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "config"
    target.parent.mkdir()
    target.write_text("{}\n" if host != "codex" else "")
    path = env.config(host, "project")
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    assert "symlink" in one_line_error(env.run(host, "--project", "--yes"))
    assert path.is_symlink() and target.read_text() == ("{}\n" if host != "codex" else "")


@pytest.mark.parametrize("host", HOSTS)
def test_dry_run_prints_the_diff_and_writes_nothing(env: Env, host: str) -> None:
    result = ok(env.run(host, "--project", "--dry-run"))
    assert "+++ " in result.stdout and "sagemem" in result.stdout
    assert "dry run: nothing was written" in result.stderr
    assert "note: the project's file names this machine's" in result.stderr
    assert list(env.project.iterdir()) == []


def test_project_and_user_together_is_a_usage_error(env: Env) -> None:
    result = env.run("cursor", "--project", "--user")
    assert result.returncode == 2 and "exclude each other" in result.stderr


def test_a_project_install_in_the_home_is_refused(env: Env) -> None:
    result = subprocess.run([sys.executable, "-m", "sagemem", "install", "gemini",
                             "--project", "--yes"], cwd=env.home,
                            env={**os.environ, "HOME": str(env.home),
                                 "SAGE_MEM_DIR": str(env.memory)},
                            capture_output=True, text=True, timeout=60, check=False)
    assert "your home" in one_line_error(result)
    assert list(env.home.iterdir()) == []


@NEEDS_TOMLLIB
def test_an_upgrade_replaces_our_codex_table_in_place(env: Env, tmp_path: Path) -> None:
    ok(env.run("codex", "--project", "--yes"))
    path = env.config("codex", "project")
    env.memory = tmp_path / "elsewhere"
    env.memory.mkdir()
    ok(env.run("codex", "--project", "--yes"))
    data = toml(path.read_text())
    assert data["mcp_servers"]["sagemem"]["env"] == {"SAGE_MEM_DIR": str(env.memory)}
    assert path.read_text().count("[mcp_servers.sagemem]") == 1
    ok(env.run("codex", "--project", "--undo", "--yes"))
    assert list(env.project.iterdir()) == []


def test_a_hand_written_sagemem_hook_is_left_and_named(env: Env) -> None:
    path = env.config("gemini", "project")
    path.parent.mkdir()
    mine = {"type": "command", "command": "sagemem hook gemini"}
    text = json.dumps({"hooks": {"BeforeAgent": [{"hooks": [mine]}]}}, indent=2) + "\n"
    path.write_text(text)
    result = ok(env.run("gemini", "--project", "--yes"))
    assert "hooks.BeforeAgent[0].hooks[0] runs `sagemem hook gemini`" in result.stderr
    groups = json.loads(path.read_text())["hooks"]["BeforeAgent"]
    assert groups[0] == {"hooks": [mine]} and len(groups) == 2
    ok(env.run("gemini", "--project", "--undo", "--yes"))
    assert path.read_text() == text
