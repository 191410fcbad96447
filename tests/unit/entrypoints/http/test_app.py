"""The ASGI app driven directly: a fault of the server itself is still a JSON answer."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Executor, Future
from typing import Any

import structlog

from local_mcp_memory.entrypoints.http.app import HttpApp
from local_mcp_memory.entrypoints.http.guard import Policy
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher


class RefusingPool(Executor):
    """An executor that cannot run anything (as when the interpreter is shutting down)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise RuntimeError("cannot schedule new futures after shutdown")


def post(app: HttpApp, path: str, body: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
    scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json")]}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"]


def test_a_fault_of_the_server_is_a_json_rpc_internal_error_on_both_endpoints() -> None:
    app = HttpApp(Dispatcher({}), lambda: None, Policy.for_bind("127.0.0.1", 8765, (), None), RefusingPool())  # type: ignore[arg-type]
    for path in ("/rpc", "/mcp"):
        with structlog.testing.capture_logs() as logs:
            status, headers, body = post(app, path, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
        assert status == 500 and headers[b"content-type"] == b"application/json"
        assert json.loads(body)["error"] == {"code": -32603, "message": "Internal error", "data": {"status": 500, "reason": "internal_error"}}
        assert "shutdown" not in body.decode()
        assert logs[0]["event"] == "http_internal_error" and logs[0]["path"] == path
