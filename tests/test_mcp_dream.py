"""dream_plan and dream_apply through the SDK's own client: the model as planner, under
every guard of a run and the loss ceiling it cannot lift."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra: pip install '.[mcp]'")

from dream_fixture import make_dream_folder
from mcp import Client

from sagemem.mcp_server.server import build_server
from sagemem.store import MemoryStore

CONTRACT = "project_vendor_contract.md"
STILL_VALID = "Contract expires 2027-10-03, no auto-renewal."


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


def call(store: MemoryStore, tool: str, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(build_server(store, watch=False)) as client:
            return await client.call_tool(tool, arguments)
    return asyncio.run(main())


def dropping_plan(store: MemoryStore) -> dict[str, Any]:
    memory = store.get(CONTRACT)
    return {"operations": [{"op": "rewrite", "file": CONTRACT, "revision": memory.revision,
                            "text": memory.text.replace(STILL_VALID + "\n", ""),
                            "reason": "shorter"}]}


def test_dream_plan_gives_the_findings_and_the_plan_format(store):
    result = call(store, "dream_plan", {})
    assert not result.is_error
    brief = result.structured_content["brief"]
    assert brief["version"] == 1 and "plan_format" in brief
    assert "project_autumn_promo.md" in result.content[0].text


def test_dream_apply_lists_the_lines_no_memory_holds_any_more(store):
    result = call(store, "dream_apply", {"plan": dropping_plan(store)})
    assert not result.is_error, result.content[0].text
    out = result.structured_content
    assert out["status"] == "applied"
    assert [f["text"] for f in out["deleted_facts"]] == [STILL_VALID]
    assert out["undo"] == f"sagemem dream undo {out['run_id']}"
    assert STILL_VALID not in store.get(CONTRACT).text
    assert "Facts no longer present (1)" in result.content[0].text


def test_dream_apply_dry_run_changes_nothing(store):
    before = store.get(CONTRACT).text
    out = call(store, "dream_apply", {"plan": dropping_plan(store), "dry_run": True}
               ).structured_content
    assert out["status"] == "report" and out["planned"] and not out["applied"]
    assert store.get(CONTRACT).text == before


def test_a_model_cannot_lift_the_loss_ceiling(store):
    memory = store.get(CONTRACT)
    head = memory.text[: len(memory.text) - len(memory.body)]
    plan = {"operations": [{"op": "rewrite", "file": CONTRACT, "revision": memory.revision,
                            "text": head + "Vendor: see email.\n", "reason": "compress"}]}
    out = call(store, "dream_apply", {"plan": plan}).structured_content
    assert out["status"] == "refused" and out["loss_share"] > 0.25
    assert store.get(CONTRACT).text == memory.text


def test_a_plan_that_is_not_one_is_an_error_result(store):
    result = call(store, "dream_apply", {"plan": {"operations": [{"op": "delete",
                                                                   "file": CONTRACT}]}})
    assert result.is_error
    assert "the plan is refused" in result.content[0].text
