"""memory.context over JSON-RPC: the page, its items as note objects, and refusals at their field."""

from __future__ import annotations

from typing import Any

import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.note import Tags
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import add, rpc


def test_memory_context_answers_the_namespace_the_page_and_the_notes_it_shows(
    services: Services, clock: ManualClock
) -> None:
    rpc(services, "memory.upsert_global", {"projectId": "proj", "key": "global.project.conventions", "value": {"tabs": False}})
    first = add(services, "Use UTC everywhere.", title="Time", tags=Tags(("convention",)))
    clock.advance(minutes=1)
    second = add(services, "The cache is invalidated on deploy.", group="task-7")
    result = rpc(services, "memory.context", {"projectId": "proj", "query": "time zones", "limit": 2})["result"]
    assert set(result) == {"namespace", "text", "items"}
    assert result["namespace"] == "local:all-MiniLM-L6-v2:64"
    assert '- global.project.conventions: {"tabs":false}' in result["text"]
    assert [item["id"] for item in result["items"]] == [second.value, first.value]
    item = result["items"][1]
    assert (item["title"], item["tags"], item["groupId"], item["expiresAt"]) == ("Time", ["convention"], "feature-1", None)
    assert item["namespace"] == result["namespace"] and item["projectId"] == "proj"


def test_memory_context_of_an_empty_project_is_the_header_alone(services: Services) -> None:
    result = rpc(services, "memory.context", {"projectId": "nothing-here"})["result"]
    assert (result["text"], result["items"]) == ("# Project memory: nothing-here\n", [])


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"projectId": "proj", "limit": 0}, "limit"),
        ({"projectId": "proj", "limit": 101}, "limit"),
        ({"projectId": "proj", "limit": "5"}, "limit"),
        ({"projectId": "proj", "limit": True}, "limit"),
        ({"projectId": "proj", "query": ""}, "query"),
        ({"projectId": "proj", "query": 7}, "query"),
        ({"projectId": "proj", "groupId": "a b"}, "groupId"),
        ({"projectId": ""}, "projectId"),
        ({"projectId": "proj", "topK": 3}, "topK"),
        ({}, "projectId"),
    ],
)
def test_memory_context_refuses_bad_params_at_their_field(services: Services, params: dict[str, Any], field: str) -> None:
    error = rpc(services, "memory.context", params)["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, field)
