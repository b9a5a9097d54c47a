"""Where VS Code's user ``mcp.json`` is: its documented user folder per platform, and
none (so ``--user`` is refused) where VS Code documents none."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.errors import ScopeNotSupported
from sagemem.hosts.plan import host_files
from sagemem.hosts.spec import Host, stdio_server
from sagemem.hosts.vscode import user_folder

HOME = Path("/home/ada")


@pytest.mark.parametrize(("platform", "env", "expected"), [
    ("linux", {}, HOME / ".config" / "Code" / "User"),
    ("linux", {"XDG_CONFIG_HOME": "/xdg"}, Path("/xdg/Code/User")),
    ("darwin", {}, HOME / "Library" / "Application Support" / "Code" / "User"),
    ("win32", {"APPDATA": "C:/Users/ada/AppData/Roaming"},
     Path("C:/Users/ada/AppData/Roaming/Code/User")),
])
def test_the_user_folder_is_vscodes_documented_one(platform: str, env: dict[str, str],
                                                    expected: Path) -> None:
    assert user_folder(HOME, platform, env) == expected


def test_a_platform_vscode_documents_no_folder_for_has_none() -> None:
    assert user_folder(HOME, "sunos5", {}) is None
    assert user_folder(HOME, "win32", {}) is None


def test_a_scope_without_a_file_is_refused_with_the_hosts_reason(tmp_path: Path) -> None:
    host = Host(name="nowhere", title="Nowhere", locate=lambda s, h, p: None,
                format="json", servers_key="servers", server=stdio_server,
                unlocated="no user folder on this platform; use --project")
    with pytest.raises(ScopeNotSupported, match="nowhere --user: no user folder"):
        host_files(host, "user", home=tmp_path / "home", project=tmp_path)
