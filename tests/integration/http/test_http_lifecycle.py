"""Starting and stopping the HTTP server: refusals at start, no lost write at SIGTERM."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey
from local_mcp_memory.domain.note import GlobalEntry
from tests.integration.http_server import HttpServer, rpc

WRITERS = 8


def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "home", host="0.0.0.0")
    code = server.process.wait(timeout=30)
    assert code == 2
    assert "without a token" in server.log()
    assert "MCP_MEMORY_HTTP_TOKEN" in server.log()


def test_a_bad_body_limit_refuses_to_start(tmp_path: Path) -> None:
    server = HttpServer(tmp_path / "home", env={"MCP_MEMORY_HTTP_MAX_BODY": "lots"})
    assert server.process.wait(timeout=30) == 2
    assert "MCP_MEMORY_HTTP_MAX_BODY" in server.log()


@pytest.mark.parametrize("port", [99999, -1])
def test_a_port_outside_0_to_65535_is_a_usage_error(tmp_path: Path, port: int) -> None:
    server = HttpServer(tmp_path / "home", port=port)
    assert server.process.wait(timeout=30) == 2
    assert f"argument --port: must be an integer in 0..65535 (got '{port}')" in server.log()
    assert "Traceback" not in server.log()


def test_a_local_store_that_cannot_be_opened_refuses_to_start(tmp_path: Path) -> None:
    """A damaged store is no passing outage: the server exits 1 naming the file, where a
    PostgreSQL database it cannot reach yet is served through (test_postgres_store_selection)."""
    data = tmp_path / "home" / "data"
    store = FaissNoteStore(data)
    store.put_global(GlobalEntry(CanonicalProjectId("app"), GlobalKey("global.project.conventions"), "x", datetime.now(timezone.utc)))
    store.close()
    (data / "MANIFEST.json").write_bytes(b"{ damaged")
    server = HttpServer(tmp_path / "home")
    assert server.process.wait(timeout=30) == 1
    assert "cannot open" in server.log() and "MANIFEST.json" in server.log()


def test_sigterm_answers_requests_in_flight_and_loses_no_acknowledged_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    acknowledged: list[tuple[float, str]] = []
    failures: list[str] = []
    server = HttpServer(home).wait_ready()

    def write(worker: int) -> None:
        with server.client() as client:
            for n in range(100_000):
                note = {"projectId": "demo", "groupId": "g", "text": f"writer {worker} note {n} about shutdowns"}
                try:
                    response = client.post("/rpc", json=rpc("memory.add_note", note, n))
                except httpx.TransportError:
                    return  # the server stopped listening: this write was never acknowledged
                if response.status_code != 200 or "result" not in response.json():
                    failures.append(response.text)
                    return
                acknowledged.append((time.monotonic(), response.json()["result"]["id"]))

    code, signalled = _sigterm_while(server, [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)])

    assert code == 0
    assert failures == []
    assert any(at >= signalled for at, _ in acknowledged), "no request was in flight at SIGTERM"
    ids = [note_id for _, note_id in acknowledged]
    with HttpServer(home, port=server.port) as restarted, restarted.client() as client:
        replies = client.post("/rpc", json=[rpc("memory.get", {"id": i}, i) for i in ids]).json()
    assert len(replies) == len(ids)
    assert [r["id"] for r in replies if "result" not in r] == []


def test_sigterm_while_searches_share_the_model_answers_them_and_exits_cleanly(tmp_path: Path) -> None:
    """Sixteen clients search at once (their queries share the model's calls); at SIGTERM
    each search in flight is answered in full or its connection refused, none fails, and
    the server exits 0."""
    with HttpServer(tmp_path / "home") as server:  # stopped if the test fails before its SIGTERM
        topics = ["retry policy for webhooks", "database migrations at deploy", "UTC timestamps", "feature flags"]
        with server.client() as client:
            notes = [{"projectId": "demo", "groupId": "g", "text": f"{topic}: decision {i}"} for i, topic in enumerate(topics * 5)]
            assert "result" in client.post("/rpc", json=rpc("memory.add_notes", {"notes": notes})).json()
        answered: list[float] = []
        failures: list[str] = []

        def search(worker: int) -> None:
            with server.client() as client:
                for n in range(100_000):
                    query = {"projectId": "demo", "query": f"{topics[(worker + n) % 4]} {worker}", "topK": 3}
                    try:
                        response = client.post("/rpc", json=rpc("memory.search", query, n))
                    except httpx.TransportError:
                        return  # the server stopped listening
                    try:
                        hits = response.json()["result"]["results"]
                    except (ValueError, KeyError):
                        hits = None
                    if response.status_code != 200 or not hits:
                        failures.append(response.text)
                        return
                    answered.append(time.monotonic())

        code, signalled = _sigterm_while(server, [threading.Thread(target=search, args=(w,)) for w in range(16)])

        assert code == 0
        assert failures == []
        assert any(at >= signalled for at in answered), "no search was in flight at SIGTERM"


def _sigterm_while(server: HttpServer, clients: list[threading.Thread]) -> tuple[int, float]:
    """``clients`` started, the server stopped by SIGTERM 1.5 s later, the clients joined:
    the server's exit code and when it was signalled."""
    for thread in clients:
        thread.start()
    time.sleep(1.5)
    signalled = time.monotonic()
    code = server.stop()
    for thread in clients:
        thread.join(timeout=30)
        assert not thread.is_alive()
    return code, signalled
