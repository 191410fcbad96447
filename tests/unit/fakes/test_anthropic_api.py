"""The fake Anthropic Messages API answers as the real one does, over real HTTP: the paths
Claude Code did not take in the session tests (a plain answer, count_tokens, an unknown
path) and the streamed events, block by block, that it did."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.anthropic_api import FakeAnthropicApi, text, tool_use

TOOLS = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]


@pytest.fixture
def api() -> Iterator[FakeAnthropicApi]:
    with FakeAnthropicApi(side_answer="A title") as fake:
        yield fake


def post(api: FakeAnthropicApi, path: str, body: dict) -> httpx.Response:
    return httpx.post(f"{api.url}{path}", json=body, headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"})


def events(response: httpx.Response) -> list[dict]:
    found = []
    for chunk in response.text.split("\n\n"):
        if chunk:
            name, data = chunk.split("\n")
            event = json.loads(data.removeprefix("data: "))
            assert name == f"event: {event['type']}"
            found.append(event)
    return found


def test_the_conversation_takes_the_script_in_order_and_repeats_its_last_answer(api: FakeAnthropicApi) -> None:
    call = tool_use("Bash", {"command": "git commit -am x"}, preface="Committing.")
    api.script(call, text("Done."))
    request = {"model": "claude-x", "max_tokens": 100, "tools": TOOLS, "messages": [{"role": "user", "content": "commit"}]}
    first, second, third = (post(api, path, request).json() for path in ("/v1/messages?beta=true", "/v1/messages", "/v1/messages"))
    assert (first["content"], first["stop_reason"]) == (call, "tool_use")
    assert (second["content"], second["stop_reason"]) == (text("Done."), "end_turn")
    assert third["content"] == text("Done.") and first["model"] == "claude-x" and first["type"] == "message"
    assert [(r.path, r.query) for r in api.conversation()] == [("/v1/messages", "beta=true"), ("/v1/messages", ""), ("/v1/messages", "")]


def test_a_streamed_answer_is_the_api_s_event_sequence(api: FakeAnthropicApi) -> None:
    api.script(tool_use("Bash", {"command": "ls"}, preface="Looking."))
    request = {"model": "m", "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": [{"type": "text", "text": "look"}]}]}
    response = post(api, "/v1/messages", request)
    assert response.headers["content-type"].startswith("text/event-stream")
    stream = events(response)
    assert [e["type"] for e in stream] == [
        "message_start",
        "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop",
    ]  # fmt: skip
    assert stream[0]["message"]["content"] == [] and stream[0]["message"]["stop_reason"] is None
    assert stream[2]["delta"] == {"type": "text_delta", "text": "Looking."}
    assert stream[4]["content_block"]["type"] == "tool_use" and stream[4]["content_block"]["input"] == {}
    assert json.loads(stream[5]["delta"]["partial_json"]) == {"command": "ls"}
    assert stream[7]["delta"]["stop_reason"] == "tool_use"


def test_side_requests_count_tokens_and_unknown_paths(api: FakeAnthropicApi) -> None:
    api.script(text("never for a side request"))
    side = post(api, "/v1/messages", {"model": "haiku", "messages": [{"role": "user", "content": "name this session"}]}).json()
    assert side["content"] == text("A title") and api.conversation() == []
    counted = post(api, "/v1/messages/count_tokens", {"model": "m", "system": "s" * 40, "messages": [{"role": "user", "content": "x" * 40}]})
    assert counted.json() == {"input_tokens": 20}
    missing = httpx.get(f"{api.url}/v1/models")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    assert [(r.method, r.path) for r in api.requests][-2:] == [("POST", "/v1/messages/count_tokens"), ("GET", "/v1/models")]


def test_what_reached_the_model_is_every_system_message_and_tool_result_text(api: FakeAnthropicApi) -> None:
    body = {
        "model": "m", "tools": TOOLS,
        "system": [{"type": "text", "text": "You are an agent."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hook context"}, {"type": "text", "text": "the prompt"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "output"}]}]},
        ],
    }  # fmt: skip
    post(api, "/v1/messages", body)
    assert list(api.conversation()[0].texts()) == ["You are an agent.", "hook context", "the prompt", "output"]
