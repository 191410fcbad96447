"""The edge names what the application leaves unnamed: request fields in wire names, the
remedies that are methods of ours, and the default transport this build was made with."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local_mcp_memory.application.errors import DimensionChanged, InvalidRequest, NamespaceStillHome
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.entrypoints.build_defaults import DEFAULT_TRANSPORT
from local_mcp_memory.entrypoints.rpc.errors import DIMENSION_MISMATCH, INVALID_PARAMS, explain, to_rpc_error
from local_mcp_memory.entrypoints.mcp import McpOptions
from local_mcp_memory.entrypoints.server import build_dispatcher


def rpc(services: Services, method: str, params: dict[str, Any]) -> dict[str, Any]:
    dispatcher = build_dispatcher(lambda: services, McpOptions(project="/tmp/edge"))
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.loads(dispatcher.handle(json.dumps(message).encode()))


def test_get_config_reports_the_default_transport_of_the_build(services: Services) -> None:
    config = rpc(services, "memory.get_config", {})["result"]
    assert config["transportDefaults"] == {"defaultTransport": DEFAULT_TRANSPORT}


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("memory.search", {"projectId": "p", "query": "q", "topK": 0}, "topK"),
        ("memory.reembed", {"batchSize": 0}, "batchSize"),
        ("memory.set_config", {"embedder": {"baseUrl": "ftp://host"}}, "embedder.baseUrl"),
        ("memory.set_config", {"embedder": {"apiKey": " "}}, "embedder.apiKey"),
    ],
)
def test_a_refused_request_names_its_field_as_the_caller_wrote_it(
    services: Services, method: str, params: dict[str, Any], field: str
) -> None:
    error = rpc(services, method, params)["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["data"]["field"] == field
    assert error["message"] == f"Invalid params: {field} {error['data']['rule']}"


@pytest.mark.parametrize(
    ("params", "field", "rule"),
    [
        ({"groupId": "a b"}, "groupId", "must match [A-Za-z0-9_-]+"),
        ({"text": "  "}, "text", "must be a non-blank string"),
        ({"createdAt": "10000-01-01T00:00:00Z"}, "createdAt", "must fall within the years 1..9999 once converted to UTC"),
        ({"expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt", "must lie in the future"),
        ({"importance": 2}, "importance", "must be a number in 0..1"),
    ],
)
def test_a_refused_value_is_told_of_its_field_not_of_the_class_that_holds_it(
    services: Services, params: dict[str, Any], field: str, rule: str
) -> None:
    note = {"projectId": "p", "groupId": "g", "text": "a note", **params}
    error = rpc(services, "memory.add_note", note)["error"]
    assert (error["code"], error["data"]["field"], error["data"]["rule"]) == (INVALID_PARAMS, field, rule)
    assert error["message"] == f"Invalid params: {field} {rule} (got {json.dumps(params[field])})"


def test_a_refused_batch_entry_is_told_at_its_path() -> None:
    error = to_rpc_error(InvalidValue("Note", "text must be a non-blank string", " ", "text").at("notes[2]"), sent={"notes": [{}, {}, {"text": " "}]})
    assert error.message == 'Invalid params: notes[2].text must be a non-blank string (got " ")'
    assert error.data == {"field": "notes[2].text", "rule": "must be a non-blank string", "value": " "}


def test_a_refused_request_is_told_in_wire_names_on_the_command_line_too() -> None:
    assert explain(InvalidRequest("from_namespace", "is the current namespace")) == "fromNamespace is the current namespace"


def test_a_namespace_still_home_is_refused_with_the_methods_that_move_its_notes() -> None:
    error = to_rpc_error(NamespaceStillHome("local:m:3", 2))
    assert error.data == {
        "field": "namespace",
        "rule": "is still the home of 2 notes; re-embed them first (memory.reembed or mcp-memory reembed)",
    }


def test_a_changed_dimension_is_answered_with_the_method_that_names_a_new_model() -> None:
    error = to_rpc_error(DimensionChanged("openai", "openai:m", 16, 24))
    assert error.code == DIMENSION_MISMATCH
    assert error.message == (
        "openai:m answered with 24-dimensional vectors, but 16 were recorded for it; nothing was written. "
        "Choose another model name with memory.set_config if the model really changed."
    )


def test_the_application_names_no_transport_method_in_what_it_raises() -> None:
    assert "memory." not in str(DimensionChanged("openai", "openai:m", 16, 24))
    assert "memory." not in str(NamespaceStillHome("local:m:3", 2))

