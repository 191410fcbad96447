"""The HTTP server against slow clients, weak tokens and idle sessions, as a real process."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.http_server import HttpServer, rpc

BODY_TIMEOUT = 1.0
SESSION_IDLE = 1.0
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
INITIALIZE = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}, 0)
STRONG_TOKEN = "0123456789abcdef0123"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    env = {"MCP_MEMORY_HTTP_BODY_TIMEOUT": str(BODY_TIMEOUT), "MCP_MEMORY_HTTP_SESSION_IDLE": str(SESSION_IDLE)}
    with HttpServer(tmp_path_factory.mktemp("hardening"), env=env) as running:
        yield running


def stalled_request(server: HttpServer) -> socket.socket:
    """A connection that sent the headers and 10 of 100 body bytes, then went quiet."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    head = f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    sock.sendall(head.encode() + b'{"jsonrpc"')
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_body_that_stalls_gets_408_and_the_connection_is_closed(server: HttpServer) -> None:
    started = time.monotonic()
    with stalled_request(server) as sock:
        received = read_until_closed(sock)
    waited = time.monotonic() - started
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert error["code"] == -32600 and error["data"] == {"status": 408, "reason": "body_timeout"}
    assert BODY_TIMEOUT <= waited < BODY_TIMEOUT + 5


def test_other_clients_are_served_while_a_body_stalls(server: HttpServer) -> None:
    with stalled_request(server) as sock, server.client() as client:
        answered_at = []
        for n in range(5):
            assert client.post("/rpc", json=rpc("ping", None, n)).json()["result"] == {}
            answered_at.append(time.monotonic())
        assert read_until_closed(sock).startswith(b"HTTP/1.1 408")
        closed_at = time.monotonic()
    assert all(at < closed_at for at in answered_at)


def test_a_session_used_within_the_idle_time_is_kept(server: HttpServer) -> None:
    with server.client() as client:
        session = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).headers["mcp-session-id"]
        for n in range(3):
            time.sleep(SESSION_IDLE / 2)
            response = client.post("/mcp", json=rpc("ping", None, n), headers={**MCP_HEADERS, "mcp-session-id": session})
            assert response.status_code == 200


def test_a_session_idle_too_long_gets_404_like_an_unknown_one(server: HttpServer) -> None:
    with server.client() as client:
        session = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).headers["mcp-session-id"]
        time.sleep(SESSION_IDLE + 0.2)
        headers = {**MCP_HEADERS, "mcp-session-id": session}
        response = client.post("/mcp", json=rpc("ping"), headers=headers)
        assert response.status_code == 404 and response.json()["error"]["data"]["reason"] == "session_not_found"
        assert client.delete("/mcp", headers=headers).status_code == 404
        assert "mcp-session-id" in client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).headers


@pytest.mark.parametrize(
    ("token", "why"),
    [("short-token", "at least 16"), ("a token with spaces in it", "whitespace"), ("   ", "without a token")],
    ids=["too short", "whitespace", "blank"],
)
def test_a_public_bind_with_a_weak_token_refuses_to_start(tmp_path: Path, token: str, why: str) -> None:
    server = HttpServer(tmp_path / "home", host="0.0.0.0", env={"MCP_MEMORY_HTTP_TOKEN": token})
    assert server.process.wait(timeout=30) == 2
    assert why in server.log()
    assert token.strip() == "" or token not in server.log()


def test_a_public_bind_with_a_strong_token_from_the_config_file_starts(tmp_path: Path) -> None:
    config = {"http": {"token": STRONG_TOKEN}}
    with HttpServer(tmp_path / "home", host="0.0.0.0", config=config, token=STRONG_TOKEN) as server, server.client() as client:
        assert client.post("/rpc", json=rpc("ping")).json()["result"] == {}
        assert client.post("/rpc", json=rpc("ping"), headers={"authorization": ""}).status_code == 401


def test_a_blank_environment_token_leaves_the_config_file_token_in_force(tmp_path: Path) -> None:
    config = {"http": {"token": STRONG_TOKEN}}
    env = {"MCP_MEMORY_HTTP_TOKEN": "  "}
    with HttpServer(tmp_path / "home", config=config, env=env, token=STRONG_TOKEN) as server, server.client() as client:
        assert client.post("/rpc", json=rpc("ping")).status_code == 200
        assert client.post("/rpc", json=rpc("ping"), headers={"authorization": "Bearer"}).status_code == 401


def test_a_blank_token_on_loopback_counts_as_none(tmp_path: Path) -> None:
    with HttpServer(tmp_path / "home", config={"http": {"token": " \t "}}) as server, server.client() as client:
        assert client.post("/rpc", json=rpc("ping")).json()["result"] == {}


@pytest.mark.parametrize("name", ["MCP_MEMORY_HTTP_BODY_TIMEOUT", "MCP_MEMORY_HTTP_SESSION_IDLE"])
def test_a_bad_duration_refuses_to_start(tmp_path: Path, name: str) -> None:
    server = HttpServer(tmp_path / "home", env={name: "0"})
    assert server.process.wait(timeout=30) == 2
    assert name in server.log()


def test_connections_whose_headers_never_end_get_408_and_stop_holding_every_place(tmp_path: Path) -> None:
    from local_mcp_memory.entrypoints.http.protocol import HEADERS_SECONDS
    from local_mcp_memory.entrypoints.http.serve import MAX_CONNECTIONS

    with HttpServer(tmp_path / "home") as server, server.client() as client:
        opened = time.monotonic()
        stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(MAX_CONNECTIONS + 4)]
        try:
            for sock in stalled:
                sock.sendall(f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
            busy = client.get("/health")  # every place held
            assert busy.status_code == 503 and busy.headers["content-type"] == "application/json"
            assert busy.json()["error"]["reason"] == "too_many_connections" and busy.headers["retry-after"] == "1"
            received = read_until_closed(stalled[0])
            waited = time.monotonic() - opened
            head, _, body = received.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408") and b"content-type: application/json" in head.lower()
            assert json.loads(body)["error"]["reason"] == "headers_timeout"
            assert HEADERS_SECONDS - 1 <= waited < HEADERS_SECONDS + 10
            deadline = time.monotonic() + 10
            while client.get("/health").status_code != 200:
                assert time.monotonic() < deadline, "the stalled connections still hold every place"
                time.sleep(0.2)
        finally:
            for sock in stalled:
                sock.close()


def test_a_request_beyond_the_places_gets_a_json_503_and_the_places_free_again(tmp_path: Path) -> None:
    from local_mcp_memory.entrypoints.http.serve import MAX_CONNECTIONS

    with HttpServer(tmp_path / "home") as server:
        held = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(MAX_CONNECTIONS - 1)]
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
                body = json.dumps(rpc("ping")).encode()
                sock.sendall(f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                received = read_until_closed(sock)  # answered, then closed
            head, _, answer = received.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503") and b"content-type: application/json" in head.lower()
            error = json.loads(answer)["error"]
            assert (error["status"], error["reason"]) == (503, "too_many_connections") and "retry" in error["message"]
        finally:
            for sock in held:
                sock.close()
        with server.client() as client:
            deadline = time.monotonic() + 10
            while (answer := client.post("/rpc", json=rpc("ping"))).status_code != 200:
                assert time.monotonic() < deadline, "closed connections still hold their places"
                time.sleep(0.2)
            assert answer.json()["result"] == {}
    assert "Exceeded concurrency limit" in server.log()


@pytest.mark.parametrize(
    "raw",
    [b"GARBAGE\r\n\r\n", b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n{}", b"POST /rpc HTTP/1.1\r\nno colon\r\n\r\n"],
    ids=["no request line", "negative length", "header without colon"],
)
def test_bytes_that_are_no_http_request_get_a_json_400_and_the_server_goes_on(server: HttpServer, raw: bytes) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(raw)
        received = read_until_closed(sock)
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["reason"] == "bad_http_request"
    with server.client() as client:
        assert client.post("/rpc", json=rpc("ping")).json()["result"] == {}
