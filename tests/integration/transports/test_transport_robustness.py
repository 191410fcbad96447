"""No bytes kill a transport: the real ``mcp-memory serve`` over stdio and over HTTP answers
each of these with a JSON-RPC error object (``id: null``), serves the next request, and
keeps what it stored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.integration.http_server import HttpServer, rpc
from tests.integration.serve import StdioServer


def request_with(params_json: bytes) -> bytes:
    return b'{"jsonrpc": "2.0", "id": 7, "method": "memory.add_note", "params": ' + params_json + b"}"


# (bytes of one line or body, expected code); none holds a newline
BAD_BYTES: list[tuple[str, bytes, int]] = [
    ("invalid utf-8 in a string", request_with(b'{"projectId": "p", "groupId": "g", "text": "\xc3"}'), -32700),
    ("invalid utf-8 alone", b"\xff\xfe\xfd", -32700),
    ("utf-8 encoded surrogate", request_with(b'{"projectId": "p", "groupId": "g", "text": "\xed\xa0\x80"}'), -32700),
    ("lone surrogate escape", request_with(b'{"projectId": "p", "groupId": "g", "text": "\\udc00"}'), -32700),
    ("huge number", request_with(b'{"projectId": "p", "groupId": "g", "text": "t", "metadata": {"n": 1e400}}'), -32700),
    ("truncated", request_with(b'{"projectId": "p", "groupId": "g", "te'), -32700),
    ("nul bytes", b"\x00" * 64, -32700),
    ("nul inside a string", request_with(b'{"projectId": "p", "groupId": "g", "text": "a\x00b"}'), -32700),
    ("byte order mark", b"\xef\xbb\xbf" + request_with(b'{"projectId": "p", "groupId": "g", "text": "t"}'), -32700),
    ("1000 levels of arrays", b"[" * 1000 + b"]" * 1000, -32600),
    ("100000 open brackets", b"[" * 100_000, -32600),
    ("metadata 1000 levels deep", request_with(b'{"projectId": "p", "groupId": "g", "text": "t", "metadata": ' + b'{"a":' * 1000 + b"1" + b"}" * 1000 + b"}"), -32600),
    ("metadata 300 levels deep", request_with(b'{"projectId": "p", "groupId": "g", "text": "t", "metadata": ' + b'{"a":' * 300 + b"1" + b"}" * 300 + b"}"), -32600),
]
IDS = [case[0] for case in BAD_BYTES]
CASES = [case[1:] for case in BAD_BYTES]
KEPT = {"projectId": "robust", "groupId": "g", "text": "The note that every bad request must leave alone.", "metadata": {"k": [1, {"v": "x"}]}}


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StdioServer, dict]]:
    with StdioServer(tmp_path_factory.mktemp("stdio")) as server:
        added = server.result("memory.add_note", KEPT)
        yield server, server.result("memory.get", {"id": added["id"]})


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, dict]]:
    with HttpServer(tmp_path_factory.mktemp("http")) as server, server.client() as client:
        added = client.post("/rpc", json=rpc("memory.add_note", KEPT)).json()["result"]
        yield server, client.post("/rpc", json=rpc("memory.get", {"id": added["id"]})).json()["result"]


@pytest.mark.parametrize(("line", "code"), CASES, ids=IDS)
def test_a_stdio_line_of_bad_bytes_gets_an_error_and_the_next_line_is_served(stdio: tuple[StdioServer, dict], line: bytes, code: int) -> None:
    server, kept = stdio
    reply = server.send_line(line)
    assert reply == {"jsonrpc": "2.0", "id": None, "error": reply["error"]}
    assert reply["error"]["code"] == code
    assert server.result("memory.get", {"id": kept["id"]}) == kept


def test_a_batch_of_thousands_over_stdio_gets_one_line_with_every_answer(stdio: tuple[StdioServer, dict]) -> None:
    server, kept = stdio
    batch = [rpc("memory.get", {"id": kept["id"]}, n) for n in range(3000)]
    replies = server.send_line(json.dumps(batch).encode())
    assert isinstance(replies, list) and [r["id"] for r in replies] == list(range(3000))
    assert all(r["result"] == kept for r in replies)


def test_the_stdio_server_survives_every_bad_line_and_exits_cleanly(tmp_path_factory: pytest.TempPathFactory) -> None:
    with StdioServer(tmp_path_factory.mktemp("stdio-exit")) as server:
        for line, _ in CASES:
            server.send_line(line)
        assert server.result("ping") == {}
        code, stderr = server.close()
    assert code == 0
    assert "Traceback" not in stderr


@pytest.mark.parametrize(("body", "code"), CASES, ids=IDS)
def test_an_rpc_body_of_bad_bytes_gets_a_json_error_and_the_next_body_is_served(http: tuple[HttpServer, dict], body: bytes, code: int) -> None:
    server, kept = http
    with server.client() as client:
        response = client.post("/rpc", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 200 and response.headers["content-type"] == "application/json"
        assert response.json()["error"]["code"] == code and response.json()["id"] is None
        assert client.post("/rpc", json=rpc("memory.get", {"id": kept["id"]})).json()["result"] == kept


@pytest.mark.parametrize(("body", "code"), CASES, ids=IDS)
def test_an_mcp_body_of_bad_bytes_gets_400_with_a_json_error(http: tuple[HttpServer, dict], body: bytes, code: int) -> None:
    server, _ = http
    with server.client() as client:
        response = client.post("/mcp", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400 and response.headers["content-type"] == "application/json"
        assert response.json()["error"]["code"] == code and response.json()["id"] is None
        assert client.post("/mcp", json=rpc("ping")).json()["result"] == {}


def test_a_batch_of_thousands_over_http_is_answered_in_one_body(http: tuple[HttpServer, dict]) -> None:
    server, kept = http
    batch = [rpc("memory.get", {"id": kept["id"]}, n) for n in range(3000)]
    with server.client() as client:
        replies = client.post("/rpc", json=batch).json()
    assert [r["id"] for r in replies] == list(range(3000))
    assert all(r["result"] == kept for r in replies)


def test_the_http_server_logs_no_traceback_for_bad_bytes(http: tuple[HttpServer, dict]) -> None:
    server, _ = http
    with server.client() as client:
        for body, _ in CASES:
            client.post("/mcp", content=body, headers={"content-type": "application/json"})
        assert client.get("/health").status_code == 200
    assert "Traceback" not in server.log()
    assert server.process.poll() is None


def test_http_error_bodies_are_one_json_value(http: tuple[HttpServer, dict]) -> None:
    server, _ = http
    with httpx.Client(base_url=server.base_url) as client:
        response = client.post("/rpc", content=b"[" * 5000, headers={"content-type": "application/json"})
    assert json.loads(response.content)["error"]["message"].startswith("Invalid request: the message is nested deeper than")
