"""stdio and HTTP refuse the same too-large metadata with the same -32602 naming the field
and the rule, and store nothing; a value within the limit reads back after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.domain.json_values import MAX_CHARS
from tests.integration.http_server import HttpServer, rpc
from tests.integration.serve import StdioServer
from tests.postgres_server import postgres, postgres_url  # noqa: F401

PROJECT = "limits-app"
OVER = {"blob": "m" * (MAX_CHARS + 1)}
WITHIN = {"blob": "m" * (MAX_CHARS - 11)}  # {"blob":"…"} is 11 characters around the string


def note(text: str, metadata: object) -> dict[str, object]:
    return {"projectId": PROJECT, "groupId": "g", "text": text, "metadata": metadata}


def assert_refused_at_metadata(reply: dict) -> None:
    assert "result" not in reply
    error = reply["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "metadata")
    assert f"at most {MAX_CHARS:,} characters" in error["data"]["rule"]
    assert len(error["message"]) < 1_000


@pytest.fixture(params=["faiss", "postgresql"])
def store(request: pytest.FixtureRequest) -> list[str]:
    return [] if request.param == "faiss" else ["--store", request.getfixturevalue("postgres_url")]


def test_stdio_refuses_metadata_over_the_limit_even_far_over_it(tmp_path: Path, store: list[str]) -> None:
    with StdioServer(tmp_path, *store) as server:
        past = server.call("memory.add_note", {**note("past", None), "expiresAt": "2001-01-01T00:00:00Z"})
        assert past["error"]["data"] == {"field": "expiresAt", "rule": "must lie in the future", "value": "2001-01-01T00:00:00Z"}
        assert_refused_at_metadata(server.call("memory.add_note", note("over", OVER)))
        assert_refused_at_metadata(server.call("memory.add_note", note("far over", {"blob": "m" * 15_000_000})))
        kept = server.result("memory.add_note", note("within", WITHIN))["id"]
        assert server.result("memory.list_recent", {"projectId": PROJECT})["items"][0]["id"] == kept
    with StdioServer(tmp_path, *store) as server:
        (item,) = server.result("memory.list_recent", {"projectId": PROJECT})["items"]
        assert item["metadata"] == WITHIN


def test_http_refuses_metadata_over_the_limit_as_stdio_does(tmp_path: Path) -> None:
    server = HttpServer(tmp_path)
    try:
        server.wait_listening()
        with server.client() as client:
            assert_refused_at_metadata(client.post("/rpc", json=rpc("memory.add_note", note("over", OVER))).json())
            listed = client.post("/rpc", json=rpc("memory.list_recent", {"projectId": PROJECT})).json()
        assert listed["result"]["items"] == []
    finally:
        assert server.stop() == 0, server.log()
