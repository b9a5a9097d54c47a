"""The MCP server, driven by the SDK's own client: in memory for the tool logic, and once
as a real ``sagemem mcp`` subprocess over stdio (and once over loopback HTTP)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra: pip install '.[mcp]'")

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from sagemem.errors import InvalidArgument
from sagemem.history.ledger import load as load_ledger
from sagemem.history.locks import lock_memory
from sagemem.mcp_server.address import allowed_hosts, loopback_address
from sagemem.mcp_server.aliases import renamed
from sagemem.mcp_server.server import build_server
from sagemem.mcp_server.tools import TOOL_NAMES
from sagemem.store import MemoryStore

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
SAGEMEM = [sys.executable, "-m", "sagemem"]


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    folder = tmp_path / "memory"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("eval"))
    return MemoryStore(folder, tmp_path / "state")


def with_client(store: MemoryStore, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(store)) as client:
            return await body(client)
    return asyncio.run(main())


def call(store: MemoryStore, tool: str, arguments: dict[str, Any]) -> Any:
    return with_client(store, lambda c: c.call_tool(tool, arguments))


def with_stdio_client(store: MemoryStore, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """``body`` run by the SDK's client against a real ``sagemem mcp`` over stdio."""
    params = StdioServerParameters(command=SAGEMEM[0], args=[*SAGEMEM[1:], "mcp"],
                                   env=server_env(store))

    async def main() -> Any:
        async with Client(params) as client:
            return await body(client)
    return asyncio.run(main())


async def read_page(client: Client, name: str = "user_pets.md", **arguments: Any
                    ) -> dict[str, Any]:
    """read_memory's page of ``name``, as the model sees it (its structured content)."""
    return (await client.call_tool("read_memory", {"name": name, **arguments})
            ).structured_content


async def write_pages_back(client: Client, names: Any, field: str) -> list[Any]:
    """Each memory's read_memory page written back as it came, as ``body`` or ``content``:
    what a model that edits nothing sends."""
    written = []
    for name in names:
        page = await read_page(client, name)
        written.append(await client.call_tool("write_memory", {
            "name": name, field: page["content"], "expected_revision": page["revision"]}))
    return written


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


# -- the tools as a client sees them -------------------------------------------------------

def test_every_tool_is_listed_with_annotations_a_schema_and_a_description(
        store: MemoryStore) -> None:
    tools = with_client(store, lambda c: c.list_tools()).tools
    assert [t.name for t in tools] == list(TOOL_NAMES)
    for tool in tools:
        assert tool.annotations.read_only_hint is not None, tool.name
        assert tool.annotations.destructive_hint is not None, tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert len(tool.description or "") > 60, tool.name
    by_name = {t.name: t for t in tools}
    assert by_name["search_memory"].annotations.read_only_hint is True
    assert by_name["write_memory"].annotations.destructive_hint is True
    # create_memory replaces the body of the memory that already has its title
    assert by_name["create_memory"].annotations.destructive_hint is True
    assert by_name["archive_memory"].input_schema["required"] == ["name", "reason"]


def test_search_returns_structured_results_with_coverage_and_readable_text(
        store: MemoryStore) -> None:
    result = call(store, "search_memory", {"query": "cat"})
    assert not result.is_error
    found = result.structured_content
    assert found["results"][0]["file"] == "user_pets.md"
    assert found["results"][0]["revision"]
    assert found["coverage"]["files_scanned"] > 10
    assert "user_pets.md:" in text_of(result)


def test_search_takes_the_names_models_guess_and_sage_mems_spellings(
        store: MemoryStore) -> None:
    result = call(store, "search_memory", {"q": "cat", "top_k": 1})
    assert [r["file"] for r in result.structured_content["results"]] == ["user_pets.md"]
    memory = store.get("user_pets.md")
    read = call(store, "read_memory", {"path": "/memories/user_pets.md", "startLine": 11})
    assert read.structured_content["start_line"] == 11
    assert read.structured_content["revision"] == memory.revision


def test_a_guessed_path_outside_the_folder_is_refused_and_one_inside_names_its_file(
        store: MemoryStore, tmp_path: Path) -> None:
    # {"path": "/other/project/user_pets.md"} read this folder's user_pets.md.
    other = tmp_path / "other" / "project"
    other.mkdir(parents=True)
    (other / "user_pets.md").write_text("---\ndescription: their pets\n---\nA dog.\n")

    async def body(client: Client) -> Any:
        return [await client.call_tool("read_memory", {"path": path}) for path in (
            str(other / "user_pets.md"), str(store.directory / "user_pets.md"),
            "/memories/user_pets.md", "/memories/../user_pets.md")]

    outside, inside, memory_tool_path, climbing = with_stdio_client(store, body)
    for refused in (outside, climbing):
        assert refused.is_error
        assert text_of(refused).startswith("error: invalid memory name '/")
        assert "芝麻" not in text_of(refused) and "A dog" not in text_of(refused)
    for accepted in (inside, memory_tool_path):
        assert accepted.structured_content["file"] == "user_pets.md"
        assert "芝麻" in accepted.structured_content["content"]


def test_guessed_names_never_override_the_parameter_itself() -> None:
    assert renamed({"query": "a", "q": "b"}, frozenset({"query"})) == {"query": "a", "q": "b"}
    assert renamed({"expectedRevision": "r"}, frozenset({"expected_revision"})) == {
        "expected_revision": "r"}
    assert renamed({"type": "user"}, frozenset({"type", "tag"})) == {"type": "user"}


def test_read_with_a_stale_revision_returns_no_content(store: MemoryStore) -> None:
    stale = store.get("user_pets.md").revision
    path = store.directory / "user_pets.md"
    path.write_text(path.read_text() + "\nA third cat now.\n")
    result = call(store, "read_memory", {"name": "user_pets", "revision": stale})
    assert not result.is_error
    assert result.structured_content["status"] == "revision_changed"
    assert result.structured_content["content"] is None
    assert "revision_changed" in text_of(result)


def test_a_read_is_counted_in_the_ledger(store: MemoryStore) -> None:
    call(store, "read_memory", {"name": "user_pets.md"})
    entries, _ = load_ledger(store.state_dir)
    assert entries["user_pets.md"].read.count == 1


def test_a_write_at_the_revision_read_lands(store: MemoryStore) -> None:
    memory = store.get("user_pets.md")
    new_text = memory.text + "\nThe cats like the balcony.\n"

    async def body(client: Client) -> Any:
        read = await client.call_tool("read_memory", {"name": "user_pets.md"})
        revision = read.structured_content["revision"]
        return await client.call_tool("write_memory", {
            "name": "user_pets.md", "content": new_text, "expected_revision": revision,
            "reason": "a new fact"})

    result = with_client(store, body)
    assert result.structured_content["status"] == "written"
    assert result.structured_content["previous_revision"] == memory.revision
    assert (store.directory / "user_pets.md").read_text() == new_text
    assert result.structured_content["revision"] == store.get("user_pets.md").revision


RULE_FIRST = "---\n\nA rule first, then a note.\n\n---\n\nThe cat likes boxes.\n"


def _with_body(store: MemoryStore, name: str, body: str) -> bytes:
    """Give ``name`` ``body`` after its own frontmatter; its bytes now."""
    memory = store.get(name)
    data = (memory.text[:len(memory.text) - len(memory.body)] + body).encode("utf-8")
    (store.directory / name).write_bytes(data)
    return data


def test_a_body_read_and_written_back_as_body_changes_no_byte(store: MemoryStore) -> None:
    # A body opening with a Markdown rule (---) was taken for a whole file and the
    # frontmatter (name, description, type, tags) was lost, with status "written".
    before = _with_body(store, "user_pets.md", RULE_FIRST)
    crlf = (store.directory / "user_editor_setup.md").read_bytes().replace(b"\n", b"\r\n")
    (store.directory / "user_editor_setup.md").write_bytes(crlf)

    async def body(client: Client) -> Any:
        return await write_pages_back(client, ("user_pets.md", "user_editor_setup.md"), "body")

    for result in with_stdio_client(store, body):
        assert result.structured_content["status"] == "written", text_of(result)
        assert result.structured_content["warnings"] == []
    assert (store.directory / "user_pets.md").read_bytes() == before
    assert (store.directory / "user_editor_setup.md").read_bytes() == crlf


def test_read_memorys_text_sent_back_as_content_keeps_the_frontmatter_too(
        store: MemoryStore) -> None:
    # The documented flow of earlier clients: what read_memory returned, as content. A
    # body that opens with a rule, or with a block of fields (a Jekyll page), opens with
    # the very block the file's body opens with: it is that body, not a whole file.
    jekyll = "---\nlayout: post\ntitle: Cats\n---\nHello.\n"
    before = {"user_pets.md": _with_body(store, "user_pets.md", RULE_FIRST),
              "user_background.md": _with_body(store, "user_background.md", jekyll)}

    async def body(client: Client) -> Any:
        return await write_pages_back(client, before, "content")

    for result in with_client(store, body):
        assert result.structured_content["status"] == "written", text_of(result)
        assert any("taken as the body" in w for w in result.structured_content["warnings"])
    for name, data in before.items():
        assert (store.directory / name).read_bytes() == data, name


def test_a_whole_file_content_that_opens_with_a_rule_is_refused_not_guessed(
        store: MemoryStore) -> None:
    # The opening '---' block holds no fields and is not the body's own opening (it was
    # edited): a rule, or a broken frontmatter? Never guessed: refused, nothing written.
    before = _with_body(store, "user_pets.md", RULE_FIRST)

    async def body(client: Client) -> Any:
        page = await read_page(client)
        return await client.call_tool("write_memory", {
            "name": "user_pets.md", "content": page["content"].replace("first", "1st"),
            "expected_revision": page["revision"]})

    result = with_client(store, body)
    assert result.is_error
    assert text_of(result).startswith("error: content: it opens with '---' but no "
                                      "frontmatter of fields follows")
    assert "send it as body" in text_of(result)
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_a_body_sent_as_content_by_an_earlier_client_keeps_the_frontmatter(
        store: MemoryStore) -> None:
    # Earlier clients sent read_memory's body as content: with no '---' opening it
    # cannot be a whole file with frontmatter, so the file's frontmatter stays.
    before = store.get("user_pets.md")

    async def body(client: Client) -> Any:
        read = (await client.call_tool("read_memory", {"name": "user_pets.md"}))
        page = read.structured_content
        return await client.call_tool("write_memory", {
            "name": "user_pets.md", "content": page["content"] + "\nThe cat likes boxes.",
            "expected_revision": page["revision"]})

    result = with_client(store, body)
    assert result.structured_content["status"] == "written"
    assert any("taken as the body" in w for w in result.structured_content["warnings"])
    after = store.get("user_pets.md")
    assert after.text.startswith(before.text[:len(before.text) - len(before.body)])
    assert (after.description, after.tags, after.type) == (
        before.description, before.tags, before.type)
    assert after.body == before.body + "The cat likes boxes.\n"


def _long_pets(store: MemoryStore) -> bytes:
    """user_pets.md with a body of about 24 KB, two read_memory pages; its bytes."""
    notes = "".join(f"\nVisit {i}: the vet weighed the cats; both fine.\n" for i in range(500))
    memory = store.get("user_pets.md")
    return _with_body(store, "user_pets.md", memory.body + notes)


def test_the_first_page_of_a_long_memory_sent_back_as_the_body_is_refused_not_truncating(
        store: MemoryStore) -> None:
    # Written back as read (the documented flow), read_memory's first page replaced the
    # whole body: every later page was lost, with status "written".
    before = _long_pets(store)

    async def body(client: Client) -> Any:
        page = await read_page(client)
        answers = []
        for text in ("body", "content"):
            answers.append(await client.call_tool("write_memory", {
                "name": "user_pets.md", text: page["content"],
                "expected_revision": page["revision"]}))
        return page, answers

    page, answers = with_stdio_client(store, body)
    assert page["complete"] is False and page["next_start_line"] is not None
    last = len(before.decode().splitlines())
    for argument, result in zip(("body", "content"), answers, strict=True):
        assert result.is_error, text_of(result)
        assert text_of(result).startswith(
            f"error: {argument}: user_pets.md's body, lines 10-{last}, was shown to you only "
            f"in part (lines 10-{page['end_line']}) at this revision")
        assert f"start_line=10 and end_line={last}; nothing was written" in text_of(result)
    # a revision this server never showed (the model had it from elsewhere): the body is
    # longer than a page, so what the model holds may be one page of it
    unseen = call(store, "write_memory", {"name": "user_pets.md", "body": page["content"],
                                          "expected_revision": page["revision"]})
    assert unseen.is_error
    assert text_of(unseen).startswith(f"error: body: user_pets.md's body, lines 10-{last}, "
                                      "is longer than one read_memory page")
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_a_first_page_read_after_writing_the_whole_memory_is_refused_as_the_body(
        store: MemoryStore) -> None:
    # Found by review 4: create_memory (or a whole write) of a long memory, then
    # read_memory's first page (complete false) appended to and sent back as the body was
    # "written": having once sent the whole body counted as holding it, and 25 KB of the
    # memory were cut off. What the model was last handed of this revision is the page.
    notes = "".join(f"Visit {i}: the vet weighed the cats; both fine.\n\n" for i in range(500))

    async def body(client: Client) -> Any:
        created = (await client.call_tool("create_memory", {
            "name": "Vet visits", "type": "user", "description": "Every vet visit",
            "body": notes})).structured_content
        page = await read_page(client, created["file"])
        answer = await client.call_tool("write_memory", {
            "name": created["file"], "body": page["content"] + "\nVisit 500: fine.",
            "expected_revision": page["revision"]})
        return created, page, answer

    created, page, answer = with_stdio_client(store, body)
    assert page["complete"] is False
    assert answer.is_error, text_of(answer)
    assert f"was shown to you only in part (lines {page['start_line']}-{page['end_line']})" \
        in text_of(answer)
    assert store.get(created["file"]).revision == created["revision"]

def test_a_part_of_a_short_memory_sent_back_as_the_body_is_refused(
        store: MemoryStore) -> None:
    # A page read from a search hit's start_line, or a search paragraph, is part of the
    # body: written back as the whole body, it dropped the lines before it.
    before = _with_body(store, "user_pets.md", "Zhima is a cat.\n\nShe is three.\n\n"
                                               "The neighbour feeds her.\n")

    async def body(client: Client) -> Any:
        found = (await client.call_tool("search_memory", {"query": "neighbour feeds"})
                 ).structured_content["results"][0]
        after_search = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": found["paragraph"],
            "expected_revision": found["revision"]})
        page = await read_page(client, start_line=found["start_line"])
        after_page = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": page["content"] + " Twice a day.",
            "expected_revision": page["revision"]})
        whole = await read_page(client)
        after_whole = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": whole["content"] + " Twice a day.",
            "expected_revision": whole["revision"]})
        return found, page, whole, after_search, after_page, after_whole

    found, page, whole, after_search, after_page, after_whole = with_stdio_client(store, body)
    assert found["file"] == "user_pets.md" and page["complete"] is False
    for refused_write in (after_search, after_page):
        assert refused_write.is_error, text_of(refused_write)
        assert "was shown to you only in part (lines" in text_of(refused_write)
    assert "a search result" in text_of(after_search)
    assert whole["complete"] is True
    assert after_whole.structured_content["status"] == "written", text_of(after_whole)
    assert (store.directory / "user_pets.md").read_bytes() == before.replace(
        b"feeds her.\n", b"feeds her. Twice a day.\n")


def test_a_read_past_the_end_shows_no_part_and_blocks_no_whole_body(
        store: MemoryStore) -> None:
    memory = store.get("user_pets.md")

    async def body(client: Client) -> Any:
        await client.call_tool("read_memory", {"name": "user_pets.md", "start_line": 999})
        return await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": memory.body.rstrip("\n") + "\nMore.",
            "expected_revision": memory.revision})

    result = with_client(store, body)
    assert result.structured_content["status"] == "written", text_of(result)


def test_a_page_written_back_with_its_line_range_changes_only_those_lines(
        store: MemoryStore) -> None:
    before = _long_pets(store)

    async def body(client: Client) -> Any:
        first = await read_page(client)
        edited = first["content"].replace("Visit 3:", "Visit three:")
        one = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": edited, "expected_revision": first["revision"],
            "start_line": first["start_line"], "end_line": first["end_line"]})
        second = await read_page(client, start_line=first["next_start_line"])
        two = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": second["content"],
            "expected_revision": one.structured_content["revision"],
            "startLine": second["start_line"], "endLine": second["end_line"]})
        return first, second, one, two

    first, second, one, two = with_stdio_client(store, body)
    assert first["complete"] is False and second["complete"] is False
    assert second["next_start_line"] is None
    for result in (one, two):
        assert result.structured_content["status"] == "written", text_of(result)
    after = (store.directory / "user_pets.md").read_bytes()
    assert after == before.replace(b"Visit 3:", b"Visit three:")


def test_a_long_body_replaced_whole_names_all_its_lines(store: MemoryStore) -> None:
    before = _long_pets(store)
    memory = store.get("user_pets.md")
    last = len(memory.text.splitlines())
    shorter = call(store, "write_memory", {
        "name": "user_pets.md", "body": "Two cats.", "expected_revision": memory.revision,
        "start_line": memory.body_line, "end_line": last})
    assert shorter.structured_content["status"] == "written", text_of(shorter)
    head = before[:len(before) - len(memory.body.encode())]
    assert (store.directory / "user_pets.md").read_bytes() == head + b"Two cats.\n"
    short = call(store, "read_memory", {"name": "user_pets.md"}).structured_content
    assert short["complete"] is True


def test_a_long_body_read_whole_in_one_page_may_be_written_back_whole(
        store: MemoryStore) -> None:
    before = _long_pets(store)

    async def body(client: Client) -> Any:
        page = await read_page(client, max_bytes=100_000)
        written = await client.call_tool("write_memory", {
            "name": "user_pets.md", "body": page["content"].replace("Visit 7:", "Visit 7 -"),
            "expected_revision": page["revision"]})
        return page, written

    page, written = with_client(store, body)
    assert page["complete"] is True
    assert written.structured_content["status"] == "written", text_of(written)
    assert (store.directory / "user_pets.md").read_bytes() == before.replace(
        b"Visit 7:", b"Visit 7 -")


def test_a_line_range_outside_the_body_or_without_a_revision_is_refused(
        store: MemoryStore) -> None:
    before = (store.directory / "user_pets.md").read_bytes()
    memory = store.get("user_pets.md")
    cases = [({"expected_revision": memory.revision, "start_line": 2, "end_line": 10},
              "error: start_line: lines 2-10 are not in user_pets.md's body, lines 10-"),
             ({"expected_revision": memory.revision, "start_line": 10},
              "error: end_line: give start_line and end_line together"),
             ({"expected_revision": None, "start_line": 10, "end_line": 10},
              "error: start_line: a line range needs the memory's expected_revision")]
    for given, message in cases:
        result = call(store, "write_memory", {"name": "user_pets.md", "body": "x", **given})
        assert result.is_error and text_of(result).startswith(message), text_of(result)
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_write_memory_takes_a_body_or_a_content_one_of_them(store: MemoryStore) -> None:
    before = (store.directory / "user_pets.md").read_bytes()
    revision = store.get("user_pets.md").revision
    for given in ({}, {"body": "a\n", "content": "b\n"}):
        result = call(store, "write_memory", {"name": "user_pets.md",
                                              "expected_revision": revision, **given})
        assert result.is_error, given
        assert text_of(result) == ("error: body: give body (the body alone, the frontmatter "
                                   "kept) or content (the whole file), one of them")
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_a_body_opening_with_a_rule_in_a_file_without_frontmatter_is_refused(
        store: MemoryStore) -> None:
    # There the '---' would be read as the frontmatter, and the body would change.
    path = store.directory / "user_plain.md"
    path.write_text("Plain notes.\n")
    result = call(store, "write_memory", {"name": "user_plain.md", "body": RULE_FIRST,
                                          "expected_revision": store.get("user_plain").revision})
    assert result.is_error
    assert "send the whole file as content, frontmatter first" in text_of(result)
    assert path.read_text() == "Plain notes.\n"


def test_crlf_text_from_a_client_is_written_in_lf_and_passes_the_audit(
        store: MemoryStore) -> None:
    async def body(client: Client) -> Any:
        await client.call_tool("create_memory", {
            "type": "user", "name": "Windows notes", "description": "Typed on Windows.",
            "body": "line one\r\nline two\r\n"})
        await client.call_tool("write_memory", {
            "name": "user_crlf.md", "expected_revision": None,
            "content": "---\r\ndescription: d\r\n---\r\nbody\r\nmore\r\n"})
        return await client.call_tool("audit", {})

    audit = with_client(store, body).structured_content
    assert [f for f in audit["findings"] if f["category"] == "crlf_line_endings"] == []
    for name in ("user_windows_notes.md", "user_crlf.md"):
        assert b"\r" not in (store.directory / name).read_bytes(), name


def test_a_stale_write_is_refused_as_a_result_with_the_conflict_and_both_revisions(
        store: MemoryStore) -> None:
    memory = store.get("user_pets.md")
    path = store.directory / "user_pets.md"
    path.write_text(memory.text + "\nAn edit in the editor.\n")
    on_disk = path.read_bytes()
    result = call(store, "write_memory", {"name": "user_pets.md", "content": "mine\n",
                                          "expectedRevision": memory.revision})
    assert not result.is_error
    refused = result.structured_content
    assert refused["status"] == "refused"
    assert refused["conflict_id"]
    assert refused["expected_revision"] == memory.revision
    assert refused["current_revision"] == store.get("user_pets.md").revision
    assert path.read_bytes() == on_disk
    conflicts = call(store, "list_conflicts", {}).structured_content["conflicts"]
    assert [c["id"] for c in conflicts] == [refused["conflict_id"]]


def test_set_memory_fields_changes_only_those_fields(store: MemoryStore) -> None:
    before = store.get("user_pets.md")
    result = call(store, "set_memory_fields", {"name": "user_pets.md", "fields": {
        "tags": ["cats", "home"], "invalid_at": "2030-01-01"}})
    assert result.structured_content["status"] == "written"
    after = store.get("user_pets.md")
    assert after.tags == ("cats", "home")
    assert str(after.invalid_at) == "2030-01-01"
    assert after.body == before.body


def test_a_field_the_reader_would_ignore_is_an_error_and_changes_nothing(
        store: MemoryStore) -> None:
    before = (store.directory / "user_pets.md").read_bytes()
    result = call(store, "set_memory_fields", {"name": "user_pets.md",
                                               "fields": {"invalid_at": "next week"}})
    assert result.is_error
    assert "invalid_at: must be a date" in text_of(result)
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_create_memory_adds_the_file_and_its_index_line_and_a_second_time_updates_it(
        store: MemoryStore) -> None:
    arguments = {"type": "project", "name": "Quarterly report due",
                 "description": "The Q4 report is due on 2026-12-18.",
                 "body": "Send it to finance.", "tags": ["report"]}
    created = call(store, "create_memory", arguments).structured_content
    assert created["status"] == "created"
    assert created["file"] == "project_quarterly_report_due.md"
    assert "project_quarterly_report_due.md" in store.read_index()[0]
    again = call(store, "create_memory", arguments).structured_content
    assert again["status"] == "unchanged"
    changed = call(store, "create_memory", {**arguments, "body": "Send it to Ana."})
    assert changed.structured_content["status"] == "updated"
    assert changed.structured_content["previous_revision"] == created["revision"]
    assert "updated project_quarterly_report_due.md" in text_of(changed)
    memory = store.get("project_quarterly_report_due.md")
    assert memory.body.strip() == "Send it to Ana." and memory.tags == ("report",)
    assert store.read_index()[0].count("project_quarterly_report_due.md") == 1


def test_write_memory_creating_a_file_adds_its_index_line_as_the_cli_does(
        store: MemoryStore) -> None:
    # One creation path for every surface: the audit must not find it not_in_index.
    text = ("---\nname: Boat trip\ndescription: The boat leaves at nine.\nmetadata:\n"
            "  type: project\n---\nBring a hat.\n")

    async def body(client: Client) -> Any:
        written = await client.call_tool("write_memory", {
            "name": "project_boat_trip.md", "content": text, "expected_revision": None})
        return written, await client.call_tool("audit", {})

    written, audit = with_stdio_client(store, body)
    assert written.structured_content["status"] == "created", text_of(written)
    assert ("- [Boat trip](project_boat_trip.md) — The boat leaves at nine.\n"
            in store.read_index()[0])
    assert [f for f in audit.structured_content["findings"]
            if f["file"] == "project_boat_trip.md"] == []


def test_a_create_beside_a_symlinked_memory_md_is_an_error_and_writes_nothing(
        store: MemoryStore, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes((store.directory / "MEMORY.md").read_bytes())
    (store.directory / "MEMORY.md").unlink()
    (store.directory / "MEMORY.md").symlink_to(elsewhere)
    files_before = sorted(p.name for p in store.directory.iterdir())

    async def body(client: Client) -> Any:
        return [await client.call_tool("create_memory", {
                    "type": "project", "name": "Boat trip", "description": "At nine.",
                    "body": "Bring a hat."}),
                await client.call_tool("write_memory", {
                    "name": "project_ferry.md", "content": "---\ndescription: d\n---\nx\n",
                    "expected_revision": None})]

    for result in with_stdio_client(store, body):
        assert result.is_error
        assert text_of(result) == ("error: refusing MEMORY.md: it is a symlink; sagemem "
                                   "never follows links")
    assert sorted(p.name for p in store.directory.iterdir()) == files_before
    logged = b"".join(p.read_bytes() for p in store.state_dir.rglob("*") if p.is_file())
    assert b"project_boat_trip" not in logged and b"project_ferry" not in logged


def test_archive_needs_a_reason_and_respects_locks(store: MemoryStore) -> None:
    missing = call(store, "archive_memory", {"name": "user_pets.md"})
    assert missing.is_error
    blank = call(store, "archive_memory", {"name": "user_pets.md", "reason": "  "})
    assert blank.is_error and "needs a reason" in text_of(blank)
    lock_memory(store, "user_pets.md")
    locked = call(store, "archive_memory", {"name": "user_pets.md", "reason": "obsolete"})
    assert locked.is_error and "locked" in text_of(locked)
    assert (store.directory / "user_pets.md").exists()
    done = call(store, "archive_memory", {"name": "user_timezone_schedule.md",
                                          "reason": "moved abroad"})
    assert done.structured_content["file"] == "user_timezone_schedule.md"
    assert (store.directory / "archive" / "user_timezone_schedule.md").exists()


def test_list_memories_by_type_and_record_use(store: MemoryStore) -> None:
    listed = call(store, "list_memories", {"type": "user"}).structured_content["memories"]
    assert {m["type"] for m in listed} == {"user"}
    assert "user_pets.md" in {m["file"] for m in listed}
    used = call(store, "record_use", {"name": "user_pets"}).structured_content
    assert used == {"file": "user_pets.md", "recorded": True, "warnings": [], "layer": "project"}
    assert load_ledger(store.state_dir)[0]["user_pets.md"].use.count == 1


def test_audit_reports_a_broken_memory(store: MemoryStore) -> None:
    (store.directory / "user_pets.md").write_text("---\nname: [unclosed\n---\nbody\n")
    outcome = call(store, "audit", {}).structured_content
    assert outcome["memories"] >= 20
    assert any(f["file"] == "user_pets.md" for f in outcome["findings"])


def test_an_unknown_memory_is_an_error_result_naming_it(store: MemoryStore) -> None:
    result = call(store, "read_memory", {"name": "user_nobody.md"})
    assert result.is_error
    assert "user_nobody.md" in text_of(result)


def test_a_name_outside_the_folder_or_a_symlink_is_refused_and_nothing_is_read(
        store: MemoryStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\ndescription: outside\n---\nthe secret\n")
    (store.directory / "user_link.md").symlink_to(secret)
    for name in ("../secret.md", "user_link.md"):
        result = call(store, "read_memory", {"name": name})
        assert result.is_error, name
        assert "the secret" not in text_of(result)
    written = call(store, "write_memory", {"name": "../escape.md", "content": "x\n",
                                           "expected_revision": None})
    assert written.is_error
    assert not (tmp_path / "escape.md").exists()


def test_a_text_over_the_size_limit_is_refused_and_the_file_kept(store: MemoryStore) -> None:
    memory = store.get("user_pets.md")
    result = call(store, "write_memory", {"name": "user_pets.md", "content": "x" * 2_000_000,
                                          "expected_revision": memory.revision})
    assert result.is_error
    assert store.get("user_pets.md").text == memory.text


def test_a_lone_surrogate_in_an_argument_is_an_error_result_and_nothing_is_written(
        store: MemoryStore) -> None:
    # JSON's "\\ud800" decodes to a lone surrogate, which no UTF-8 file can hold.
    before = (store.directory / "user_pets.md").read_bytes()
    results = [call(store, tool, arguments) for tool, arguments in [
        ("write_memory", {"name": "user_pets.md", "content": "cat \ud800",
                          "expected_revision": store.get("user_pets.md").revision}),
        ("set_memory_fields", {"name": "user_pets.md",
                               "fields": {"tags": ["ok", "\udcff"]}}),
        ("search_memory", {"query": "cat \ud800"}),
    ]]
    for result in results:
        assert result.is_error
        assert text_of(result).startswith("error: ")
        assert "surrogate" in text_of(result)
        assert "\n" not in text_of(result)
    assert (store.directory / "user_pets.md").read_bytes() == before


@pytest.mark.parametrize("fields", [{"description": {"nested": {"deep": [1]}}},
                                    {"baseline": "yes"}, {"name": ["a", "b"]},
                                    {"tags": [{"a": 1}]}])
def test_set_memory_fields_refuses_a_value_the_reader_would_ignore(
        store: MemoryStore, fields: dict[str, Any]) -> None:
    # JSON can carry what `sagemem set key=value` cannot: a mapping as the description.
    before = (store.directory / "user_pets.md").read_bytes()
    result = call(store, "set_memory_fields", {"name": "user_pets.md", "fields": fields})
    assert result.is_error, fields
    assert text_of(result).startswith(f"error: {next(iter(fields))}: ")
    assert (store.directory / "user_pets.md").read_bytes() == before


def test_the_audit_text_writes_out_control_characters_in_file_names(
        store: MemoryStore) -> None:
    (store.directory / "user_\u202eevil.md").write_text("---\ndescription: x\n---\nx\n")
    text = text_of(call(store, "audit", {}))
    assert "user_\\u202eevil.md" in text
    assert "\u202e" not in text


def test_a_resource_writes_out_control_characters(store: MemoryStore) -> None:
    (store.directory / "user_pets.md").write_text(
        "---\ndescription: d\x1b]0;title\x07\n---\nbody \x1b[2J \u202e\n")

    async def body(client: Client) -> Any:
        return await client.read_resource("sagemem://memories/user_pets.md")

    text = with_client(store, body).contents[0].text
    assert text == "---\ndescription: d\\x1b]0;title\\x07\n---\nbody \\x1b[2J \\u202e\n"


def test_every_listed_resource_reads_its_own_file(store: MemoryStore) -> None:
    # `?`, `#` and `%` are legal in a memory's name but not as themselves in a URI.
    for name in ("user_q?.md", "user_x#y.md", "user_%41.md"):
        (store.directory / name).write_text(f"---\ndescription: d\n---\n{name}\n")

    async def body(client: Client) -> Any:
        listed = (await client.list_resources()).resources
        return {r.name: (await client.read_resource(r.uri)).contents[0].text
                for r in listed if "_q?" in r.name or "#" in r.name or "%" in r.name}

    texts = with_client(store, body)
    assert {name: text.splitlines()[-1] for name, text in texts.items()} == {
        "user_q?.md": "user_q?.md", "user_x#y.md": "user_x#y.md",
        "user_%41.md": "user_%41.md"}


def test_the_index_resource_of_a_missing_folder_is_an_error(
        store: MemoryStore, tmp_path: Path) -> None:
    async def body(client: Client) -> Any:
        store.directory.rename(tmp_path / "aside")
        try:
            await client.read_resource("sagemem://MEMORY.md")
        except MCPError as exc:  # the SDK raises the resource error as an MCPError
            return str(exc)
        return "no error"

    assert "does not exist" in with_client(store, body)


def test_a_refused_create_never_says_the_existing_file_was_deleted(
        store: MemoryStore) -> None:
    result = call(store, "write_memory", {"name": "user_pets.md", "content": "x\n",
                                          "expected_revision": None})
    assert result.structured_content["status"] == "refused"
    assert result.structured_content["refusal"] == "exists"
    assert "deleted" not in text_of(result)
    assert "already exists" in text_of(result)


def test_a_read_past_the_end_says_where_the_file_ends(store: MemoryStore) -> None:
    total = store.read("user_pets.md").total_lines
    result = call(store, "read_memory", {"name": "user_pets.md", "start_line": 999})
    assert not result.is_error
    assert "None" not in text_of(result)
    assert f"has {total} lines" in text_of(result)


# -- a long-lived process ------------------------------------------------------------------

def test_an_edit_on_disk_is_seen_by_the_next_search(store: MemoryStore) -> None:
    async def body(client: Client) -> Any:
        first = await client.call_tool("search_memory", {"query": "zanzibar ferry"})
        (store.directory / "project_zanzibar.md").write_text(
            "---\nname: Zanzibar trip\ndescription: The ferry to Zanzibar leaves at 7.\n"
            "metadata:\n  type: project\n---\nBook the zanzibar ferry early.\n")
        for _ in range(50):  # the watcher reports within milliseconds
            second = await client.call_tool("search_memory", {"query": "zanzibar ferry"})
            if second.structured_content["results"]:
                return first, second
            await asyncio.sleep(0.1)
        return first, second

    first, second = with_client(store, body)
    assert first.structured_content["results"] == []
    assert second.structured_content["results"][0]["file"] == "project_zanzibar.md"


def test_a_folder_that_disappears_makes_tools_answer_with_an_error_then_recover(
        store: MemoryStore, tmp_path: Path) -> None:
    aside = tmp_path / "aside"

    async def body(client: Client) -> Any:
        await client.call_tool("search_memory", {"query": "cat"})
        store.directory.rename(aside)
        gone = await client.call_tool("search_memory", {"query": "cat"})
        listed = await client.call_tool("list_memories", {})
        aside.rename(store.directory)
        back = await client.call_tool("search_memory", {"query": "cat"})
        return gone, listed, back

    gone, listed, back = with_client(store, body)
    assert gone.is_error and "does not exist" in text_of(gone)
    assert listed.is_error
    assert back.structured_content["results"][0]["file"] == "user_pets.md"


def test_memory_md_and_each_memory_are_resources(store: MemoryStore) -> None:
    async def body(client: Client) -> Any:
        listed = await client.list_resources()
        index = await client.read_resource("sagemem://MEMORY.md")
        pets = await client.read_resource("sagemem://memories/user_pets.md")
        return listed, index, pets

    listed, index, pets = with_client(store, body)
    uris = {str(r.uri) for r in listed.resources}
    assert "sagemem://MEMORY.md" in uris
    assert "sagemem://memories/user_pets.md" in uris
    assert index.contents[0].text == (store.directory / "MEMORY.md").read_text()
    assert pets.contents[0].text == (store.directory / "user_pets.md").read_text()


# -- the command ---------------------------------------------------------------------------

def test_the_http_address_is_loopback_only() -> None:
    assert loopback_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert loopback_address("8765") == ("127.0.0.1", 8765)
    assert loopback_address("[::1]:9000") == ("::1", 9000)
    assert loopback_address("localhost:9000") == ("localhost", 9000)
    for address in ("0.0.0.0:8765", "192.168.1.4:80", "example.com:80", "127.0.0.1:0",
                    "127.0.0.1:http"):
        with pytest.raises(InvalidArgument) as refused:
            loopback_address(address)
        assert refused.value.argument == "--http", address


def test_without_the_extra_sagemem_mcp_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import importlib.util, sys; real = importlib.util.find_spec;"
            "importlib.util.find_spec = lambda n, *a: None if n == 'mcp' else real(n, *a);"
            "from sagemem.cli import run; sys.argv = ['sagemem', '--dir', sys.argv[1], 'mcp'];"
            "run()")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: the MCP server needs the mcp extra: "
                                   "pip install 'sagemem[mcp]'")


def test_import_sagemem_never_imports_the_sdk() -> None:
    code = "import sys, sagemem, sagemem.store; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "False"


def server_env(store: MemoryStore) -> dict[str, str]:
    return {**os.environ, "SAGE_MEM_DIR": str(store.directory),
            "SAGE_MEM_STATE_DIR": str(store.state_dir)}


def test_a_real_stdio_server_answers_the_sdk_client(store: MemoryStore) -> None:
    params = StdioServerParameters(command=SAGEMEM[0], args=[*SAGEMEM[1:], "mcp"],
                                   env=server_env(store))
    memory = store.get("user_pets.md")

    async def main() -> Any:
        async with Client(params) as client:
            tools = await client.list_tools()
            search = await client.call_tool("search_memory", {"query": "cat"})
            stale = await client.call_tool("read_memory", {
                "name": "user_pets.md", "revision": "0" * 64})
            refused = await client.call_tool("write_memory", {
                "name": "user_pets.md", "content": "x\n", "expected_revision": "0" * 64})
            written = await client.call_tool("write_memory", {
                "name": "user_pets.md", "content": memory.text + "\nMore.\n",
                "expected_revision": memory.revision})
            return tools, search, stale, refused, written

    tools, search, stale, refused, written = asyncio.run(main())
    assert len(tools.tools) == len(TOOL_NAMES)
    assert search.structured_content["results"][0]["file"] == "user_pets.md"
    assert stale.structured_content["status"] == "revision_changed"
    assert refused.structured_content["status"] == "refused"
    assert refused.structured_content["conflict_id"]
    assert written.structured_content["status"] == "written"


class RawStdio:
    """``sagemem mcp`` as a subprocess spoken to in raw lines, each reply awaited with a
    timeout (the SDK's client would wait for ever for a reply that never comes)."""

    def __init__(self, store: MemoryStore) -> None:
        self.process = subprocess.Popen([*SAGEMEM, "mcp"], env=server_env(store),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def ask(self, line: bytes, timeout: float = 30) -> dict[str, Any] | None:
        """Send ``line``; the reply as JSON, or None if none came within ``timeout``."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()
        try:
            return dict(json.loads(self.lines.get(timeout=timeout)))
        except queue.Empty:
            return None

    def close(self) -> str:
        """Close stdin (the server stops at its end); what it said on stderr."""
        process = self.process
        assert process.stdin and process.stdout and process.stderr
        process.stdin.close()
        process.wait(timeout=30)
        self.reader.join(timeout=30)
        err = process.stderr.read().decode()
        process.stdout.close()
        process.stderr.close()
        return err


def test_every_line_over_stdio_gets_an_answer_even_one_the_sdk_cannot_read(
        store: MemoryStore) -> None:
    # The SDK's stdio reader dropped a line it could not read: no reply at all, so a
    # client without a read timeout hung. Each now gets a JSON-RPC error, with its id.
    server = RawStdio(store)
    try:
        assert server.ask(INITIALIZE.encode())["id"] == 1  # type: ignore[index]
        server.process.stdin.write(  # type: ignore[union-attr]
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        surrogate = server.ask(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":'
                               b'{"name":"search_memory","arguments":{"query":"cat \\ud800"}}}')
        not_json = server.ask(b"this is not json")
        not_a_message = server.ask(b'{"jsonrpc":"2.0","id":3,"method":"tools/call",'
                                   b'"params":5}')
        alive = server.ask(b'{"jsonrpc":"2.0","id":4,"method":"ping"}')
    finally:
        err = server.close()
    assert surrogate is not None and not_json is not None and not_a_message is not None
    assert (surrogate["id"], surrogate["error"]["code"], surrogate["error"]["message"]) == (
        2, -32700, "Parse error")
    assert "lone surrogate" in surrogate["error"]["data"]
    assert (not_json["id"], not_json["error"]["code"], not_json["error"]["message"]) == (
        None, -32700, "Parse error")
    assert (not_a_message["id"], not_a_message["error"]["code"]) == (3, -32600)
    assert alive == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert "Traceback" not in err


def test_a_line_nested_too_deep_gets_a_parse_error_and_the_server_keeps_running(
        store: MemoryStore) -> None:
    # One short line of brackets made the parse-error reply itself fail (RecursionError
    # in json.loads): the server exited 1 and the client waited for ever.
    server = RawStdio(store)
    try:
        assert server.ask(INITIALIZE.encode())["id"] == 1  # type: ignore[index]
        deep = [server.ask(b"[" * depth + b"]" * depth) for depth in (900, 100_000)]
        alive = server.ask(b'{"jsonrpc":"2.0","id":4,"method":"ping"}')
    finally:
        err = server.close()
    for reply in deep:
        assert reply is not None
        assert (reply["id"], reply["error"]["code"]) == (None, -32700), reply
    assert alive == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert "internal error" not in err and "Traceback" not in err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)


def test_a_real_http_server_answers_on_loopback(store: MemoryStore) -> None:
    port = _free_port()
    server = subprocess.Popen([*SAGEMEM, "mcp", "--http", f"127.0.0.1:{port}"],
                              env=server_env(store), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(port)

        async def main() -> Any:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await client.call_tool("search_memory", {"query": "cat"})

        result = asyncio.run(main())
        assert result.structured_content["results"][0]["file"] == "user_pets.md"
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert "Traceback" not in err


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}})


def _post_status(port: int, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/mcp", INITIALIZE, headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", **headers})
        return connection.getresponse().status
    finally:
        connection.close()


def test_http_refuses_a_foreign_host_or_origin_whatever_the_loopback_spelling(
        store: MemoryStore) -> None:
    # A web page can rebind its own name to 127.0.0.1 (DNS rebinding): only the Host and
    # Origin headers tell its requests apart. The SDK checks them by default for the
    # spellings 127.0.0.1, localhost and ::1 only, not for LOCALHOST or 127.0.0.2.
    port = _free_port()
    server = subprocess.Popen([*SAGEMEM, "mcp", "--http", f"LOCALHOST:{port}"],
                              env=server_env(store), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(port)
        foreign_host = _post_status(port, {"Host": f"rebound.example:{port}"})
        foreign_origin = _post_status(port, {"Origin": "http://rebound.example"})
        own = _post_status(port, {"Host": f"localhost:{port}"})
    finally:
        server.terminate()
        server.communicate(timeout=10)
    assert (foreign_host, foreign_origin, own) == (421, 403, 200)


def test_the_allowed_hosts_are_the_bound_address_and_the_loopback_names() -> None:
    hosts = allowed_hosts("127.0.0.2", 8765)
    assert "127.0.0.2:8765" in hosts and "localhost:8765" not in hosts
    assert allowed_hosts("::1", 9000) == ["[::1]:9000"]
    assert set(allowed_hosts("LOCALHOST", 80)) == {"localhost:80", "LOCALHOST:80",
                                                   "127.0.0.1:80", "[::1]:80"}


def test_the_server_embeds_a_fresh_folder_in_the_background_then_searches_by_meaning(
        tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("eval"))
    store = MemoryStore(folder, tmp_path / "state", semantic=True)

    async def body(client: Client) -> Any:
        for _ in range(600):  # the catch-up embeds between calls; a search waits for none
            cat = await client.call_tool("search_memory", {"query": "我的猫叫什么名字"})
            if cat.structured_content["coverage"]["files_without_vectors"] == 0:
                break
            await asyncio.sleep(0.1)
        lexical = await client.call_tool("search_memory", {"query": "cat", "mode": "lexical"})
        return cat, lexical

    cat, lexical = with_client(store, body)
    assert cat.structured_content["results"][0]["file"] == "user_pets.md"
    assert cat.structured_content["relevance"]["passes"] is True
    assert lexical.structured_content["relevance"] is None


def test_a_meaning_mode_on_a_lexical_store_is_an_error_saying_so(store: MemoryStore) -> None:
    result = call(store, "search_memory", {"query": "cat", "mode": "hybrid"})
    assert result.is_error
    assert "semantic search is off" in text_of(result)


def test_secrets_given_to_the_write_tools_never_reach_disk_and_the_model_is_told(
        store: MemoryStore) -> None:
    secret = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
    memory = store.get("user_pets.md")

    async def body(client: Client) -> Any:
        return [
            await client.call_tool("write_memory", {
                "name": "user_pets.md", "content": memory.text + f"\ntoken {secret}\n",
                "expected_revision": memory.revision}),
            await client.call_tool("set_memory_fields", {
                "name": "user_pets.md", "fields": {"description": f"uses {secret}"}}),
            await client.call_tool("create_memory", {
                "type": "reference", "name": "CI deploy", "description": "How CI deploys",
                "body": f"GH_TOKEN={secret}"}),
        ]

    results = with_client(store, body)
    for result in results:
        assert not result.is_error, text_of(result)
        assert any("redacted" in w for w in result.structured_content["warnings"])
        assert secret not in text_of(result)
    on_disk = b"".join(p.read_bytes() for folder in (store.directory, store.state_dir)
                       for p in folder.rglob("*") if p.is_file())
    assert secret.encode() not in on_disk


def test_a_port_in_use_is_one_error_line_before_anything_says_serving(
        tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*SAGEMEM, "--dir", str(SAMPLE), "--state-dir",
                               str(tmp_path / "state"), "mcp", "--http", f"127.0.0.1:{port}"],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == (f"error: cannot listen on 127.0.0.1:{port}: address already in "
                           "use; stop what listens there or give another port\n")


def test_an_ipv6_server_names_its_url_with_brackets(store: MemoryStore) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
            port = probe.getsockname()[1]
    except OSError:
        pytest.skip("no ::1 on this machine")
    server = subprocess.Popen([*SAGEMEM, "mcp", "--http", f"[::1]:{port}"],
                              env=server_env(store), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
    finally:
        server.terminate()
        server.communicate(timeout=10)
    assert first == f"serving MCP at http://[::1]:{port}/mcp (Ctrl-C stops)\n"


def test_a_non_loopback_http_address_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([*SAGEMEM, "--dir", str(tmp_path), "mcp", "--http", "0.0.0.0:80"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "0.0.0.0 is not a loopback address" in done.stderr
    assert "Traceback" not in done.stderr
