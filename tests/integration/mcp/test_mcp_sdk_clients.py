"""The official MCP Python SDK, both major versions, over stdio and Streamable HTTP.

Each combination runs one scripted session (``tests/clients/sdk_session.py``) against a
real ``mcp-memory serve`` listing every tool (``--tools all``, or ``MCP_MEMORY_TOOLS=all``
over HTTP) with a fresh home and the real local model, and the tests judge its transcript. SDK 2.x is the project's own; SDK 1.x lives in another venv whose
python ``MCP_SDK1_PYTHON`` names (``scripts/test`` creates it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest

from local_mcp_memory.entrypoints.methods.table import METHODS
from tests.integration.http_server import HttpServer
from tests.integration.serve import MCP_MEMORY, server_env

SESSION_SCRIPT = Path(__file__).resolve().parents[2] / "clients" / "sdk_session.py"
SDK1_ENV = "MCP_SDK1_PYTHON"

def sdk_python(sdk: str) -> str:
    if sdk == "sdk2":
        return sys.executable
    python = os.environ.get(SDK1_ENV)
    if not python:
        pytest.fail(
            f"{SDK1_ENV} is not set. Create the MCP SDK 1.x client venv and point at it:\n"
            "  python3 -m venv .venv-sdk1 && .venv-sdk1/bin/pip install 'mcp<2'\n"
            f"  export {SDK1_ENV}=$PWD/.venv-sdk1/bin/python   (scripts/test does both)"
        )
    return python


def run_session(python: str, transport: str, target: str) -> dict[str, Any]:
    done = subprocess.run(
        [python, "-W", "ignore", str(SESSION_SCRIPT), transport, target],
        capture_output=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    return json.loads(done.stdout)


@pytest.fixture(
    scope="module",
    params=[("sdk2", "stdio"), ("sdk1", "stdio"), ("sdk2", "http"), ("sdk1", "http")],
    ids=lambda p: "-".join(p),
)
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sdk, transport = request.param
    python = sdk_python(sdk)
    home = tmp_path_factory.mktemp(f"{sdk}-{transport}")
    project = home / "project"
    project.mkdir()
    if transport == "stdio":
        target = {
            "command": MCP_MEMORY,
            "args": ["serve", "--project", str(project), "--tools", "all"],
            "env": server_env(home, MCP_MEMORY_LOG_LEVEL="WARNING"),
        }
        transcript = run_session(python, "stdio", json.dumps(target))
        transcript["project"] = os.path.realpath(project)
        return transcript
    with HttpServer(home, env={"MCP_MEMORY_LOG_LEVEL": "WARNING", "MCP_MEMORY_TOOLS": "all"}) as server:
        transcript = run_session(python, "http", f"{server.base_url}/mcp")
    transcript["project"] = os.path.realpath(home)  # the HTTP server runs in its home
    return transcript


def test_the_sdk_negotiates_the_latest_protocol_version(session: dict[str, Any]) -> None:
    assert session["initialize"]["protocolVersion"] == "2025-11-25"
    assert session["initialize"]["serverInfo"]["name"] == "mcp-memory"
    assert "memory_search" in session["initialize"]["instructions"]


def test_ping_is_answered(session: dict[str, Any]) -> None:
    assert session["ping"] is True


def test_every_memory_method_is_listed_as_a_tool(session: dict[str, Any]) -> None:
    assert {t["name"] for t in session["tools"]} == {m.replace(".", "_") for m in METHODS}


def test_listed_schemas_are_self_contained_objects(session: dict[str, Any]) -> None:
    for tool in session["tools"]:
        for schema in (tool["inputSchema"], tool["outputSchema"]):
            assert schema["type"] == "object" and "$ref" not in json.dumps(schema)
            jsonschema.Draft202012Validator.check_schema(schema)


def test_every_listed_tool_is_called_and_succeeds_without_sdk_complaints(session: dict[str, Any]) -> None:
    listed = {t["name"] for t in session["tools"]}
    assert set(session["calls"]) == listed
    for name, call in session["calls"].items():
        assert "sdkError" not in call and call["isError"] is False, (name, call)


def test_every_structured_content_is_valid_and_matches_the_text(session: dict[str, Any]) -> None:
    schemas = {t["name"]: t["outputSchema"] for t in session["tools"]}
    for name, call in session["calls"].items():
        jsonschema.validate(call["structuredContent"], schemas[name])
        assert json.loads(call["text"][0]) == call["structuredContent"], name


def test_a_note_added_without_project_id_is_found_in_the_servers_project(session: dict[str, Any]) -> None:
    calls = session["calls"]
    note_id = calls["memory_add_note"]["structuredContent"]["id"]
    results = calls["memory_search"]["structuredContent"]["results"]
    assert [r["id"] for r in results] == [note_id]
    assert results[0]["projectId"] == session["project"]
    assert calls["memory_get"]["structuredContent"]["text"] == "We lint with ruff."
    assert calls["memory_list_recent"]["structuredContent"]["items"][0]["tags"] == ["tooling", "ci"]


def test_set_config_keeps_the_local_provider(session: dict[str, Any]) -> None:
    namespace = session["calls"]["memory_set_config"]["structuredContent"]["effectiveNamespace"]
    assert namespace.startswith("local:")
    assert session["calls"]["memory_get_config"]["structuredContent"]["embedder"]["provider"] == "local"


def test_a_global_setting_reads_back(session: dict[str, Any]) -> None:
    found = session["calls"]["memory_get_global"]["structuredContent"]
    assert found["found"] is True and found["value"] == "Small commits, tests first."


def test_a_batch_is_stored_and_a_deleted_note_is_gone(session: dict[str, Any]) -> None:
    calls = session["calls"]
    assert len(calls["memory_add_notes"]["structuredContent"]["ids"]) == 2
    assert calls["memory_delete"]["structuredContent"] == {"ok": True}
    assert session["getDeleted"]["isError"] is True


def test_stats_count_what_the_session_stored(session: dict[str, Any]) -> None:
    stats = session["calls"]["memory_stats"]["structuredContent"]
    assert stats["projectId"] == session["project"]
    assert stats["notes"] == 2 and stats["byGroup"] == {"feature-1": 1, "task-7": 1} and stats["globals"] == 1


def test_reembed_and_drop_namespace_have_nothing_to_do_on_one_model(session: dict[str, Any]) -> None:
    calls = session["calls"]
    current = calls["memory_set_config"]["structuredContent"]["effectiveNamespace"]
    assert calls["memory_reembed"]["structuredContent"] == {"ok": True, "namespace": current, "reembedded": 0, "remaining": 0}
    dropped = calls["memory_drop_namespace"]["structuredContent"]
    assert dropped == {"ok": True, "namespace": "ollama:nomic-embed-text:768", "dropped": 0}


def test_bad_arguments_come_back_as_a_tool_error_naming_the_field(session: dict[str, Any]) -> None:
    bad = session["badArguments"]
    assert bad["isError"] is True
    assert "groupId" in bad["text"][0] and "[A-Za-z0-9_-]+" in bad["text"][0]


def test_an_unknown_tool_is_a_protocol_error(session: dict[str, Any]) -> None:
    assert session["unknownTool"]["code"] == -32602


def test_capabilities_declare_resources_and_prompts_without_subscriptions_or_change_notices(session: dict[str, Any]) -> None:
    capabilities = session["initialize"]["capabilities"]
    assert capabilities["resources"] == {} and capabilities["prompts"] == {} and capabilities["tools"] == {}
    assert not {"logging", "completions"} & capabilities.keys()


def test_before_any_note_the_listing_holds_the_projects_context_alone(session: dict[str, Any]) -> None:
    [context] = session["resources"]["resources"]
    assert context["uri"] == "memory://context/" + quote(session["project"], safe="") and context["mimeType"] == "text/markdown"


def test_the_listing_names_the_context_then_the_stored_note(session: dict[str, Any]) -> None:
    calls = session["calls"]
    note_id = calls["memory_add_note"]["structuredContent"]["id"]
    kept = calls["memory_add_notes"]["structuredContent"]["ids"][0]  # the batch's other note was deleted
    listed = session["features"]["listed"]["result"]["resources"]
    expected = [session["resources"]["resources"][0]["uri"], f"memory://notes/{kept}", f"memory://notes/{note_id}"]
    assert [r["uri"] for r in listed] == expected  # the context, then the notes newest first
    assert listed[2]["name"] == "Linting" and listed[2]["mimeType"] == "application/json"


def test_both_templates_are_listed(session: dict[str, Any]) -> None:
    templates = session["features"]["templates"]["result"]["resourceTemplates"]
    assert {t["uriTemplate"] for t in templates} == {"memory://notes/{id}", "memory://context/{project}"}


def test_a_note_reads_as_a_resource_holding_what_memory_get_returns(session: dict[str, Any]) -> None:
    [content] = session["features"]["readNote"]["result"]["contents"]
    assert content["mimeType"] == "application/json"
    note = json.loads(content["text"])
    assert note["text"] == "We lint with ruff." and note["tags"] == ["tooling", "ci"] and note["projectId"] == session["project"]
    assert note == {**session["calls"]["memory_get"]["structuredContent"], "tags": ["tooling", "ci"]}


def test_the_session_context_reads_as_markdown(session: dict[str, Any]) -> None:
    [content] = session["features"]["readContext"]["result"]["contents"]
    assert content["mimeType"] == "text/markdown"
    assert "We lint with ruff." in content["text"] and "Small commits, tests first." in content["text"]


def test_an_unknown_resource_is_error_32002(session: dict[str, Any]) -> None:
    assert session["features"]["readMissing"]["code"] == -32002


def test_the_recall_prompt_is_listed_and_carries_the_context(session: dict[str, Any]) -> None:
    [prompt] = session["features"]["prompts"]["result"]["prompts"]
    assert prompt["name"] == "recall" and [a["name"] for a in prompt["arguments"]] == ["project", "query"]
    assert session["prompts"]["prompts"] == session["features"]["prompts"]["result"]["prompts"]
    [message] = session["features"]["recall"]["result"]["messages"]
    assert message["role"] == "user" and "We lint with ruff." in message["content"]["text"]
    assert "Small commits, tests first." in message["content"]["text"]


def test_an_unknown_prompt_and_a_missing_project_are_invalid_params(session: dict[str, Any]) -> None:
    assert session["features"]["unknownPrompt"]["code"] == -32602
    assert session["features"]["recallWithoutProject"]["code"] == -32602
