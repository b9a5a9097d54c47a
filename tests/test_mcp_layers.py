"""The MCP server over both layers, driven by the SDK's own client against a real
``sagemem mcp`` over stdio: a project folder, and the global layer at its default place
(``~/.sage-mem/global``) under a home directory of the test's own."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra: pip install '.[mcp]'")

from conftest import MEMORY_TEXT, write_memory
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from sagemem.files.revision import revision_of
from sagemem.files.state import default_state_dir
from sagemem.history.ledger import load as load_ledger
from sagemem.inject.seen import seen_revision

SAGEMEM = [sys.executable, "-m", "sagemem"]
SESSION = "session-layers"


def memory_text(name: str, description: str, body: str, type_: str = "user") -> str:
    return MEMORY_TEXT.format(name=name, description=description, type=type_, body=body)


class Folders:
    """The project folder and its state; the home whose ~/.sage-mem/global is the global
    layer (made by ``with_global``, else missing)."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project" / "memory"
        self.state = tmp_path / "project" / "state"
        self.home = tmp_path / "home"
        self.global_ = self.home / ".sage-mem" / "global"
        self.project.mkdir(parents=True)
        self.home.mkdir()
        write_memory(self.project, "user_pets.md", memory_text(
            "Pets", "The user's cats.", "Two cats, Sesame and Mochi."))
        write_memory(self.project, "user_working_style.md", memory_text(
            "Core working preferences", "Short replies, no summaries.",
            "Keep replies short; never add a summary at the end."))

    def with_global(self) -> Folders:
        self.global_.mkdir(parents=True)
        write_memory(self.global_, "user_reply_language.md", memory_text(
            "Reply language", "Replies in English.",
            "Reply in English, whatever language the question is in."))
        write_memory(self.global_, "user_core_working_preferences.md", memory_text(
            "Core working preferences", "Long, detailed replies.",
            "Explain every step at length, with a summary."))
        return self

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
        return {**env, "HOME": str(self.home), "SAGE_MEM_DIR": str(self.project),
                "SAGE_MEM_STATE_DIR": str(self.state), "SAGE_MEM_SEMANTIC": "off",
                "SAGE_MEM_SESSION": SESSION, **extra}

    @property
    def global_state(self) -> Path:
        return default_state_dir(self.global_)


@pytest.fixture
def folders(tmp_path: Path) -> Folders:
    """A project folder, and a home without a global folder yet."""
    return Folders(tmp_path)


@pytest.fixture
def both(folders: Folders) -> Folders:
    """A project folder and a global layer of two habits."""
    return folders.with_global()


def over_stdio(folders: Folders, body: Callable[[Client], Awaitable[Any]],
               **env: str) -> Any:
    params = StdioServerParameters(command=SAGEMEM[0], args=[*SAGEMEM[1:], "mcp"],
                                   env=folders.env(**env))

    async def main() -> Any:
        async with Client(params) as client:
            return await body(client)
    return asyncio.run(main())


def calls(folders: Folders, *steps: tuple[str, dict[str, Any]], **env: str) -> list[Any]:
    """Each (tool, arguments) called in turn on one server."""
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(tool, arguments) for tool, arguments in steps]
    return list(over_stdio(folders, body, **env))


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


# -- reads --------------------------------------------------------------------------------

def test_a_global_memory_is_found_by_search_and_listed_marked_global(both: Folders) -> None:
    found, listed = calls(both, ("search_memory", {"query": "reply language English"}),
                          ("list_memories", {}))
    results = found.structured_content["results"]
    assert [(r["file"], r["layer"]) for r in results][:1] == [
        ("user_reply_language.md", "global")]
    assert "[global] user_reply_language.md:" in text_of(found)
    layers = {m["file"]: m["layer"] for m in listed.structured_content["memories"]}
    assert layers["user_pets.md"] == "project"
    assert layers["user_reply_language.md"] == "global"
    assert "[global] user_reply_language.md  [user]" in text_of(listed)
    assert "\nuser_pets.md  [user]" in "\n" + text_of(listed)


def test_a_project_memory_shadows_a_global_one_of_the_same_title(both: Folders) -> None:
    (found,) = calls(both, ("search_memory", {"query": "replies summary"}))
    files = [(r["file"], r["layer"]) for r in found.structured_content["results"]]
    assert ("user_working_style.md", "project") in files
    assert all(f != "user_core_working_preferences.md" for f, _ in files)


def test_a_global_only_name_is_read_without_a_layer_and_its_use_counted_there(
        both: Folders) -> None:
    read, used, asked = calls(both, ("read_memory", {"name": "user_reply_language"}),
                              ("record_use", {"name": "user_reply_language.md"}),
                              ("read_memory", {"name": "user_pets.md", "layer": "global"}))
    assert read.structured_content["layer"] == "global"
    assert "whatever language" in read.structured_content["content"]
    assert text_of(read).startswith("[global] user_reply_language.md (lines")
    assert used.structured_content["layer"] == "global"
    global_ledger, _ = load_ledger(both.global_state)
    project_ledger, _ = load_ledger(both.state)
    assert global_ledger["user_reply_language.md"].read.count == 1
    assert global_ledger["user_reply_language.md"].use.count == 1
    assert "user_reply_language.md" not in project_ledger
    # an explicit layer is that layer only: the project's pets are not global
    assert asked.is_error and "no memory named user_pets.md" in text_of(asked)


def test_a_revision_seen_in_the_global_layer_vouches_only_for_the_global_file(
        both: Folders) -> None:
    write_memory(both.global_, "user_pets.md", memory_text(
        "Pets everywhere", "Pets in every project.", "Ask before adopting."))
    read_global, read_project = calls(
        both, ("read_memory", {"name": "user_pets.md", "layer": "global"}),
        ("read_memory", {"name": "user_reply_language.md"}))
    revision = read_global.structured_content["revision"]
    assert seen_revision(both.global_state, SESSION, "user_pets.md") == revision
    assert seen_revision(both.state, SESSION, "user_pets.md") is None
    assert seen_revision(both.state, SESSION, "user_reply_language.md") is None
    assert read_project.structured_content["layer"] == "global"


def test_a_part_shown_in_the_global_layer_never_blocks_the_project_file_of_that_name(
        both: Folders) -> None:
    # The same bytes in both layers are the same revision: what the server showed of the
    # global file must not count for the project's (nor the other way round).
    text = (both.project / "user_pets.md").read_text()
    write_memory(both.global_, "user_pets.md", text)
    revision = revision_of(text.encode())
    edit = {"name": "user_pets.md", "body": "Two cats and a dog.",
            "expected_revision": revision}
    page, project_write, global_write = calls(
        both, ("read_memory", {"name": "user_pets.md", "layer": "global", "max_bytes": 5}),
        ("write_memory", edit), ("write_memory", {**edit, "layer": "global"}))
    assert page.structured_content["complete"] is False
    assert page.structured_content["revision"] == revision
    assert project_write.structured_content["status"] == "written"
    assert global_write.is_error and "shown to you only in part" in text_of(global_write)
    assert (both.global_ / "user_pets.md").read_text() == text


# -- writes -------------------------------------------------------------------------------

def test_creating_with_layer_global_makes_the_missing_global_folder_and_lands_there(
        folders: Folders) -> None:
    assert not folders.global_.exists()
    created, found, similar = calls(
        folders, ("create_memory", {"type": "user", "name": "Editor", "layer": "global",
                                    "description": "Uses vim everywhere.",
                                    "body": "The user edits in vim, in every project."}),
        ("search_memory", {"query": "vim editor"}),
        ("create_memory", {"type": "user", "name": "Editor", "layer": "global",
                           "description": "Uses vim everywhere.",
                           "body": "The user edits in vim, in every project."}))
    assert created.structured_content["status"] == "created"
    assert created.structured_content["layer"] == "global"
    assert "created user_editor.md in the global layer" in text_of(created)
    assert (folders.global_ / "user_editor.md").is_file()
    assert "user_editor.md" in (folders.global_ / "MEMORY.md").read_text()
    assert not (folders.project / "user_editor.md").exists()
    assert not (folders.project / "MEMORY.md").exists()  # the project's index untouched
    hits = found.structured_content["results"]
    assert [(h["file"], h["layer"]) for h in hits] == [("user_editor.md", "global")]
    assert similar.structured_content["status"] == "unchanged"  # titles matched in it
    assert similar.structured_content["layer"] == "global"


def test_create_memory_saves_in_the_project_by_default(both: Folders) -> None:
    (created,) = calls(both, ("create_memory", {
        "type": "project", "name": "Deploys on Fridays", "description": "No deploys.",
        "body": "Nobody deploys on a Friday."}))
    assert created.structured_content["layer"] == "project"
    assert "in the global layer" not in text_of(created)
    assert (both.project / "project_deploys_on_fridays.md").is_file()
    assert not (both.global_ / "project_deploys_on_fridays.md").exists()


def test_changing_a_global_memory_without_layer_is_refused_naming_layer_global(
        both: Folders) -> None:
    path = both.global_ / "user_reply_language.md"
    before = path.read_bytes()

    async def body(client: Client) -> list[Any]:
        page = (await client.call_tool("read_memory", {"name": "user_reply_language"})
                ).structured_content
        edit = {"name": "user_reply_language.md", "body": "Reply in French.",
                "expected_revision": page["revision"]}
        refused = [await client.call_tool(tool, arguments) for tool, arguments in (
            ("write_memory", edit),
            ("set_memory_fields", {"name": "user_reply_language", "fields": {
                "description": "Replies in French."}}),
            ("archive_memory", {"name": "user_reply_language", "reason": "wrong"}))]
        assert path.read_bytes() == before and path.exists()
        written = await client.call_tool("write_memory", {**edit, "layer": "global"})
        return [*refused, written]

    *refused, written = over_stdio(both, body)
    for result in refused:
        assert result.is_error
        assert text_of(result).startswith("error: layer: user_reply_language.md is a "
                                          "global memory")
        assert 'layer: "global"' in text_of(result)
        assert "nothing was written" in text_of(result)
    assert written.structured_content["status"] == "written"
    assert written.structured_content["layer"] == "global"
    assert path.read_text().endswith("Reply in French.\n")
    assert not (both.project / "user_reply_language.md").exists()


def test_layer_project_gives_the_project_its_own_memory_of_a_global_name(
        both: Folders) -> None:
    (created,) = calls(both, ("write_memory", {
        "name": "user_reply_language.md", "expected_revision": None, "layer": "project",
        "content": memory_text("Reply language", "Replies in German here.",
                               "In this project, reply in German.")}))
    assert created.structured_content["status"] == "created"
    assert (both.project / "user_reply_language.md").is_file()
    assert "English" in (both.global_ / "user_reply_language.md").read_text()


def test_a_stale_global_write_is_refused_in_the_global_layer_and_its_conflict_listed(
        both: Folders) -> None:
    refused, conflicts = calls(both, ("write_memory", {
        "name": "user_reply_language.md", "body": "Reply in French.",
        "expected_revision": "0" * 64, "layer": "global"}), ("list_conflicts", {}))
    assert refused.structured_content["status"] == "refused"
    assert refused.structured_content["layer"] == "global"
    assert text_of(refused).startswith("refused in the global layer: ")
    listed = conflicts.structured_content["conflicts"]
    assert [(c["id"], c["layer"], c["file"]) for c in listed] == [
        (refused.structured_content["conflict_id"], "global", "user_reply_language.md")]
    assert "  [global] user_reply_language.md" in text_of(conflicts)
    assert "English" in (both.global_ / "user_reply_language.md").read_text()


def test_an_unknown_layer_is_an_argument_error_and_nothing_is_written(
        both: Folders) -> None:
    created, read = calls(
        both, ("create_memory", {"type": "user", "name": "Editor", "layer": "user",
                                 "description": "Vim.", "body": "Vim."}),
        ("read_memory", {"name": "user_pets.md", "layer": "everywhere"}))
    for result in (created, read):
        assert result.is_error
        assert "layer" in text_of(result)
        assert "'project' or 'global'" in text_of(result)
    assert not (both.project / "user_editor.md").exists()
    assert not (both.global_ / "user_editor.md").exists()


# -- resources ----------------------------------------------------------------------------

def test_the_global_layer_has_its_own_index_and_memory_resources(both: Folders) -> None:
    write_memory(both.global_, "MEMORY.md", "- [Reply language](user_reply_language.md)\n")

    async def body(client: Client) -> Any:
        listed = (await client.list_resources()).resources
        index = await client.read_resource("sagemem://global/MEMORY.md")
        memory = await client.read_resource(
            "sagemem://global/memories/user_reply_language.md")
        return listed, index, memory

    listed, index, memory = over_stdio(both, body)
    uris = [str(r.uri) for r in listed]
    assert "sagemem://MEMORY.md" in uris and "sagemem://global/MEMORY.md" in uris
    assert "sagemem://memories/user_pets.md" in uris
    assert "sagemem://global/memories/user_reply_language.md" in uris
    assert "user_reply_language.md" in index.contents[0].text
    assert "whatever language" in memory.contents[0].text


# -- no global layer -----------------------------------------------------------------------

def test_with_the_global_layer_off_the_server_serves_the_project_as_before(
        both: Folders) -> None:
    async def body(client: Client) -> Any:
        return ((await client.list_resources()).resources,
                *[await client.call_tool(tool, arguments) for tool, arguments in (
                    ("search_memory", {"query": "replies summary"}),
                    ("read_memory", {"name": "user_reply_language"}),
                    ("list_memories", {}),
                    ("create_memory", {"type": "user", "name": "Editor", "layer": "global",
                                       "description": "Vim.", "body": "Vim."}))])

    listed, found, read, memories, created = over_stdio(both, body,
                                                        SAGE_MEM_GLOBAL_DIR="off")
    assert {r["layer"] for r in found.structured_content["results"]} == {"project"}
    assert "[global]" not in text_of(found) + text_of(memories)
    assert text_of(found).startswith("user_working_style.md:")
    assert read.is_error and "no memory named user_reply_language" in text_of(read)
    assert {m["layer"] for m in memories.structured_content["memories"]} == {"project"}
    assert created.is_error
    assert text_of(created) == ("error: no global layer: SAGE_MEM_GLOBAL_DIR is off; "
                                "set SAGE_MEM_GLOBAL_DIR to a folder")
    assert not (both.global_ / "user_editor.md").exists()
    assert "sagemem://global/MEMORY.md" not in [str(r.uri) for r in listed]


def test_a_missing_global_folder_finds_nothing_global_until_it_is_made(
        folders: Folders) -> None:
    async def body(client: Client) -> list[Any]:
        before = [await client.call_tool(tool, arguments) for tool, arguments in (
            ("search_memory", {"query": "cats"}),
            ("read_memory", {"name": "user_pets", "layer": "global"}),
            ("list_memories", {}))]
        assert not folders.global_.exists()  # reads never make it
        folders.with_global()  # made meanwhile, as `mkdir -p` and an editor would
        return [*before, await client.call_tool("search_memory", {
            "query": "reply language English"})]

    found, read, index, after = over_stdio(folders, body)
    assert [r["layer"] for r in found.structured_content["results"]] == ["project"]
    assert read.is_error
    assert text_of(read).startswith("error: no global layer: ")
    assert f"mkdir -p {folders.global_}" in text_of(read)
    assert {m["layer"] for m in index.structured_content["memories"]} == {"project"}
    assert [(r["file"], r["layer"]) for r in after.structured_content["results"]][:1] == [
        ("user_reply_language.md", "global")]


def test_a_global_folder_that_is_the_project_folder_is_one_layer(
        folders: Folders) -> None:
    found, created = calls(folders, ("search_memory", {"query": "cats"}),
                           ("create_memory", {"type": "user", "name": "Editor",
                                              "layer": "global", "description": "Vim.",
                                              "body": "Vim."}),
                           SAGE_MEM_GLOBAL_DIR=str(folders.project))
    assert [r["layer"] for r in found.structured_content["results"]] == ["project"]
    assert created.is_error
    assert text_of(created) == (
        f"error: no global layer: {folders.project} is the project folder itself; set "
        "SAGE_MEM_GLOBAL_DIR to a folder of its own, or to off")
    assert not (folders.project / "user_editor.md").exists()


def test_the_tool_descriptions_say_when_to_use_the_global_layer(both: Folders) -> None:
    tools = over_stdio(both, lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in tools}
    for name in ("read_memory", "write_memory", "set_memory_fields", "archive_memory",
                 "record_use", "create_memory"):
        schema = by_name[name].input_schema["properties"]["layer"]
        assert "every project" in json.dumps(schema), name
    assert by_name["create_memory"].input_schema["properties"]["layer"]["default"] == \
        "project"
    assert 'layer "global"' in (by_name["write_memory"].description or "")
    assert "global" in (by_name["search_memory"].description or "")
