"""A client of MCP revision 2024-11-05: the TypeScript SDK 1.0.4 (pinned in
tests/clients/node), whose client refuses a server that answers ``initialize`` with any
other revision. Clients built on it (and on other SDKs of that time) still ask for
2024-11-05; the server speaks it over stdio, so they connect, list and call the tools."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.serve import MCP_MEMORY, server_env

NODE_CLIENTS = Path(__file__).resolve().parents[2] / "clients" / "node"
SESSION_SCRIPT = NODE_CLIENTS / "sdk_2024_session.mjs"


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (NODE_CLIENTS / "node_modules" / "mcp-sdk-2024-11-05").is_dir():
        pytest.fail("node or the pinned SDK is missing: run `npm ci --prefix tests/clients/node` (scripts/test does)")
    home = tmp_path_factory.mktemp("sdk-2024")
    project = home / "project"
    project.mkdir()
    target = {"command": MCP_MEMORY, "args": ["serve", "--project", str(project)],
              "env": server_env(home, MCP_MEMORY_LOG_LEVEL="WARNING")}
    done = subprocess.run([node, str(SESSION_SCRIPT), json.dumps(target)], capture_output=True, timeout=180, cwd=NODE_CLIENTS)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    return json.loads(done.stdout)


def test_the_client_connects(transcript: dict[str, Any]) -> None:
    assert "error" not in transcript, transcript.get("error")
    assert transcript["server"]["name"] == "mcp-memory"


def test_the_default_tools_are_listed_and_a_note_is_stored_and_found(transcript: dict[str, Any]) -> None:
    assert {"memory_add_note", "memory_search", "memory_get"} <= set(transcript["tools"])
    assert transcript["added"]["isError"] is False
    note_id = json.loads(transcript["added"]["text"][0])["id"]
    assert transcript["found"]["isError"] is False
    results = json.loads(transcript["found"]["text"][0])["results"]
    assert [r["id"] for r in results] == [note_id]


def test_bad_arguments_are_a_tool_error_naming_the_field(transcript: dict[str, Any]) -> None:
    assert transcript["bad"]["isError"] is True and "text" in transcript["bad"]["text"][0]


def test_resources_and_prompts_are_listed(transcript: dict[str, Any]) -> None:
    assert transcript["resources"] and transcript["resources"][0].startswith("memory://context/")
    assert "recall" in transcript["prompts"]
