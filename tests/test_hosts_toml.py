"""Codex's ``config.toml`` edited as text: our table appended and taken out exactly, the
user's comments, layout and line endings kept, every edit proved by ``tomllib``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sagemem.errors import HostConfigError
from sagemem.hosts.toml_file import TomlDocument, add_table, read_toml, remove_table

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="no tomllib")
TABLE = ("mcp_servers", "sagemem")
ENTRY = {"command": "/opt/sagemem/bin/sagemem", "args": ["mcp"],
         "env": {"SAGE_MEM_DIR": "/home/ada/memory \"quoted\" ü"}}


def doc(tmp_path: Path, text: str) -> TomlDocument:
    path = tmp_path / "config.toml"
    path.write_bytes(text.encode())
    return read_toml(path)


@pytest.mark.parametrize("text", [
    "", "model = \"o3\"\n", "# only a comment", "a = 1\r\n[b]\r\nc = 2\r\n",
    "[mcp_servers.docs]\ncommand = \"npx\"  # docs\n\n\n",
])
def test_adding_then_removing_our_table_gives_back_the_text(tmp_path: Path, text: str
                                                             ) -> None:
    added = add_table(doc(tmp_path, text), TABLE, ENTRY, "codex")
    assert added.startswith(text)
    assert read_toml_text(tmp_path, added)["mcp_servers"]["sagemem"] == ENTRY
    assert ("\r\n" in added) == ("\r\n" in text) or not text
    removed = remove_table(doc(tmp_path, added), TABLE)
    assert removed is not None
    assert removed.rstrip("\r\n") == text.rstrip("\r\n")


def read_toml_text(tmp_path: Path, text: str) -> dict[str, object]:
    return doc(tmp_path, text).data


def test_a_hand_edited_table_is_not_taken_out(tmp_path: Path) -> None:
    added = add_table(doc(tmp_path, ""), TABLE, ENTRY, "codex")
    edited = added.replace('args = ["mcp"]', 'args = ["mcp"]\nstartup_timeout_sec = 20')
    assert remove_table(doc(tmp_path, edited), TABLE) is None


def test_a_table_our_lines_would_change_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HostConfigError):
        add_table(doc(tmp_path, "mcp_servers = { docs = { command = \"x\" } }\n"), TABLE,
                  ENTRY, "codex")
