"""POST /rpc and GET /health on a real server: messages, batches, notifications."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.http_server import HttpServer, rpc

NOTE = {"projectId": "demo", "groupId": "feature-1", "text": "Webhooks are retried five times."}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with HttpServer(tmp_path_factory.mktemp("rpc")) as running:
        yield running


def test_a_single_request_is_answered_like_on_stdio(server: HttpServer) -> None:
    with server.client() as client:
        added = client.post("/rpc", json=rpc("memory.add_note", NOTE, "a"))
        note_id = added.json()["result"]["id"]
        got = client.post("/rpc", json=rpc("memory.get", {"id": note_id}, "b"))
    assert added.status_code == 200 and added.headers["content-type"] == "application/json"
    assert got.json()["id"] == "b"
    assert got.json()["result"]["text"] == NOTE["text"]


def test_a_batch_with_valid_and_invalid_members_answers_each_request(server: HttpServer) -> None:
    batch = [
        rpc("memory.add_note", NOTE, 1),
        rpc("memory.add_note", {"projectId": "demo", "groupId": "bad group", "text": "x"}, 2),
        rpc("memory.nope", {}, 3),
        {"jsonrpc": "2.0", "method": "memory.get_config"},  # a notification: no answer
        42,
        {"jsonrpc": "1.0", "id": 5, "method": "memory.get_config"},
        rpc("memory.get_config", None, 6),
    ]
    with server.client() as client:
        response = client.post("/rpc", json=batch)
    assert response.status_code == 200
    replies = {reply["id"]: reply for reply in response.json() if reply["id"] is not None}
    assert len(response.json()) == 6
    assert "id" in replies[1]["result"]
    assert replies[2]["error"]["code"] == -32602
    assert replies[3]["error"]["code"] == -32601
    assert replies[5]["error"]["code"] == -32600
    assert "embedder" in replies[6]["result"]
    assert [r["error"]["code"] for r in response.json() if r["id"] is None] == [-32600]


def test_a_message_of_only_notifications_gets_204_and_no_body(server: HttpServer) -> None:
    notifications = [{"jsonrpc": "2.0", "method": "memory.get_config"}, {"jsonrpc": "2.0", "method": "memory.nope"}]
    with server.client() as client:
        batch = client.post("/rpc", json=notifications)
        single = client.post("/rpc", json=notifications[0])
    assert batch.status_code == 204 and batch.content == b""
    assert single.status_code == 204 and single.content == b""


def test_a_body_that_is_not_json_gets_a_parse_error(server: HttpServer) -> None:
    with server.client() as client:
        response = client.post("/rpc", content=b'{"jsonrpc": "2.0", ', headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32700


def test_connections_are_kept_alive(server: HttpServer) -> None:
    with server.client() as client:
        for _ in range(3):
            response = client.post("/rpc", json=rpc("memory.get_config"))
            assert response.headers.get("connection") != "close"
    assert response.status_code == 200


def test_health_reports_store_and_embedder(server: HttpServer) -> None:
    with server.client() as client:
        response = client.get("/health")
    body = response.json()
    assert body["status"] == "ok"
    assert body["store"]["type"] == "faiss"
    assert body["embedder"]["provider"] == "local" and body["embedder"]["model"]


def test_health_does_not_load_the_model(tmp_path: Path) -> None:
    with HttpServer(tmp_path / "home", env={"MCP_MEMORY_LOG_LEVEL": "INFO"}) as server:
        with server.client() as client:
            health = client.get("/health").json()
        code = server.stop()
    assert code == 0
    assert health["embedder"]["dim"] is None
    assert "embedder_loaded" not in server.log()
