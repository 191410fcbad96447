"""``/mcp``: the MCP Streamable HTTP endpoint, answering with JSON only (no SSE stream).

    POST    a JSON-RPC message or batch, fed to the same dispatcher as ``/rpc``.
            Requests are answered 200 with ``application/json``; a message of only
            notifications and responses is answered 202 with no body.
            A successful ``initialize`` answer carries a new ``Mcp-Session-Id``; a later
            message carrying an unknown, ended or expired one (idle longer than
            ``MCP_MEMORY_HTTP_SESSION_IDLE`` seconds) gets 404. A message without the
            header is served: sessions are not required (session-less clients, such as
            those probing with ``server/discover``, and plain JSON-RPC callers work too).
            Bytes that are not a JSON-RPC message (not UTF-8, not JSON, nested too deep)
            get 400 with the JSON-RPC error (-32700 or -32600, ``id: null``).
    DELETE  with ``Mcp-Session-Id``: ends the session (204); without it 400.
    GET     405: this server offers no server-to-client stream.

``Accept`` must allow ``application/json`` when present (406 otherwise); clients listing
``application/json, text/event-stream`` as the specification asks are served JSON.
``MCP-Protocol-Version`` on a message of a session, when present, must be a version we
speak (400 otherwise); before a session the handshake itself negotiates the version, and
newer clients' ``server/discover`` probe gets a JSON-RPC error to fall back on.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from local_mcp_memory.entrypoints.rpc.errors import RpcError
from local_mcp_memory.entrypoints.http import responses
from local_mcp_memory.entrypoints.http.guard import RequestHeaders
from local_mcp_memory.entrypoints.http.responses import Response
from local_mcp_memory.entrypoints.rpc.dispatcher import decode_message, error_reply
from local_mcp_memory.entrypoints.logs import get_logger
from local_mcp_memory.entrypoints.mcp_revisions import PROTOCOL_VERSIONS

SUPPORTED_PROTOCOL_VERSIONS = frozenset(PROTOCOL_VERSIONS)
SESSION_HEADER = b"mcp-session-id"
MAX_SESSIONS = 65_536
"""Live sessions kept at most (about 200 bytes each)."""
DEFAULT_SESSION_IDLE = 3600.0
"""Seconds a session may stay unused before it expires."""

Clock = Callable[[], float]

Parse = Callable[[bytes], Awaitable[Any]]
"""``rpc.dispatcher.decode_message``, run off the event loop."""
Answer = Callable[[Any], Awaitable[bytes | None]]
"""``Dispatcher.answer``, run off the event loop."""

log = get_logger()


class Sessions:
    """Ids of live sessions, 256 random bits each. A session unused for ``idle`` seconds has
    expired: a message naming it gets 404, like one never opened. At most ``limit`` are kept,
    and a live one is never dropped to make room: when ``limit`` sessions are live, ``open``
    gives None and the initialize is answered without a session (sessions hold no state
    here, so the client is served all the same). Used from the event loop thread only."""

    def __init__(self, idle: float = DEFAULT_SESSION_IDLE, limit: int = MAX_SESSIONS, clock: Clock = time.monotonic) -> None:
        self._idle = idle
        self._limit = limit
        self._clock = clock
        self._last_used: OrderedDict[str, float] = OrderedDict()  # least recently used first

    def open(self) -> str | None:
        now = self._forget_expired()
        if len(self._last_used) >= self._limit:
            log.warning("mcp_sessions_full", limit=self._limit, idle_seconds=self._idle)
            return None
        session_id = secrets.token_urlsafe(32)
        self._last_used[session_id] = now
        return session_id

    def touch(self, session_id: str) -> bool:
        now = self._forget_expired()
        if session_id not in self._last_used:
            return False
        self._last_used[session_id] = now
        self._last_used.move_to_end(session_id)
        return True

    def close(self, session_id: str) -> bool:
        self._forget_expired()
        return self._last_used.pop(session_id, None) is not None

    def _forget_expired(self) -> float:
        now = self._clock()
        while self._last_used:
            oldest, last_used = next(iter(self._last_used.items()))
            if now - last_used < self._idle:
                break
            del self._last_used[oldest]
        return now


def header_problem(headers: RequestHeaders) -> Response | None:
    """406 or 400 for ``Accept`` and ``MCP-Protocol-Version`` headers we cannot serve."""
    accept = headers.get("accept")
    if accept is not None and not _accepts_json(accept):
        return responses.refusal(
            "/mcp", 406, "not_acceptable", "Not Acceptable: this endpoint answers with application/json"
        )
    version = headers.get("mcp-protocol-version")
    in_session = headers.get("mcp-session-id") is not None
    if in_session and version is not None and version.strip() not in SUPPORTED_PROTOCOL_VERSIONS:
        supported = ", ".join(sorted(SUPPORTED_PROTOCOL_VERSIONS))
        message = f"Bad Request: unsupported MCP-Protocol-Version (supported: {supported})"
        return responses.refusal("/mcp", 400, "protocol_version_unsupported", message)
    return None


async def post(body: bytes, headers: RequestHeaders, sessions: Sessions, parse: Parse, answer: Answer) -> Response:
    try:
        decoded = await parse(body)
    except RpcError as exc:  # bytes that are no JSON-RPC message at all: 400, with the error
        return Response(400, error_reply(exc))
    messages = decoded if isinstance(decoded, list) else [decoded]
    initialize_ids = [m["id"] for m in messages if _is_request(m) and m["method"] == "initialize"]
    if not initialize_ids and headers.get("mcp-session-id") is not None:
        problem = _session_problem(headers, sessions)
        if problem:
            return problem
    if messages and all(_is_notification(m) or _is_response(m) for m in messages):
        notifications = [m for m in messages if _is_notification(m)]
        if notifications:  # responses answer server requests; we send none, so they are dropped
            await answer(notifications if isinstance(decoded, list) else notifications[0])
        return responses.empty(202)
    reply = await answer(decoded)
    if reply is None:
        return responses.empty(202)
    if initialize_ids and _initialized(reply, initialize_ids):
        session_id = sessions.open()
        if session_id is not None:
            return Response(200, reply, ((SESSION_HEADER, session_id.encode()),))
    return Response(200, reply)


def delete(headers: RequestHeaders, sessions: Sessions) -> Response:
    problem = _session_problem(headers, sessions)
    if problem:
        return problem
    sessions.close(headers.get("mcp-session-id") or "")
    return responses.empty(204)


def _session_problem(headers: RequestHeaders, sessions: Sessions) -> Response | None:
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        return responses.refusal(
            "/mcp", 400, "session_required", "Bad Request: the Mcp-Session-Id header names the session to end"
        )
    if not sessions.touch(session_id.strip()):
        return responses.refusal(
            "/mcp", 404, "session_not_found", "Not Found: unknown or ended session; send initialize to start a new one"
        )
    return None


def _accepts_json(accept: str) -> bool:
    ranges = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(ranges & {"application/json", "application/*", "*/*"})


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def _is_notification(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message


def _is_response(message: Any) -> bool:
    if not isinstance(message, dict) or "method" in message or "id" not in message:
        return False
    return "result" in message or "error" in message


def _initialized(reply: bytes, initialize_ids: list[Any]) -> bool:
    """True when the reply answers one of the initialize requests with a result."""
    try:
        decoded = decode_message(reply)
    except RpcError:  # a reply nested too deep to read back holds no initialize result
        return False
    answers = decoded if isinstance(decoded, list) else [decoded]
    return any(isinstance(a, dict) and "result" in a and a.get("id") in initialize_ids for a in answers)
