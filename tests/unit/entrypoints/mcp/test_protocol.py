"""The MCP methods on the shared dispatcher, with in-memory fakes behind them."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.mcp import TextBounds
from local_mcp_memory.entrypoints.mcp.protocol import LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS, SERVER_VERSION
from local_mcp_memory.entrypoints.mcp.schemas import compact, self_contained
from local_mcp_memory.entrypoints.mcp.tools import DEFAULT_TOOLS
from local_mcp_memory.entrypoints.methods.table import METHODS
from tests.unit.entrypoints.mcp.dispatch_client import Client


def _ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, result
    return result["structuredContent"]


def _walk(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [node, *[n for v in node.values() for n in _walk(v)]]
    if isinstance(node, list):
        return [n for v in node for n in _walk(v)]
    return []


# ---------------------------------------------------------------- lifecycle


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_initialize_answers_with_the_clients_version_when_supported(client: Client, version: str) -> None:
    result = client.result("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    assert result["protocolVersion"] == version


def test_initialize_answers_with_our_latest_version_otherwise(client: Client) -> None:
    result = client.result("initialize", {"protocolVersion": "2024-10-07", "capabilities": {}})
    assert result["protocolVersion"] == LATEST_PROTOCOL_VERSION == "2025-11-25"


def test_initialize_names_the_server_its_capabilities_and_instructions(client: Client) -> None:
    result = client.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    assert result["serverInfo"] == {"name": "mcp-memory", "version": SERVER_VERSION}
    assert result["capabilities"] == {"tools": {}, "resources": {}, "prompts": {}}
    assert "memory_search" in result["instructions"] and "memory_add_note" in result["instructions"]


def test_server_version_is_the_packages_version() -> None:
    assert SERVER_VERSION == importlib.metadata.version("local-mcp-memory")


def test_initialize_without_a_protocol_version_is_invalid_params(client: Client) -> None:
    reply = client.call("initialize", {"capabilities": {}})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["field"] == "protocolVersion"


@pytest.mark.parametrize("method", ["server/discover", "sampling/createMessage", "memory.nope"])
def test_unknown_methods_are_method_not_found_at_once(client: Client, method: str) -> None:
    assert client.call(method, {})["error"]["code"] == -32601


def test_the_initialized_notification_gets_no_reply(client: Client) -> None:
    assert client.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_tools_work_without_initialize_first(client: Client) -> None:
    assert client.tools()
    assert _ok(client.tool("memory_get_config"))["embedder"]["provider"]


def test_ping_answers_an_empty_object(client: Client) -> None:
    assert client.result("ping") == {}


# ---------------------------------------------------------------- tools/list


def test_every_memory_method_is_a_tool_named_with_underscores(client: Client) -> None:
    assert set(client.tools()) == {name.replace(".", "_") for name in METHODS}


def test_by_default_the_tools_an_agent_needs_are_listed_in_at_most_ten_tools_and_15_kb(services: Services, project: Path) -> None:
    default = Client(services, project, tools=DEFAULT_TOOLS)
    listing = default.result("tools/list")
    assert {t["name"] for t in listing["tools"]} == DEFAULT_TOOLS == {
        "memory_search", "memory_add_note", "memory_get", "memory_update", "memory_delete",
        "memory_list_recent", "memory_related", "memory_link",
    }  # fmt: skip
    assert len(listing["tools"]) <= 10
    assert len(msgspec.json.encode(listing)) <= 15_000
    instructions = default.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["instructions"]
    assert len(instructions) <= 1_200
    assert set(re.findall(r"memory_\w+", instructions)) <= DEFAULT_TOOLS  # it names no tool the agent cannot see


def test_a_tool_not_listed_is_unknown_but_its_method_stays(services: Services, project: Path) -> None:
    default = Client(services, project, tools=DEFAULT_TOOLS)
    error = default.call("tools/call", {"name": "memory_stats", "arguments": {}})["error"]
    assert error["code"] == -32602 and error["data"]["field"] == "name" and "memory_search" in error["data"]["rule"]
    assert default.result("memory.stats", {})["notes"] == 0


def test_compact_schemas_say_what_the_generated_ones_say() -> None:
    """Every value the long form accepts the compact one accepts, and the other way round."""
    samples = [None, "x", "", 3, -1, 2.5, True, [], ["a"], [1], {}, {"a": 1}, "hybrid", "keyword", "nope"]
    for method in METHODS.values():
        long, short = self_contained(method.params), compact(self_contained(method.params))
        for name, prop in long.get("properties", {}).items():
            for sample in samples:
                assert jsonschema.Draft202012Validator(prop).is_valid(sample) == jsonschema.Draft202012Validator(short["properties"][name]).is_valid(sample), (method.name, name, sample)
        assert short.get("required") == long.get("required")


def test_every_method_has_a_title_and_a_description_written_for_the_agent() -> None:
    assert all(method.title.strip() and method.description.strip() for method in METHODS.values())


def test_tool_names_match_the_mcp_pattern(client: Client) -> None:
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in client.tools())


def test_schemas_are_self_contained_json_schema_objects(client: Client) -> None:
    for tool in client.tools().values():
        for schema in (tool["inputSchema"], tool["outputSchema"]):
            assert schema["type"] == "object"
            assert not any("$ref" in node or "$defs" in node for node in _walk(schema)), tool["name"]
            jsonschema.Draft202012Validator.check_schema(schema)


def test_tools_may_leave_out_project_id_but_memory_methods_may_not(client: Client) -> None:
    tools = client.tools()
    assert "projectId" in tools["memory_search"]["inputSchema"]["properties"]
    assert "projectId" not in tools["memory_search"]["inputSchema"]["required"]
    assert "projectId" not in tools["memory_add_notes"]["inputSchema"]["properties"]["notes"]["items"]["required"]
    assert client.call("memory.search", {"query": "x"})["error"]["data"]["field"] == "projectId"


def test_common_fields_carry_descriptions(client: Client) -> None:
    properties = client.tools()["memory_add_note"]["inputSchema"]["properties"]
    assert "feature-" in properties["groupId"]["description"]
    assert "Omit it" in properties["projectId"]["description"]


def test_global_tools_list_the_standard_keys(client: Client) -> None:
    tools = client.tools()
    for name in ("memory_upsert_global", "memory_get_global"):
        for key in ("global.memory.embedder.provider", "global.memory.embedder.model", "global.memory.groupDefaults", "global.project.conventions"):
            assert key in tools[name]["description"]


def test_annotations_follow_the_method_hints(client: Client) -> None:
    tools = client.tools()
    search, add, delete = (tools[n]["annotations"] for n in ("memory_search", "memory_add_note", "memory_delete"))
    assert search["readOnlyHint"] is True and search["destructiveHint"] is False and search["idempotentHint"] is True
    assert add["readOnlyHint"] is False and add["idempotentHint"] is False
    assert delete["destructiveHint"] is True
    assert all(t["annotations"]["openWorldHint"] is False and t["title"] for t in tools.values())


class Node(msgspec.Struct):
    children: list[Node]


def test_schema_inlining_refuses_recursive_structs() -> None:
    with pytest.raises(ValueError, match="recursive"):
        self_contained(Node)


# ---------------------------------------------------------------- tools/call


def test_a_call_without_project_id_uses_the_servers_project(client: Client, project: Path) -> None:
    added = _ok(client.tool("memory_add_note", groupId="global", text="We lint with ruff."))
    note = _ok(client.tool("memory_get", id=added["id"]))
    assert note["projectId"] == os.path.realpath(project)
    found = _ok(client.tool("memory_search", query="linting"))
    assert [r["id"] for r in found["results"]] == [added["id"]]


def test_an_explicit_project_id_wins(client: Client, tmp_path: Path) -> None:
    _ok(client.tool("memory_add_note", projectId="other-app", groupId="global", text="Other project."))
    assert _ok(client.tool("memory_search", query="project"))["results"] == []
    assert len(_ok(client.tool("memory_search", projectId="other-app", query="project"))["results"]) == 1


def test_batch_items_without_project_id_use_the_servers_project(client: Client, project: Path) -> None:
    added = _ok(client.tool("memory_add_notes", notes=[{"groupId": "task-1", "text": "a"}, {"groupId": "task-1", "text": "b"}]))
    assert len(added["ids"]) == 2
    assert all(_ok(client.tool("memory_get", id=i))["projectId"] == os.path.realpath(project) for i in added["ids"])


def test_every_tools_structured_content_matches_its_output_schema_and_the_text_block(client: Client) -> None:
    tools = client.tools()
    added = _ok(client.tool("memory_add_note", groupId="feature-1", text="Cache invalidation rule.", tags=["decision"]))
    batch = _ok(client.tool("memory_add_notes", notes=[{"groupId": "task-7", "text": "First."}, {"groupId": "task-7", "text": "Second."}]))
    calls = [
        ("memory_add_note", {"groupId": "global", "text": "x"}),
        ("memory_add_notes", {"notes": [{"groupId": "task-8", "text": "y", "title": "Y", "metadata": {"from": "test"}}]}),
        ("memory_search", {"query": "cache", "mode": "semantic"}),
        ("memory_get", {"id": added["id"]}),
        ("memory_update", {"id": added["id"], "patch": {"tags": ["decision", "cache"]}}),
        ("memory_list_recent", {"limit": 5}),
        ("memory_context", {"query": "cache", "limit": 5}),
        ("memory_get_config", {}),
        ("memory_upsert_global", {"key": "global.project.conventions", "value": "Small commits."}),
        ("memory_get_global", {"key": "global.project.conventions"}),
        ("memory_link", {"fromId": batch["ids"][0], "toId": added["id"], "relation": "relates_to"}),
        ("memory_related", {"id": added["id"]}),
        ("memory_unlink", {"fromId": batch["ids"][0], "toId": added["id"], "relation": "relates_to"}),
        ("memory_delete", {"id": batch["ids"][1]}),
        ("memory_stats", {}),
        ("memory_set_config", {"embedder": {"provider": "local", "model": "another-model"}}),
        ("memory_reembed", {}),
        ("memory_drop_namespace", {"namespace": added["namespace"]}),
    ]
    assert {name for name, _ in calls} == set(tools)  # a new tool needs a call here
    for name, arguments in calls:
        result = client.tool(name, **arguments)
        structured = _ok(result)
        jsonschema.validate(structured, tools[name]["outputSchema"])
        assert [block["type"] for block in result["content"]] == ["text"]
        assert json.loads(result["content"][0]["text"]) == structured, name
        assert "truncated" not in structured, name


def test_a_model_change_then_reembed_then_drop_moves_every_note(client: Client) -> None:
    old = _ok(client.tool("memory_add_note", groupId="global", text="Kept across models."))["namespace"]
    new = _ok(client.tool("memory_set_config", embedder={"provider": "local", "model": "another-model"}))["effectiveNamespace"]
    assert new != old
    assert _ok(client.tool("memory_reembed")) == {"ok": True, "namespace": new, "reembedded": 1, "remaining": 0}
    assert _ok(client.tool("memory_drop_namespace", namespace=old)) == {"ok": True, "namespace": old, "dropped": 1}
    assert _ok(client.tool("memory_stats"))["byNamespace"] == {new: 1}


def test_a_deleted_note_is_gone(client: Client) -> None:
    added = _ok(client.tool("memory_add_note", groupId="global", text="Wrong."))
    assert _ok(client.tool("memory_delete", id=added["id"])) == {"ok": True}
    assert client.tool("memory_get", id=added["id"])["isError"] is True


def test_bad_arguments_are_a_tool_error_naming_the_field_and_rule(client: Client) -> None:
    result = client.tool("memory_add_note", groupId="no spaces", text="x")
    assert result["isError"] is True
    message = result["content"][0]["text"]
    assert "groupId" in message and "[A-Za-z0-9_-]+" in message
    assert "structuredContent" not in result


def test_a_wrong_type_is_a_tool_error_naming_the_field(client: Client) -> None:
    result = client.tool("memory_search", query="x", topK="five")
    assert result["isError"] is True and "topK" in result["content"][0]["text"]


def test_an_unknown_argument_is_a_tool_error(client: Client) -> None:
    result = client.tool("memory_search", query="x", top_k=3)
    assert result["isError"] is True and "top_k" in result["content"][0]["text"]


def test_a_missing_note_is_a_tool_error_with_the_id(client: Client) -> None:
    missing = "0b7a4c1e-0000-4000-8000-000000000000"
    result = client.tool("memory_get", id=missing)
    assert result["isError"] is True and missing in result["content"][0]["text"]


def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(client: Client) -> None:
    reply = client.call("tools/call", {"name": "memory.search", "arguments": {}})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["field"] == "name"


@pytest.mark.parametrize("params", [{}, {"name": "memory_search", "arguments": [1]}, {"name": 3}])
def test_malformed_call_params_are_a_json_rpc_invalid_params_error(client: Client, params: Any) -> None:
    assert client.call("tools/call", params)["error"]["code"] == -32602


def test_call_meta_is_ignored(client: Client) -> None:
    reply = client.call("tools/call", {"name": "memory_get_config", "arguments": {}, "_meta": {"progressToken": 1}})
    assert reply["result"]["isError"] is False


# ---------------------------------------------------------------- bounded output


def test_long_texts_are_cut_in_search_results_with_a_pointer_to_memory_get(services: Services, project: Path) -> None:
    client = Client(services, project, TextBounds(note_chars=100))
    long_text = "alpha " * 100
    added = _ok(client.tool("memory_add_note", groupId="global", text=long_text))
    tools = client.tools()
    for name, arguments, key in (("memory_search", {"query": "alpha"}, "results"), ("memory_list_recent", {}, "items")):
        structured = _ok(client.tool(name, **arguments))
        jsonschema.validate(structured, tools[name]["outputSchema"])
        text = structured[key][0]["text"]
        assert text.startswith(long_text[:100]) and len(text) < len(long_text)
        assert "memory_get" in text and added["id"] in text
    assert _ok(client.tool("memory_get", id=added["id"]))["text"] == long_text


def test_memory_get_cuts_only_beyond_its_larger_bound(services: Services, project: Path) -> None:
    client = Client(services, project, TextBounds(note_chars=10, whole_chars=50))
    added = _ok(client.tool("memory_add_note", groupId="global", text="b" * 80))
    text = _ok(client.tool("memory_get", id=added["id"]))["text"]
    assert text.startswith("b" * 50) and not text.startswith("b" * 51) and "30 of 80 characters cut" in text


def test_the_raw_memory_methods_are_never_cut(services: Services, project: Path) -> None:
    client = Client(services, project, TextBounds(note_chars=10))
    added = _ok(client.tool("memory_add_note", groupId="global", text="c" * 500))
    assert client.result("memory.get", {"id": added["id"]})["text"] == "c" * 500
