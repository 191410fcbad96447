"""The ``recall`` prompt, on the shared dispatcher with fakes behind it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.manual_clock import ManualClock
from tests.unit.entrypoints.mcp.dispatch_client import Client


def add(client: Client, text: str, **fields: Any) -> str:
    result = client.tool("memory_add_note", groupId="feature-1", text=text, **fields)
    assert result["isError"] is False, result
    return result["structuredContent"]["id"]


def recall(client: Client, **arguments: Any) -> dict[str, Any]:
    return client.result("prompts/get", {"name": "recall", "arguments": arguments})


def message_text(result: dict[str, Any]) -> str:
    [message] = result["messages"]
    assert message["role"] == "user" and message["content"]["type"] == "text"
    return message["content"]["text"]


def test_recall_is_listed_with_a_required_project_and_an_optional_query(client: Client) -> None:
    [prompt] = client.result("prompts/list")["prompts"]
    assert prompt["name"] == "recall" and prompt["description"]
    assert [(a["name"], a["required"]) for a in prompt["arguments"]] == [("project", True), ("query", False)]


def test_the_prompt_listing_has_one_page_and_refuses_a_cursor(client: Client) -> None:
    assert client.error("prompts/list", {"cursor": "x"})["data"]["field"] == "cursor"


def test_recall_carries_the_projects_session_context(client: Client, project: Path) -> None:
    add(client, "We deploy on Fridays only after the smoke test.")
    client.tool("memory_upsert_global", key="global.project.conventions", value="Small commits, tests first.")
    result = recall(client, project=str(project))
    text = message_text(result)
    assert client.result("memory.context", {"projectId": str(project)})["text"] in text
    assert "Small commits, tests first." in text and "smoke test" in text
    assert str(project) in result["description"]


def test_recall_canonicalizes_the_project(client: Client, project: Path) -> None:
    add(client, "Found through a non-canonical path.")
    assert "Found through a non-canonical path." in message_text(recall(client, project=f"{project}/sub/.."))


def test_recall_with_a_query_adds_the_relevant_note_that_recent_notes_leave_out(
    client: Client, clock: ManualClock, project: Path
) -> None:
    add(client, "The database migrations run with alembic upgrade head.")
    for i in range(25):
        clock.advance(minutes=1)
        add(client, f"Unrelated chore number {i} about the changelog.")
    plain = message_text(recall(client, project=str(project)))
    assert "alembic" not in plain
    with_query = message_text(recall(client, project=str(project), query="how do database migrations run with alembic"))
    assert "alembic upgrade head" in with_query and "database migrations run with alembic" in with_query


def test_recall_of_an_opaque_project_shows_only_its_notes(client: Client) -> None:
    add(client, "Belongs to the opaque project.", projectId="github.com/acme/api")
    add(client, "Belongs to the server's project.")
    text = message_text(recall(client, project="github.com/acme/api"))
    assert "Belongs to the opaque project." in text and "server's project" not in text


def test_an_unknown_prompt_is_invalid_params_naming_the_name(client: Client, project: Path) -> None:
    error = client.error("prompts/get", {"name": "remember", "arguments": {"project": str(project)}})
    assert error["code"] == -32602 and error["data"]["field"] == "name" and "recall" in error["data"]["rule"]


@pytest.mark.parametrize("arguments", [None, {}, {"query": "x"}, {"project": ""}])
def test_a_missing_project_is_invalid_params_naming_it(client: Client, arguments: Any) -> None:
    params: dict[str, Any] = {"name": "recall"}
    if arguments is not None:
        params["arguments"] = arguments
    error = client.error("prompts/get", params)
    assert error["code"] == -32602 and error["data"]["field"] == "arguments.project"
    assert "required" in error["data"]["rule"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"project": 7}, "arguments.project"),
        ({"project": "p", "query": ["x"]}, "arguments.query"),
        ({"project": "p", "topic": "x"}, "arguments.topic"),
        ({"project": "bad\u0000id"}, "arguments.project"),
        ({"project": "p" * 2000}, "arguments.project"),
        ({"project": "p", "query": "q" * 100_000}, "arguments.query"),
    ],
)
def test_a_bad_argument_is_invalid_params_naming_it(client: Client, arguments: dict[str, Any], field: str) -> None:
    error = client.error("prompts/get", {"name": "recall", "arguments": arguments})
    assert error["code"] == -32602 and error["data"]["field"] == field, error


@pytest.mark.parametrize("params", [{}, {"name": 3}, {"arguments": {"project": "p"}}, {"name": "recall", "arguments": ["p"]}])
def test_malformed_get_params_are_invalid_params(client: Client, params: dict[str, Any]) -> None:
    assert client.error("prompts/get", params)["code"] == -32602


def test_get_ignores_meta(client: Client, project: Path) -> None:
    result = client.result("prompts/get", {"name": "recall", "arguments": {"project": str(project)}, "_meta": {"x": 1}})
    assert result["messages"]
