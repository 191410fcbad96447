"""/mcp, the MCP Streamable HTTP endpoint: sessions, status codes, headers.

Run twice: against a real ``mcp-memory serve`` (its own MCP methods), and against the
same HTTP app on uvicorn in this process whose dispatcher has stand-in MCP methods, so
that the transport's rules are pinned down independently of the MCP layer.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.fakes.memory_store import InMemoryNoteStore
from local_mcp_memory.entrypoints.composition.compose import LazyServices, compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.entrypoints.rpc.errors import INVALID_PARAMS, RpcError
from local_mcp_memory.entrypoints.http.app import HttpApp
from local_mcp_memory.entrypoints.http.guard import Policy
from local_mcp_memory.entrypoints.http.serve import uvicorn_config
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher
from local_mcp_memory.entrypoints import methods
from tests.integration.http_server import HttpServer, free_port, rpc

MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
INITIALIZE = rpc(
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    0,
)
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _stand_in_initialize(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict) or "protocolVersion" not in params:
        raise RpcError(INVALID_PARAMS, "Invalid params: protocolVersion is required")
    return {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "stand-in", "version": "0"}}


class InProcessServer:
    """``HttpApp`` on uvicorn in a thread, with stand-in MCP methods."""

    def __init__(self, home: Path) -> None:
        services = LazyServices(
            lambda: compose(
                ServerOptions.resolve({}, home / "config.json", home / "data"),
                embedders=HashingEmbedderFactory(),
                store=InMemoryNoteStore(),
                config=InMemoryConfigRepository(),
            )
        )
        routes = {
            **methods.routes(services),
            "initialize": _stand_in_initialize,
            "notifications/initialized": lambda params: None,
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": []},
        }
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._pool = ThreadPoolExecutor(4)
        app = HttpApp(Dispatcher(routes), services, Policy.for_bind("127.0.0.1", self.port, (), None), self._pool)
        self._server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", self.port))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "in-process server did not start"
            time.sleep(0.01)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=30)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._pool.shutdown()


@pytest.fixture(scope="module", params=["subprocess", "in-process"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("mcp")
    if request.param == "subprocess":
        with HttpServer(home) as running:
            yield running
    else:
        running = InProcessServer(home)
        yield running
        running.stop()


@pytest.fixture
def session(server: Any) -> Iterator[tuple[httpx.Client, str]]:
    with server.client() as client:
        response = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert response.status_code == 200, response.text
        yield client, response.headers["mcp-session-id"]


def test_initialize_answers_json_with_a_new_unguessable_session_id(server: Any) -> None:
    with server.client() as client:
        first = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        second = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert first.status_code == 200
    assert first.headers["content-type"] == "application/json"
    assert first.json()["result"]["protocolVersion"]
    ids = {first.headers["mcp-session-id"], second.headers["mcp-session-id"]}
    assert len(ids) == 2
    assert all(len(i) >= 32 and i.isascii() and i.isprintable() for i in ids)


def test_a_failed_initialize_opens_no_session(server: Any) -> None:
    with server.client() as client:
        response = client.post("/mcp", json=rpc("initialize", {"capabilities": 1}, 0), headers=MCP_HEADERS)
    assert "error" in response.json()
    assert "mcp-session-id" not in response.headers


def test_requests_in_a_session_are_answered(session: tuple[httpx.Client, str]) -> None:
    client, session_id = session
    headers = {**MCP_HEADERS, "mcp-session-id": session_id}
    initialized = client.post("/mcp", json=INITIALIZED, headers=headers)
    tools = client.post("/mcp", json=rpc("tools/list", None, 1), headers=headers)
    memory = client.post("/mcp", json=rpc("memory.get_config", None, 2), headers=headers)
    assert initialized.status_code == 202 and initialized.content == b""
    assert tools.status_code == 200 and "tools" in tools.json()["result"]
    assert memory.status_code == 200 and "embedder" in memory.json()["result"]


def test_a_message_of_only_responses_is_accepted_with_202(session: tuple[httpx.Client, str]) -> None:
    client, session_id = session
    headers = {**MCP_HEADERS, "mcp-session-id": session_id}
    response = client.post("/mcp", json=[{"jsonrpc": "2.0", "id": "s1", "result": {}}, INITIALIZED], headers=headers)
    assert response.status_code == 202 and response.content == b""


def test_a_request_without_a_session_id_is_served(server: Any) -> None:
    with server.client() as client:
        response = client.post("/mcp", json=rpc("memory.get_config", None, 1), headers=MCP_HEADERS)
        delete = client.delete("/mcp", headers=MCP_HEADERS)
    assert response.status_code == 200 and "result" in response.json()
    assert "mcp-session-id" not in response.headers
    assert delete.status_code == 400


def test_an_unknown_session_id_gets_404(server: Any) -> None:
    with server.client() as client:
        headers = {**MCP_HEADERS, "mcp-session-id": "not-a-session"}
        response = client.post("/mcp", json=rpc("tools/list", None, 1), headers=headers)
    assert response.status_code == 404
    assert response.json()["error"]["data"]["reason"] == "session_not_found"


def test_delete_ends_the_session(session: tuple[httpx.Client, str]) -> None:
    client, session_id = session
    headers = {**MCP_HEADERS, "mcp-session-id": session_id}
    ended = client.delete("/mcp", headers=headers)
    after = client.post("/mcp", json=rpc("ping", None, 3), headers=headers)
    again = client.delete("/mcp", headers=headers)
    assert ended.status_code == 204
    assert after.status_code == 404
    assert again.status_code == 404


def test_get_is_refused_with_405_since_no_stream_is_offered(server: Any) -> None:
    with server.client() as client:
        response = client.get("/mcp", headers={"accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST, DELETE, OPTIONS"


def test_a_client_that_accepts_only_event_streams_gets_406(server: Any) -> None:
    with server.client() as client:
        response = client.post("/mcp", json=INITIALIZE, headers={"accept": "text/event-stream"})
    assert response.status_code == 406


def test_an_unsupported_protocol_version_in_a_session_gets_400(session: tuple[httpx.Client, str]) -> None:
    client, session_id = session
    headers = {**MCP_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "1999-01-01"}
    response = client.post("/mcp", json=rpc("ping", None, 4), headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["data"]["reason"] == "protocol_version_unsupported"


def test_a_discover_probe_before_initialize_gets_a_json_rpc_error_to_fall_back_on(server: Any) -> None:
    headers = {**MCP_HEADERS, "mcp-protocol-version": "2026-07-28"}
    with server.client() as client:
        response = client.post("/mcp", json=rpc("server/discover", {}, 1), headers=headers)
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32601


def test_mcp_passes_the_same_guard_as_rpc(server: Any) -> None:
    with server.client() as client:
        host = client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "host": "evil.example"})
        origin = client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "origin": "https://evil.example"})
        media = client.post("/mcp", content=b"{}", headers={**MCP_HEADERS, "content-type": "text/plain"})
    assert host.status_code == 403 and origin.status_code == 403
    assert media.status_code == 415


def test_the_official_mcp_client_connects_lists_tools_and_calls_one(tmp_path: Path) -> None:
    from mcp import Client

    async def session(url: str) -> tuple[list[str], Any]:
        async with Client(url) as client:
            tools = await client.list_tools()
            added = await client.call_tool("memory_add_note", {"projectId": "demo", "groupId": "g", "text": "from the SDK"})
            return [tool.name for tool in tools.tools], added

    with HttpServer(tmp_path / "home") as server:
        names, added = asyncio.run(session(f"{server.base_url}/mcp"))
        with server.client() as client:
            note = client.post("/rpc", json=rpc("memory.get", {"id": added.structured_content["id"]})).json()
    assert "memory_search" in names and not added.is_error
    assert note["result"]["text"] == "from the SDK"
