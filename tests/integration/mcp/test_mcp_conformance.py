"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned with the
Node.js 22 it needs in tests/clients/conformance) against a real ``mcp-memory serve
--transport http`` on 127.0.0.1 with a fresh home holding one note and one setting.

Every server scenario the suite lists falls in one of three sets, and a scenario the suite
lists in none of them fails ``test_every_scenario_of_the_suite_is_run_and_judged``:

* ``APPLICABLE``: scenarios that check what any server declaring our capabilities (tools,
  resources, prompts over Streamable HTTP) must do. Each is run; any failed check fails it.
* ``FIXTURE``: scenarios written for the suite's reference server: they call a tool, read a
  resource or get a prompt that only that server has (``test_simple_text``,
  ``test://static-text``, ``test_simple_prompt``, ...). Each is run too, and must end in the
  answer the MCP specification gives for an unknown name (-32602 for a tool or a prompt,
  -32002 for a resource), naming the fixture; anything else fails it.
* ``NOT_DECLARED``: scenarios of capabilities this server does not declare (logging,
  completions, resource subscriptions, requests and notifications sent to the client),
  excluded from what the server claims, with the reason. They are run all the same and
  must end in the refusal the specification asks for: -32601 for a method not served,
  -32602 for the fixture tool they call.

The suite runs once, every scenario (``--suite all``, the pending ones too) in one process;
the tests judge its results. ``-s`` prints which scenario is in which set, and the suite's
summary.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.http_server import HttpServer, rpc

CONFORMANCE = Path(__file__).resolve().parents[2] / "clients" / "conformance"
NODE = CONFORMANCE / "node_modules" / ".bin" / "node"
CLI = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

APPLICABLE = {
    "server-initialize": "initialize and the initialized notification",
    "ping": "ping",
    "tools-list": "tools/list: every tool has a name, a description and an inputSchema",
    "resources-list": "resources/list: every resource has a uri and a name",
    "prompts-list": "prompts/list: every prompt has a name and a description",
    "server-sse-multiple-streams": "concurrent POSTs on one session",
    "server-sse-polling": "a POST answered (the server answers JSON, not an event stream)",
    "dns-rebinding-protection": "a request with a foreign Host or Origin is refused",
}

_UNKNOWN_TOOL = r"MCP error -32602: Unknown tool: {}"
_UNKNOWN_RESOURCE = r"MCP error -32002: Resource not found"
_UNKNOWN_PROMPT = r"MCP error -32602: Invalid params: name must name a prompt"

FIXTURE = {
    "tools-call-simple-text": _UNKNOWN_TOOL.format("test_simple_text"),
    "tools-call-image": _UNKNOWN_TOOL.format("test_image_content"),
    "tools-call-audio": _UNKNOWN_TOOL.format("test_audio_content"),
    "tools-call-embedded-resource": _UNKNOWN_TOOL.format("test_embedded_resource"),
    "tools-call-mixed-content": _UNKNOWN_TOOL.format("test_multiple_content_types"),
    "tools-call-error": _UNKNOWN_TOOL.format("test_error_handling"),
    "json-schema-2020-12": r"Tool 'json_schema_2020_12_tool' not found\. Available tools: memory_",
    "resources-read-text": _UNKNOWN_RESOURCE,
    "resources-read-binary": _UNKNOWN_RESOURCE,
    "resources-templates-read": _UNKNOWN_RESOURCE,
    "prompts-get-simple": _UNKNOWN_PROMPT,
    "prompts-get-with-args": _UNKNOWN_PROMPT,
    "prompts-get-embedded-resource": _UNKNOWN_PROMPT,
    "prompts-get-with-image": _UNKNOWN_PROMPT,
}
"""Scenario -> the error message every failed check of it must match."""

_NOT_SERVED = r"MCP error -32601: Method not found: {}"

NOT_DECLARED = {
    "logging-set-level": ("the logging capability (the server logs to stderr)", _NOT_SERVED.format("logging/setLevel")),
    "tools-call-with-logging": ("the logging capability", _NOT_SERVED.format("logging/setLevel")),
    "completion-complete": ("the completions capability", _NOT_SERVED.format("completion/complete")),
    "resources-subscribe": ("resources.subscribe", _NOT_SERVED.format("resources/subscribe")),
    "resources-unsubscribe": ("resources.subscribe", _NOT_SERVED.format("resources/subscribe")),
    "tools-call-with-progress": (
        "progress notifications: the server opens no stream and answers each request with one JSON response",
        _UNKNOWN_TOOL.format("test_tool_with_progress"),
    ),
    "tools-call-sampling": ("sampling requests to the client, which the server never sends", _UNKNOWN_TOOL.format("test_sampling")),
    "tools-call-elicitation": ("elicitation requests to the client, which the server never sends", _UNKNOWN_TOOL.format("test_elicitation")),
    "elicitation-sep1034-defaults": ("elicitation requests to the client", _UNKNOWN_TOOL.format("test_elicitation_sep1034_defaults")),
    "elicitation-sep1330-enums": ("elicitation requests to the client", _UNKNOWN_TOOL.format("test_elicitation_sep1330_enums")),
}
"""Scenario -> (the capability it needs, which the server does not declare; the error every
failed check of it must match: the server refuses what it does not serve)."""


def conformance(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    if not (NODE.exists() and CLI.exists()):
        pytest.fail(f"{CONFORMANCE}/node_modules is incomplete: run `npm ci --prefix {CONFORMANCE}` (scripts/test does)")
    return subprocess.run([str(NODE), str(CLI), *args], capture_output=True, text=True, timeout=timeout, cwd=CONFORMANCE)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with HttpServer(tmp_path_factory.mktemp("conformance"), env={"MCP_MEMORY_LOG_LEVEL": "WARNING"}) as server:
        with server.client() as client:  # something to list: a note and a setting of the server's project
            project = str(server.home)
            for message in (
                rpc("memory.add_note", {"projectId": project, "groupId": "feature-1", "title": "Linting", "text": "We lint with ruff."}),
                rpc("memory.upsert_global", {"projectId": project, "key": "global.project.conventions", "value": "Small commits."}),
            ):
                assert "result" in client.post("/rpc", json=message).json()
        yield server


_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@pytest.fixture(scope="module")
def results(server: HttpServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every scenario of the suite, run in one process: scenario -> its checks."""
    out = tmp_path_factory.mktemp("conformance-results")
    done = conformance("server", "--url", f"{server.base_url}/mcp", "--suite", "all", "-o", str(out))
    print(done.stdout[done.stdout.find("=== SUMMARY ===") :])
    results = {}
    for checks in out.glob("server-*/checks.json"):
        match = _RESULT_DIR.match(checks.parent.name)
        assert match, checks
        results[match["scenario"]] = json.loads(checks.read_text())
    assert results, done.stdout + done.stderr
    return results


def listed_scenarios() -> set[str]:
    done = conformance("list", "--server")
    assert done.returncode == 0, done.stderr
    return set(re.findall(r"^\s+- (\S+)", done.stdout, re.MULTILINE))


def test_every_scenario_of_the_suite_is_run_and_judged(results: dict[str, list[dict[str, Any]]]) -> None:
    for scenario, what in sorted(APPLICABLE.items()):
        print(f"applicable, every check must pass: {scenario} ({what})")
    for scenario in sorted(FIXTURE):
        print(f"written for the reference server's fixtures, must get the unknown-name error: {scenario}")
    for scenario, (capability, _) in sorted(NOT_DECLARED.items()):
        print(f"excluded, needs {capability}; must be refused: {scenario}")
    judged = APPLICABLE.keys() | FIXTURE.keys() | NOT_DECLARED.keys()
    assert len(judged) == len(APPLICABLE) + len(FIXTURE) + len(NOT_DECLARED)
    listed = listed_scenarios()
    assert listed == judged, f"in no set: {sorted(listed - judged)}; no longer listed: {sorted(judged - listed)}"
    assert results.keys() == listed, f"listed but not run: {sorted(listed - results.keys())}"


@pytest.mark.parametrize("scenario", sorted(APPLICABLE))
def test_an_applicable_scenario_passes_every_check(results: dict[str, list[dict[str, Any]]], scenario: str) -> None:
    checks = results[scenario]
    assert checks
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert not failed, json.dumps(failed, indent=2)


@pytest.mark.parametrize("scenario", sorted(FIXTURE.keys() | NOT_DECLARED.keys()))
def test_a_scenario_for_what_the_server_does_not_have_gets_the_specifications_error(
    results: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    expected = FIXTURE[scenario] if scenario in FIXTURE else NOT_DECLARED[scenario][1]
    checks = results[scenario]
    assert checks
    for check in checks:
        assert check["status"] == "FAILURE" and re.search(expected, check.get("errorMessage", "")), check


def test_the_seeded_note_is_listed_and_reads(results: dict[str, list[dict[str, Any]]], server: HttpServer) -> None:
    listed = results["resources-list"][0]["details"]["resources"]
    assert listed[0].startswith("memory://context/") and listed[1].startswith("memory://notes/")
    with server.client() as client:
        reply = client.post("/mcp", json=rpc("resources/read", {"uri": listed[1]}))
    assert json.loads(reply.json()["result"]["contents"][0]["text"])["text"] == "We lint with ruff."


def test_the_server_survives_the_suite(results: dict[str, list[dict[str, Any]]], server: HttpServer) -> None:
    with server.client() as client:
        assert client.get("/health").status_code == 200
        assert client.post("/mcp", json=rpc("ping")).json()["result"] == {}
    assert server.process.poll() is None
