"""Every bad line gets the right error, the server keeps serving, stored notes stay intact."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.serve import MCP_MEMORY, StdioServer, server_env

UNKNOWN_ID = "0b7a4c1e-1111-4222-8333-444455556666"


def req(method: str, params: object = None, request_id: object = 1) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


ADD = {"projectId": "proj", "groupId": "g", "text": "t"}
NESTED_65: dict = {}
for _ in range(64):
    NESTED_65 = {"a": NESTED_65}

# (line, expected code, expected data.field or None)
MATRIX: list[tuple[str, bytes, int, str | None]] = [
    ("malformed json", b'{"jsonrpc": "2.0", "id": 1, "method": "memory.get"', -32700, None),
    ("not an object", b'"hello"', -32600, None),
    ("wrong version", b'{"jsonrpc": "1.0", "id": 1, "method": "memory.get"}', -32600, None),
    ("unknown method", req("memory.nope"), -32601, None),
    ("positional params", req("memory.get", ["x"]), -32602, None),
    ("missing projectId", req("memory.search", {"query": "q"}), -32602, "projectId"),
    ("missing text", req("memory.add_note", {"projectId": "p", "groupId": "g"}), -32602, "text"),
    ("text wrong type", req("memory.add_note", {**ADD, "text": 5}), -32602, "text"),
    ("blank text", req("memory.add_note", {**ADD, "text": "  "}), -32602, "text"),
    ("unknown field", req("memory.add_note", {**ADD, "colour": "red"}), -32602, "colour"),
    ("bad groupId", req("memory.add_note", {**ADD, "groupId": "a b"}), -32602, "groupId"),
    ("empty groupId", req("memory.add_note", {**ADD, "groupId": ""}), -32602, "groupId"),
    ("tags not strings", req("memory.add_note", {**ADD, "tags": [1]}), -32602, "tags[0]"),
    ("metadata not object", req("memory.add_note", {**ADD, "metadata": [1]}), -32602, "metadata"),
    ("bad createdAt", req("memory.add_note", {**ADD, "createdAt": "yesterday"}), -32602, "createdAt"),
    ("naive createdAt", req("memory.add_note", {**ADD, "createdAt": "2024-01-15T10:30:00"}), -32602, "createdAt"),
    ("topK zero", req("memory.search", {"projectId": "p", "query": "q", "topK": 0}), -32602, "topK"),
    ("topK too big", req("memory.search", {"projectId": "p", "query": "q", "topK": 1000}), -32602, "topK"),
    ("topK float", req("memory.search", {"projectId": "p", "query": "q", "topK": 2.5}), -32602, "topK"),
    ("since after until", req("memory.search", {"projectId": "p", "query": "q", "since": "2025-01-01T00:00:00Z", "until": "2024-01-01T00:00:00Z"}), -32602, "since"),
    ("bad until", req("memory.search", {"projectId": "p", "query": "q", "until": "2024-99-01"}), -32602, "until"),
    ("limit too big", req("memory.list_recent", {"projectId": "p", "limit": 100000}), -32602, "limit"),
    ("kv key without prefix", req("memory.upsert_global", {"projectId": "p", "key": "memory.x", "value": 1}), -32602, "key"),
    ("kv get key without prefix", req("memory.get_global", {"projectId": "p", "key": "x"}), -32602, "key"),
    ("unknown id get", req("memory.get", {"id": UNKNOWN_ID}), -32004, None),
    ("unknown id update", req("memory.update", {"id": UNKNOWN_ID, "patch": {"title": "x"}}), -32004, None),
    ("not a uuid", req("memory.get", {"id": "nope"}), -32602, "id"),
    ("empty patch", req("memory.update", {"id": UNKNOWN_ID, "patch": {}}), -32602, "patch"),
    ("bad provider", req("memory.set_config", {"embedder": {"provider": "cohere"}}), -32602, "embedder.provider"),
    ("project with control chars", req("memory.search", {"projectId": "a\u0001b", "query": "q"}), -32602, "projectId"),
    ("createdAt before year 1 in UTC", req("memory.add_note", {**ADD, "createdAt": "0001-01-01T00:00:00+01:00"}), -32602, "createdAt"),
    ("createdAt after year 9999 in UTC", req("memory.add_note", {**ADD, "createdAt": "9999-12-31T23:30:00-01:00"}), -32602, "createdAt"),
    ("metadata nested 65 levels", req("memory.add_note", {**ADD, "metadata": NESTED_65}), -32602, "metadata"),
    ("global value nested 65 levels", req("memory.upsert_global", {"projectId": "p", "key": "global.k", "value": [NESTED_65]}), -32602, "value"),
    ("title too long", req("memory.add_note", {**ADD, "title": "t" * 1001}), -32602, "title"),
    ("source too long", req("memory.add_note", {**ADD, "source": "s" * 1001}), -32602, "source"),
    ("batch entry date", req("memory.add_notes", {"notes": [ADD, {**ADD, "createdAt": "0000-01-01"}]}), -32602, "notes[1].createdAt"),
    ("batch entry blank text", req("memory.add_notes", {"notes": [ADD, ADD, {**ADD, "text": " "}]}), -32602, "notes[2].text"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with StdioServer(tmp_path_factory.mktemp("home")) as running:
        yield running


@pytest.fixture(scope="module")
def stored(server: StdioServer) -> dict:
    added = server.result("memory.add_note", {"projectId": "proj", "groupId": "g", "text": "the note that must survive", "tags": ["keep"]})
    return server.result("memory.get", {"id": added["id"]})


@pytest.mark.parametrize(("line", "code", "field"), [m[1:] for m in MATRIX], ids=[m[0] for m in MATRIX])
def test_bad_input_gets_the_right_error(server: StdioServer, stored: dict, line: bytes, code: int, field: str | None) -> None:
    reply = server.send_line(line)
    assert "result" not in reply
    assert reply["error"]["code"] == code, reply
    if field is not None:
        assert reply["error"]["data"]["field"] == field, reply
        assert reply["error"]["data"]["rule"]
    assert server.result("memory.get", {"id": stored["id"]}) == stored


def test_an_unknown_id_error_names_the_id(server: StdioServer) -> None:
    reply = server.call("memory.get", {"id": UNKNOWN_ID})
    assert reply["error"]["data"] == {"id": UNKNOWN_ID}


def test_after_the_matrix_the_store_is_intact_and_serving(server: StdioServer, stored: dict) -> None:
    recent = server.result("memory.list_recent", {"projectId": "proj"})
    assert [item["id"] for item in recent["items"]] == [stored["id"]]
    found = server.result("memory.search", {"projectId": "proj", "query": "note that must survive"})
    assert found["results"][0]["id"] == stored["id"]


def test_a_notification_gets_no_line_and_a_batch_gets_one(server: StdioServer) -> None:
    batch = b"[" + req("memory.get_config", request_id="a") + b"," + b'{"jsonrpc":"2.0","method":"memory.get_config"}' + b"," + req("memory.nope", request_id=None) + b"]"
    replies = server.send_line(b'{"jsonrpc":"2.0","method":"memory.get_config"}\n' + batch)
    assert isinstance(replies, list)
    assert [r["id"] for r in replies] == ["a", None]
    assert replies[1]["error"]["code"] == -32601


def test_a_note_dated_year_999_reads_back_after_a_restart_and_exports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with StdioServer(home) as first:
        added = first.result("memory.add_note", {**ADD, "createdAt": "0999-12-31T00:00:00Z"})
    with StdioServer(home) as second:
        assert second.result("memory.get", {"id": added["id"]})["createdAt"] == "0999-12-31T00:00:00Z"
        assert second.result("memory.list_recent", {"projectId": "proj"})["items"][0]["id"] == added["id"]
    exported = subprocess.run([MCP_MEMORY, "export"], env=server_env(home), capture_output=True, timeout=60)
    assert exported.returncode == 0, exported.stderr
    assert b'"createdAt":"0999-12-31T00:00:00Z"' in exported.stdout
