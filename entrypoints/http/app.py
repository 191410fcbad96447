"""The ASGI application: the routes behind one guard, the synchronous core in a pool.

    POST /rpc      JSON-RPC 2.0 message or batch -> 200 JSON; only notifications -> 204
    POST /mcp      MCP Streamable HTTP (``entrypoints.http.streamable``); DELETE ends a session
    GET  /health   store and embedder state, without loading the model
    GET  /         the dashboard page; GET /assets/<name> its files (``entrypoints.http.static``)

Every request first passes ``guard.check`` (Host, Origin, CORS preflight, token; the
dashboard's files need no token, the page's calls to ``/rpc`` do). Then:
unknown path 404; other method 405 with ``Allow``; a POST body that is not
``application/json`` (a ``charset=utf-8`` parameter is fine), or one with a
``Content-Encoding`` (gzip, …), 415; a body over
``max_body`` bytes 413, a body not complete within ``body_timeout`` seconds 408 (for
both the connection is closed rather than drained).

On ``/rpc`` and ``/mcp`` every answer is ``application/json`` carrying JSON-RPC: bytes
that are no JSON-RPC message get the dispatcher's error object (200 on ``/rpc``, 400 on
``/mcp``), and a fault of the app itself, which should not happen, is logged and answered
500 with a -32603 error rather than the server's plain-text page.

The dispatcher is synchronous and may block (fsync, embedding): it runs in the bounded
thread pool given, never on the event loop. A request whose client disconnects is still
carried out to the end, so an answered write is a done write and an unanswered one may
be done too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any


from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.http import responses, streamable
from local_mcp_memory.entrypoints.http.guard import Policy, RequestHeaders, check, cors_headers
from local_mcp_memory.entrypoints.http.responses import Response
from local_mcp_memory.entrypoints.http.static import StaticFiles, is_static
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher, decode_message
from local_mcp_memory.entrypoints.logs import get_logger

DEFAULT_MAX_BODY = 8 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0

ALLOWED_METHODS = {
    "/rpc": ("POST",),
    "/mcp": ("POST", "DELETE"),
    "/health": ("GET",),
}
STATIC_METHODS = ("GET",)

log = get_logger()

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


class _TooLarge(Exception):
    """The request body went over the limit."""


class _Disconnected(Exception):
    """The client went away before sending the whole body."""


class _TooSlow(Exception):
    """The body was not complete in time."""


class HttpApp:
    def __init__(
        self,
        dispatcher: Dispatcher,
        services: Callable[[], Services],
        policy: Policy,
        pool: Executor,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        session_idle: float = streamable.DEFAULT_SESSION_IDLE,
        static: StaticFiles | None = None,
    ) -> None:
        self._dispatcher = dispatcher
        self._static = StaticFiles() if static is None else static
        self._services = services
        self._policy = policy
        self._pool = pool
        self._max_body = max_body
        self._body_timeout = body_timeout
        self._sessions = streamable.Sessions(idle=session_idle)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = time.perf_counter()
        method, path = scope["method"], scope["path"]
        headers = RequestHeaders(scope["headers"])
        try:
            response = await self._answer(method, path, headers, receive)
        except Exception as exc:  # the boundary: a fault of ours is answered, never a plain 500 page
            log.error("http_internal_error", method=method, path=path, exc_info=exc)
            response = responses.internal_error(path)
        extra = [] if method == "OPTIONS" else cors_headers(self._policy, headers)
        await _send(send, response, extra)
        elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
        if response.status in (401, 403):
            client = (scope.get("client") or ("?",))[0]
            log.warning("http_refused", method=method, path=path, status=response.status, client=client)
        else:
            log.debug("http_request", method=method, path=path, status=response.status, ms=elapsed_ms)

    async def _answer(self, method: str, path: str, headers: RequestHeaders, receive: Receive) -> Response:
        refused = check(self._policy, method, headers, public=is_static(path))
        if refused and refused.status == 204:  # a CORS preflight, answered by the guard
            return responses.empty(204, *refused.headers)
        if refused:
            return responses.refusal(path, refused.status, refused.reason, refused.message, *refused.headers)
        allowed = STATIC_METHODS if is_static(path) else ALLOWED_METHODS.get(path)
        if allowed is None:
            message = f"Not Found: no route {path[:100]}; try GET / (the dashboard), POST /rpc, POST /mcp or GET /health"
            return responses.refusal(path, 404, "not_found", message)
        allow_header = (b"allow", ", ".join((*allowed, "OPTIONS")).encode())
        if method == "OPTIONS":
            return responses.empty(204, allow_header)
        if method not in allowed:
            message = f"Method Not Allowed: {path} accepts {' and '.join(allowed)}"
            return responses.refusal(path, 405, "method_not_allowed", message, allow_header)
        if is_static(path):
            return self._static.answer(path)
        if path == "/health":
            return await self._health()
        if path == "/mcp":
            return await self._mcp(method, headers, receive)
        body = await self._body(path, headers, receive)
        if isinstance(body, Response):
            return body
        reply = await self._dispatch(body)
        return responses.empty(204) if reply is None else Response(200, reply)

    async def _mcp(self, method: str, headers: RequestHeaders, receive: Receive) -> Response:
        if method == "DELETE":
            return streamable.delete(headers, self._sessions)
        problem = streamable.header_problem(headers)
        if problem:
            return problem
        body = await self._body("/mcp", headers, receive)
        if isinstance(body, Response):
            return body
        return await streamable.post(body, headers, self._sessions, self._parse, self._answer_message)

    async def _body(self, path: str, headers: RequestHeaders, receive: Receive) -> bytes | Response:
        content_type = headers.get("content-type")
        if not _is_json(content_type):
            got = (content_type or "none")[:100]
            message = f"Unsupported Media Type: send the body as application/json (got {got})"
            return responses.refusal(path, 415, "unsupported_media_type", message)
        encoding = (headers.get("content-encoding") or "identity").strip().lower()
        if encoding != "identity":
            message = f"Unsupported Media Type: send the body unencoded (got Content-Encoding {encoding[:100]})"
            return responses.refusal(path, 415, "unsupported_media_type", message)
        length = headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > self._max_body:
            return self._too_large(path)
        try:
            return await _read_body(receive, self._max_body, self._body_timeout)
        except _TooLarge:
            return self._too_large(path)
        except _TooSlow:
            message = f"Request Timeout: the body was not complete within {self._body_timeout:g} s"
            return responses.refusal(path, 408, "body_timeout", message, (b"connection", b"close"))
        except _Disconnected:  # nobody to answer; nothing half-received is carried out
            return responses.refusal(path, 400, "client_disconnected", "Bad Request: the body was cut short")

    def _too_large(self, path: str) -> Response:
        """Built only for a refused body, not for every request."""
        return responses.refusal(
            path,
            413,
            "body_too_large",
            f"Payload Too Large: a body may hold at most {self._max_body} bytes",
            (b"connection", b"close"),  # the rest of the body is not read, so the connection ends
        )

    async def _dispatch(self, body: bytes) -> bytes | None:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._dispatcher.handle, body)

    async def _parse(self, body: bytes) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, decode_message, body)

    async def _answer_message(self, message: Any) -> bytes | None:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._dispatcher.answer, message)

    async def _health(self) -> Response:
        try:
            state = await asyncio.get_running_loop().run_in_executor(self._pool, _health, self._services)
        except Exception as exc:  # the boundary: report, never crash the server
            log.error("health_failed", exc_info=exc)
            problem = "the store or the config could not be opened; see the server's log"
            return responses.json(503, {"status": "error", "error": problem})
        return responses.json(200, state)


def _health(services: Callable[[], Services]) -> dict[str, Any]:
    """Cheap facts: settings already in memory and the store's vector counts. Never
    embeds, so the model is not loaded by a health check."""
    built = services()
    settings = built.embedding.settings
    namespaces = {str(namespace): count for namespace, count in built.store.namespaces().items()}
    return {
        "status": "ok",
        "store": {"type": built.runtime.store_type, "namespaces": namespaces},
        "embedder": {"provider": settings.provider, "model": settings.effective_model, "dim": settings.dim},
    }


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media_type, *params = (part.strip().lower() for part in content_type.split(";"))
    for param in params:
        name, _, value = param.partition("=")
        if name.strip() == "charset" and value.strip().strip('"') not in ("utf-8", "utf8"):
            return False
    return media_type == "application/json"


async def _read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    try:
        async with asyncio.timeout(timeout):
            return await _read_chunks(receive, limit)
    except TimeoutError:
        raise _TooSlow() from None


async def _read_chunks(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge()
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send(send: Send, response: Response, extra: list[tuple[bytes, bytes]]) -> None:
    headers = list(response.headers) + extra
    if response.content_type is not None:
        headers.append((b"content-type", response.content_type))
    if response.status not in (204, 304):
        headers.append((b"content-length", str(len(response.body)).encode()))
    headers.append((b"cache-control", b"no-store"))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})
