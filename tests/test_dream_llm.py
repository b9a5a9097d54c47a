"""The LLM planner (dream/llm.py, dream/llm_client.py) against a scripted server, over HTTP."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MEMORY_TEXT, write_memory
from scripted_llm import Raw, ScriptedLlm, answer, cut, llm_server, tool_calls

from sagemem.config import DREAM_LLM_KEY_ENV, Settings, load_settings
from sagemem.dream import llm as llm_mod
from sagemem.dream.llm import RETRY_PROMPT, LlmPlan, plan_with_llm
from sagemem.dream.llm_client import ChatEndpoint, endpoint_from
from sagemem.errors import PlannerFailed
from sagemem.files.init import init_directory
from sagemem.store import MemoryStore

__all__ = ["llm_server"]  # the fixture, imported for pytest to find

KEY = "sk-test-0123456789abcdef0123456789abcdef"
READ_TOOLS = {"list_memories", "read_memory"}
WRITE_TOOLS = {"rewrite_memory", "create_memory", "archive_memory"}
EMPTY_PLAN = '{"operations": []}'


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    init_directory(tmp_path / "memory", tmp_path / "state")
    folder = MemoryStore(tmp_path / "memory", tmp_path / "state")
    for name, type_ in (("user_alice.md", "user"), ("project_deploy.md", "project")):
        write_memory(folder.directory, name,
                     MEMORY_TEXT.format(name=name[:-3], description=f"about {name}",
                                        type=type_, body="Body text."))
    return folder


def settings_for(store: MemoryStore, server: ScriptedLlm) -> Settings:
    return Settings(memory_dir=store.directory, state_dir=store.state_dir,
                    dream_llm_url=server.url, dream_llm_model="test-model")


def plan(store: MemoryStore, server: ScriptedLlm, *, apply: bool = False,
         env: dict[str, str] | None = None, **kwargs: Any) -> LlmPlan:
    return plan_with_llm(store, settings_for(store, server), apply=apply,
                         brief="Tidy the folder.", env=env or {}, **kwargs)


def tool_names(request_body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request_body.get("tools", [])}


def tool_results(request_body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request_body["messages"] if m["role"] == "tool"]


def archive_plan(revision: str) -> str:
    return "```json\n" + json.dumps({"operations": [
        {"op": "archive", "file": "project_deploy.md", "revision": revision,
         "reason": "the deploy is done", "kind": "expired"}]}) + "\n```"


# -- the tool set is the boundary ------------------------------------------------------

def test_report_mode_offers_only_read_tools(store: MemoryStore, llm_server: ScriptedLlm
                                            ) -> None:
    llm_server.script = [answer(EMPTY_PLAN)]
    plan(store, llm_server)
    assert tool_names(llm_server.chat_requests[0].body) == READ_TOOLS


def test_apply_mode_adds_the_write_tools(store: MemoryStore, llm_server: ScriptedLlm
                                         ) -> None:
    llm_server.script = [answer(EMPTY_PLAN)]
    plan(store, llm_server, apply=True)
    assert tool_names(llm_server.chat_requests[0].body) == READ_TOOLS | WRITE_TOOLS


def test_a_write_call_in_report_mode_is_an_unknown_tool(store: MemoryStore,
                                                        llm_server: ScriptedLlm) -> None:
    llm_server.script = [tool_calls(("archive_memory", {"file": "user_alice.md"})),
                         answer(EMPTY_PLAN)]
    result = plan(store, llm_server)
    [refusal] = tool_results(llm_server.chat_requests[1].body)
    assert "there is no tool 'archive_memory'" in refusal["error"]
    assert result.plan.operations == ()


def test_the_model_sees_the_system_prompt_and_the_brief_only(store: MemoryStore,
                                                             llm_server: ScriptedLlm) -> None:
    llm_server.script = [answer(EMPTY_PLAN)]
    plan(store, llm_server)
    messages = llm_server.chat_requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "Tidy the folder."
    assert "archive" in messages[0]["content"] and "revision" in messages[0]["content"]


# -- the plan ---------------------------------------------------------------------

def test_report_mode_plan_is_the_json_in_the_final_answer(store: MemoryStore,
                                                          llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [answer("Here is the plan:\n" + archive_plan(revision))]
    result = plan(store, llm_server)
    assert result.plan.planner == "llm"
    [operation] = result.plan.operations
    assert (operation.op, operation.file, operation.revision) == (
        "archive", "project_deploy.md", revision)
    assert (result.truncated, result.requests) == (False, 1)


def test_a_fenced_plan_may_rewrite_a_memory_holding_a_code_fence(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    alice = store.get("user_alice.md")
    text = alice.text + "```bash\nmake deploy\n```\n"
    operation = {"op": "rewrite", "file": "user_alice.md", "revision": alice.revision,
                 "text": text, "reason": "add the command"}
    llm_server.script = [answer("```json\n" + json.dumps({"operations": [operation]},
                                                          indent=1) + "\n```")]
    assert plan(store, llm_server).plan.operations[0].text == text


def test_an_answer_with_no_plan_fails(store: MemoryStore, llm_server: ScriptedLlm) -> None:
    llm_server.script = [answer("I think the folder looks fine.")]
    with pytest.raises(PlannerFailed, match="holds no plan"):
        plan(store, llm_server)


def test_an_invalid_plan_is_sent_back_to_be_corrected(store: MemoryStore,
                                                      llm_server: ScriptedLlm) -> None:
    llm_server.script = [answer('{"operations": [{"op": "delete", "file": "a.md"}]}'),
                         answer(EMPTY_PLAN)]
    result = plan(store, llm_server)
    correction = llm_server.chat_requests[1].body["messages"][-1]
    assert correction["role"] == "user" and '"op" must be one of' in correction["content"]
    assert result.requests == 2


def test_read_memory_returns_the_real_text_and_revision(store: MemoryStore,
                                                        llm_server: ScriptedLlm) -> None:
    memory = store.get("user_alice.md")
    llm_server.script = [tool_calls(("read_memory", {"file": "user_alice.md"})),
                         answer(EMPTY_PLAN)]
    plan(store, llm_server)
    [read] = tool_results(llm_server.chat_requests[1].body)
    assert (read["text"], read["revision"]) == (memory.text, memory.revision)


def test_read_memory_of_a_missing_or_unsafe_file_is_an_error_result(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    llm_server.script = [tool_calls(("read_memory", {"file": "nobody.md"}),
                                    ("read_memory", {"file": "../etc/passwd"})),
                         answer(EMPTY_PLAN)]
    plan(store, llm_server)
    missing, unsafe = tool_results(llm_server.chat_requests[1].body)
    assert "error" in missing and "nobody.md" in missing["error"]
    assert "error" in unsafe


def test_read_memory_shows_control_characters_as_text(store: MemoryStore,
                                                      llm_server: ScriptedLlm) -> None:
    write_memory(store.directory, "user_term.md", MEMORY_TEXT.format(
        name="term", description="d", type="user", body="clear \x1b[2J screen"))
    llm_server.script = [tool_calls(("read_memory", {"file": "user_term.md"})),
                         answer(EMPTY_PLAN)]
    plan(store, llm_server)
    [read] = tool_results(llm_server.chat_requests[1].body)
    assert "\x1b" not in read["text"] and "\\x1b[2J" in read["text"]


def test_list_memories_lists_every_live_memory(store: MemoryStore,
                                               llm_server: ScriptedLlm) -> None:
    llm_server.script = [tool_calls(("list_memories", {})), answer(EMPTY_PLAN)]
    plan(store, llm_server)
    [listing] = tool_results(llm_server.chat_requests[1].body)
    assert [(m["file"], m["type"], m["revision"]) for m in listing["memories"]] == [
        ("project_deploy.md", "project", store.get("project_deploy.md").revision),
        ("user_alice.md", "user", store.get("user_alice.md").revision)]


def test_a_listing_cut_at_its_bound_says_so(store: MemoryStore, llm_server: ScriptedLlm,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_mod, "MAX_LISTED", 1)
    llm_server.script = [tool_calls(("list_memories", {})), answer(EMPTY_PLAN)]
    result = plan(store, llm_server)
    [listing] = tool_results(llm_server.chat_requests[1].body)
    assert len(listing["memories"]) == 1 and "first 1 of 2" in listing["note"]
    assert any("first 1 of 2" in note for note in result.notes)


# -- apply mode queues, never writes ---------------------------------------------------

def test_an_invalid_queued_call_gets_the_error_and_the_corrected_call_is_queued(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    before = store.get("user_alice.md")
    fixed = before.text.replace("Body text.", "Alice prefers tea.")
    llm_server.script = [
        tool_calls(("rewrite_memory", {"file": "user_alice.md", "text": fixed,
                                       "reason": "fold in the tea"})),
        tool_calls(("rewrite_memory", {"file": "user_alice.md", "text": fixed,
                                       "revision": before.revision,
                                       "reason": "fold in the tea"})),
        answer("Done.")]
    result = plan(store, llm_server, apply=True)
    [refusal] = tool_results(llm_server.chat_requests[1].body)
    assert "needs the \"revision\"" in refusal["error"]
    assert tool_results(llm_server.chat_requests[2].body)[1]["result"] == "queued"
    [operation] = result.plan.operations
    assert (operation.op, operation.revision, operation.text) == (
        "rewrite", before.revision, fixed)
    assert store.get("user_alice.md").text == before.text  # queued, not written


def test_an_archive_without_a_reason_is_refused_at_the_call(store: MemoryStore,
                                                            llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [tool_calls(("archive_memory", {"file": "project_deploy.md",
                                                        "revision": revision})),
                         answer(EMPTY_PLAN)]
    result = plan(store, llm_server, apply=True)
    [refusal] = tool_results(llm_server.chat_requests[1].body)
    assert "needs a \"reason\"" in refusal["error"] and result.plan.operations == ()


def test_apply_mode_adds_a_plan_in_the_final_text_to_the_queued_ones(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    alice = store.get("user_alice.md")
    deploy = store.get("project_deploy.md").revision
    llm_server.script = [
        tool_calls(("rewrite_memory", {"file": "user_alice.md", "revision": alice.revision,
                                       "text": alice.text + "More.\n", "reason": "r"})),
        answer(archive_plan(deploy))]
    result = plan(store, llm_server, apply=True)
    assert [o.file for o in result.plan.operations] == ["user_alice.md", "project_deploy.md"]


# -- truncation and turns ------------------------------------------------------------

def test_an_answer_cut_twice_then_complete_is_used(store: MemoryStore,
                                                   llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [cut(), cut(), answer(archive_plan(revision))]
    result = plan(store, llm_server)
    assert len(llm_server.chat_requests) == 3 and result.requests == 3
    assert llm_server.chat_requests[1].body["messages"][-1]["content"] == RETRY_PROMPT
    assert not result.truncated and len(result.plan.operations) == 1


def test_an_answer_cut_three_times_ends_truncated_with_what_was_queued(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [
        tool_calls(("archive_memory", {"file": "project_deploy.md", "revision": revision,
                                       "reason": "done"})),
        cut(), cut(), cut()]
    result = plan(store, llm_server, apply=True)
    assert result.truncated and result.requests == 4
    assert [o.file for o in result.plan.operations] == ["project_deploy.md"]
    assert any("cut at the length limit" in note for note in result.plan.notes)


def test_the_run_stops_after_max_turns_with_a_note(store: MemoryStore,
                                                   llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [
        tool_calls(("archive_memory", {"file": "project_deploy.md", "revision": revision,
                                       "reason": "done"})),
        *[tool_calls(("list_memories", {})) for _ in range(5)]]
    result = plan(store, llm_server, apply=True, max_turns=3)
    assert result.requests == 3 and len(llm_server.chat_requests) == 3
    assert len(result.plan.operations) == 1
    assert any("stopped after 3 requests" in note for note in result.notes)


# -- the endpoint fails loudly -------------------------------------------------------

def test_an_unknown_model_fails_before_any_chat_request(store: MemoryStore,
                                                        llm_server: ScriptedLlm) -> None:
    llm_server.models = ["other-model"]
    llm_server.script = [answer(EMPTY_PLAN)]
    with pytest.raises(PlannerFailed, match=r"does not serve the model 'test-model'.*other-model"):
        plan(store, llm_server)
    assert llm_server.chat_requests == []


def test_http_500_is_planner_failed_with_the_servers_message(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    llm_server.script = [Raw(500, b'{"error": {"message": "model not loaded"}}')]
    with pytest.raises(PlannerFailed, match="HTTP 500: model not loaded"):
        plan(store, llm_server)


def test_a_servers_message_is_one_visible_line_of_at_most_200_characters(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    llm_server.script = [Raw(502, b"bad\x1b]0;pwned\x07\ngateway " + b"x" * 500)]
    with pytest.raises(PlannerFailed) as caught:
        plan(store, llm_server)
    message = caught.value.problem.split("HTTP 502: ", 1)[1]
    assert "\x1b" not in message and "\n" not in message and "\\x1b" in message
    assert len(message) <= 200


def test_a_body_that_is_not_json_is_planner_failed(store: MemoryStore,
                                                   llm_server: ScriptedLlm) -> None:
    llm_server.script = [Raw(200, b"<html>hello</html>", "text/html")]
    with pytest.raises(PlannerFailed, match="not an OpenAI-compatible answer: it is not JSON"):
        plan(store, llm_server)


def test_json_of_the_wrong_shape_is_planner_failed(store: MemoryStore,
                                                   llm_server: ScriptedLlm) -> None:
    llm_server.script = [{"choices": []}]
    with pytest.raises(PlannerFailed, match='no "choices"'):
        plan(store, llm_server)


def test_a_refused_connection_is_planner_failed(store: MemoryStore) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = ChatEndpoint(f"http://127.0.0.1:{port}/v1", "test-model", timeout=5)
    with pytest.raises(PlannerFailed, match="cannot reach"):
        plan_with_llm(store, Settings(store.directory, store.state_dir), apply=False,
                      brief="b", endpoint=endpoint)


def test_a_slow_server_is_a_timeout(store: MemoryStore, llm_server: ScriptedLlm) -> None:
    def slow(_: Any) -> dict[str, Any]:
        time.sleep(1)
        return answer(EMPTY_PLAN)
    llm_server.script = [slow]
    endpoint = ChatEndpoint(llm_server.url, "test-model", timeout=0.2)
    with pytest.raises(PlannerFailed, match=r"did not answer within 0\.2 s"):
        plan_with_llm(store, Settings(store.directory, store.state_dir), apply=False,
                      brief="b", endpoint=endpoint)


# -- the key ------------------------------------------------------------------------

def test_the_key_is_sent_as_bearer_and_appears_nowhere_in_the_result(
        store: MemoryStore, llm_server: ScriptedLlm) -> None:
    revision = store.get("project_deploy.md").revision
    llm_server.script = [tool_calls(("list_memories", {})), answer(archive_plan(revision))]
    result = plan(store, llm_server, env={DREAM_LLM_KEY_ENV: KEY})
    assert {r.headers["Authorization"] for r in llm_server.requests} == {f"Bearer {KEY}"}
    assert all(KEY not in json.dumps(r.body) for r in llm_server.requests)
    assert KEY not in repr(result) and KEY not in result.plan.dumps()


def test_a_key_the_server_echoes_is_kept_out_of_the_error(store: MemoryStore,
                                                          llm_server: ScriptedLlm) -> None:
    llm_server.script = [Raw(401, f'{{"error": {{"message": "bad key {KEY}"}}}}'.encode())]
    with pytest.raises(PlannerFailed) as caught:
        plan(store, llm_server, env={DREAM_LLM_KEY_ENV: KEY})
    assert KEY not in str(caught.value) and "HTTP 401: bad key <REDACTED>" in str(caught.value)


def test_a_local_endpoint_needs_no_key(store: MemoryStore, llm_server: ScriptedLlm) -> None:
    llm_server.script = [answer(EMPTY_PLAN)]
    plan(store, llm_server)
    assert all("Authorization" not in r.headers for r in llm_server.requests)


# -- configuration ------------------------------------------------------------------

def test_no_endpoint_configured_names_the_settings(store: MemoryStore) -> None:
    settings = load_settings({}, store.directory, store.state_dir)
    with pytest.raises(PlannerFailed) as caught:
        plan_with_llm(store, settings, apply=False, brief="b", env={})
    for name in ("SAGE_MEM_DREAM_LLM_URL", "SAGE_MEM_DREAM_LLM_MODEL",
                 "dream_llm_url", "dream_llm_model", "settings.json"):
        assert name in str(caught.value)


def test_endpoint_from_reads_the_key_from_its_variable_only(store: MemoryStore) -> None:
    settings = load_settings({"SAGE_MEM_DREAM_LLM_URL": "http://127.0.0.1:8080/v1/",
                              "SAGE_MEM_DREAM_LLM_MODEL": "m"},
                             store.directory, store.state_dir)
    endpoint = endpoint_from(settings, {DREAM_LLM_KEY_ENV: KEY})
    assert (endpoint.base_url, endpoint.model, endpoint.api_key) == (
        "http://127.0.0.1:8080/v1", "m", KEY)
    assert KEY not in repr(endpoint)
    assert endpoint_from(settings, {}).api_key is None


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://host/v1", "127.0.0.1:8080",
                                 "http://"])
def test_only_http_and_https_urls_are_endpoints(url: str) -> None:
    with pytest.raises(PlannerFailed, match="not an http:// or https:// URL"):
        ChatEndpoint(url, "m")
