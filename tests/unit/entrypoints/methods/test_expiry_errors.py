"""A past expiresAt is refused in the wire's words: its wire path, and the value as it was sent."""

from __future__ import annotations

import json

import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.mcp import McpOptions
from local_mcp_memory.entrypoints.server import build_dispatcher
from tests.unit.steps import add, rpc

PAST = "2001-02-03T04:05:06+02:00"


def _refusal(services: Services, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = rpc(services, method, params)
    assert "result" not in reply, reply
    return reply["error"]


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("memory.add_note", {"projectId": "proj", "groupId": "g", "text": "x", "expiresAt": PAST}, "expiresAt"),
        ("memory.add_notes", {"notes": [{"projectId": "proj", "groupId": "g", "text": "a"},
                                        {"projectId": "proj", "groupId": "g", "text": "b", "expiresAt": PAST}]}, "notes[1].expiresAt"),
    ],
)  # fmt: skip
def test_a_past_expiry_names_its_wire_path_and_the_value_sent(services: Services, method: str, params: dict, field: str) -> None:
    error = _refusal(services, method, params)
    assert error["code"] == -32602
    assert error["data"]["field"] == field
    assert error["data"]["value"] == PAST
    assert f'"{PAST}"' in error["message"] and field in error["message"]
    text = str(error)
    assert "expires_at" not in text and "datetime" not in text


def test_a_past_expiry_in_a_patch_names_patch_expires_at(services: Services) -> None:
    note_id = add(services, "kept").value
    error = _refusal(services, "memory.update", {"id": note_id, "patch": {"expiresAt": PAST}})
    assert (error["code"], error["data"]["field"], error["data"]["value"]) == (-32602, "patch.expiresAt", PAST)
    assert "expires_at" not in str(error) and "datetime" not in str(error)


def test_a_long_refused_value_is_not_echoed_whole(services: Services) -> None:
    error = _refusal(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "x" * 200_000})
    assert error["data"]["field"] == "text"
    assert len(str(error)) < 2_000


def test_an_mcp_tool_call_is_told_the_value_as_sent_too(services: Services) -> None:
    dispatcher = build_dispatcher(lambda: services, McpOptions(project="/tmp/edge"))
    call = {"name": "memory_add_note", "arguments": {"groupId": "g", "text": "x", "expiresAt": PAST}}
    reply = json.loads(dispatcher.handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}).encode()))
    text = reply["result"]["content"][0]["text"]
    assert reply["result"]["isError"] is True
    assert f'"{PAST}"' in text and "expiresAt" in text and "expires_at" not in text and "datetime" not in text
