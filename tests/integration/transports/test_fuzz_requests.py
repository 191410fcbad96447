"""10,000 mutated requests (5,000 over stdio, 5,000 over HTTP), seeded and bounded: every
reply is a well-formed JSON-RPC response, no request is answered -32603, the server stays
up, and every note and global stored before reads back exactly, also after a restart.

The embedder is a fake Ollama on 127.0.0.1 computing hashing vectors, so no model loads."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.embedding_servers import FakeOllamaServer
from tests.integration.http_server import HttpServer, rpc
from tests.integration.transports.mutations import FUZZ_PROJECT, Mutator
from tests.integration.serve import StdioServer

REQUESTS_PER_TRANSPORT = 5_000
SEED = 20_261_123
KEPT_NOTES = [
    {"projectId": "kept", "groupId": "g", "text": "Deploys happen on Tuesdays."},
    {"projectId": "kept", "groupId": "feature-1", "title": "Unicode \u4e2d\u6587 \U0001f600", "text": "Caf\u00e9 \u202e rtl \u200b zero-width", "tags": ["a", "B"]},
    {"projectId": "kept", "groupId": "task-1", "text": "Line one\nline two\ttab", "source": "notes.md", "createdAt": "2024-01-15T10:30:00Z"},
    {"projectId": "kept", "groupId": "g", "text": "Deep metadata", "metadata": {"a": [1, {"b": [2, {"c": None}]}], "n": 1.5e300, "big": 2**62}},
    {"projectId": "kept", "groupId": "global", "text": "x" * 5000},
]
KEPT_GLOBALS = {
    "global.memory.embedder.provider": "openai",
    "global.memory.groupDefaults": {"featurePrefix": "feature-", "taskPrefix": "task-"},
    "global.project.conventions": "Small PRs; every change has a test.",
    "global.list": [1, "two", None, {"three": [3]}],
}
SEED_NOTES = 8  # notes of project fz, for updates to aim at

Call = Callable[[str, Any], Any]


def store_kept(call: Call) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    ids = [call("memory.add_note", note)["id"] for note in KEPT_NOTES]
    notes = [call("memory.get", {"id": note_id}) for note_id in ids]
    for key, value in KEPT_GLOBALS.items():
        call("memory.upsert_global", {"projectId": "kept", "key": key, "value": value})
    fuzz_ids = [call("memory.add_note", {"projectId": FUZZ_PROJECT, "groupId": "g", "text": f"fuzz seed {n}"})["id"] for n in range(SEED_NOTES)]
    return notes, read_globals(call), fuzz_ids


def read_globals(call: Call) -> dict[str, Any]:
    return {key: call("memory.get_global", {"projectId": "kept", "key": key}) for key in KEPT_GLOBALS}


def assert_kept(call: Call, notes: list[dict[str, Any]], globals_: dict[str, Any]) -> None:
    assert [call("memory.get", {"id": note["id"]}) for note in notes] == notes
    assert read_globals(call) == globals_


def check_response(reply: Any) -> None:
    """One JSON-RPC response object, or a non-empty batch of them."""
    members = reply if isinstance(reply, list) else [reply]
    assert members, "an empty batch answer"
    for member in members:
        assert isinstance(member, dict) and member.get("jsonrpc") == "2.0" and "id" in member, member
        assert ("result" in member) != ("error" in member), member
        if "error" in member:
            error = member["error"]
            assert isinstance(error["code"], int) and isinstance(error["message"], str), member
            assert error["code"] != -32603, f"internal error: {member}"


def expects_reply(raw: bytes) -> bool:
    """True when ``raw`` holds a request with an id by a strict reading (so some line must answer it)."""
    try:
        message = json.loads(raw.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, RecursionError):
        return False
    members = message if isinstance(message, list) else [message]
    return isinstance(message, list) and not message or any(isinstance(m, dict) and "id" in m for m in members)


def _refuse(constant: str) -> Any:
    raise ValueError(constant)


def read_until(server: StdioServer, sentinel: str, sent: bytes) -> list[Any]:
    """The reply lines before the answer to the ping with id ``sentinel``."""
    assert server.process.stdout
    replies = []
    while True:
        line = server.process.stdout.readline()
        assert line.endswith(b"\n"), f"the server stopped after {sent[:300]!r}"
        reply = json.loads(line)
        if reply == {"jsonrpc": "2.0", "id": sentinel, "result": {}}:
            return replies
        replies.append(reply)


def caller(client: httpx.Client) -> Call:
    def call(method: str, params: Any) -> Any:
        reply = client.post("/rpc", json=rpc(method, params)).json()
        assert "result" in reply, reply
        return reply["result"]

    return call


@pytest.fixture(scope="module")
def ollama() -> Iterator[FakeOllamaServer]:
    with FakeOllamaServer(dim=16) as fake:
        yield fake


def home_for(tmp_path: Path, ollama: FakeOllamaServer) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    embedder = {"provider": "ollama", "baseUrl": ollama.url, "model": "nomic-embed-text"}
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": embedder}))
    return home


def test_stdio_survives_5000_mutated_requests_and_keeps_every_note(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_for(tmp_path, ollama)
    with StdioServer(home) as server:
        notes, globals_, fuzz_ids = store_kept(server.result)
        mutator = Mutator(SEED, [n["id"] for n in notes], fuzz_ids)
        assert server.process.stdin and server.process.stdout
        for n in range(REQUESTS_PER_TRANSPORT):
            raw = mutator.message()
            server.process.stdin.write(raw + b"\n" + json.dumps(rpc("ping", None, f"sentinel-{n}")).encode() + b"\n")
            server.process.stdin.flush()
            replies = read_until(server, f"sentinel-{n}", raw)
            for reply in replies:
                check_response(reply)
            if b"\n" not in raw:  # one line sent: at most one answered, and one when it held a request
                assert len(replies) <= 1, (raw[:300], replies)
                assert len(replies) == 1 or not expects_reply(raw), f"no answer to {raw[:300]!r}"
        assert server.result("ping") == {}
        assert_kept(server.result, notes, globals_)
        code, stderr = server.close()
    assert code == 0, stderr[-2000:]
    with StdioServer(home) as restarted:
        assert_kept(restarted.result, notes, globals_)


def test_http_survives_5000_mutated_requests_and_keeps_every_note(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_for(tmp_path, ollama)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with HttpServer(home) as server, server.client() as client:
        call = caller(client)
        notes, globals_, fuzz_ids = store_kept(call)
        mutator = Mutator(SEED + 1, [n["id"] for n in notes], fuzz_ids)
        for n in range(REQUESTS_PER_TRANSPORT):
            raw = mutator.message()
            path = "/rpc" if n % 2 else "/mcp"
            response = client.post(path, content=raw, headers=headers)
            assert response.status_code in ((200, 204) if path == "/rpc" else (200, 202, 400)), (path, raw[:300], response.status_code, response.text[:300])
            if response.content:
                assert response.headers["content-type"] == "application/json", response.headers
                check_response(response.json())
            elif expects_reply(raw):
                pytest.fail(f"no answer from {path} to {raw[:300]!r}")
        assert server.process.poll() is None
        assert call("ping", None) == {}
        assert_kept(call, notes, globals_)
        assert server.stop() == 0
    with HttpServer(home) as restarted, restarted.client() as client:
        assert_kept(caller(client), notes, globals_)
