"""``/mcp``: the MCP Streamable HTTP endpoint, answering with JSON only (no SSE stream).

    POST    a JSON-RPC message or batch, fed to the same dispatcher as ``/rpc``.
            Requests are answered 200 with ``application/json``; a message of only
            notifications and responses is answered 202 with no body.
            A successful ``initialize`` answer carries a new ``Mcp-Session-Id``; a later
            message carrying an unknown or ended one gets 404. A message without the
            header is served: sessions are not required (session-less clients, such as
            those probing with ``server/discover``, and plain JSON-RPC callers work too).
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
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from entrypoints.http import responses
from entrypoints.http.guard import RequestHeaders
from entrypoints.http.responses import Response
from entrypoints.mcp.protocol import PROTOCOL_VERSIONS

SUPPORTED_PROTOCOL_VERSIONS = frozenset(PROTOCOL_VERSIONS)
SESSION_HEADER = b"mcp-session-id"
MAX_SESSIONS = 1024

Run = Callable[[bytes], Awaitable[bytes | None]]

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class Sessions:
    """Ids of live sessions: 256 random bits each, at most ``limit`` (the least recently
    used is forgotten first). Used from the event loop thread only."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict()

    def open(self) -> str:
        session_id = secrets.token_urlsafe(32)
        self._ids[session_id] = None
        while len(self._ids) > self._limit:
            self._ids.popitem(last=False)
        return session_id

    def touch(self, session_id: str) -> bool:
        if session_id not in self._ids:
            return False
        self._ids.move_to_end(session_id)
        return True

    def close(self, session_id: str) -> bool:
        if session_id not in self._ids:
            return False
        del self._ids[session_id]
        return True


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


async def post(body: bytes, headers: RequestHeaders, sessions: Sessions, run: Run) -> Response:
    try:
        decoded = _decode(body)
    except msgspec.DecodeError:
        reply = await run(body)  # the dispatcher words the parse error
        return Response(400, reply or b"")
    messages = decoded if isinstance(decoded, list) else [decoded]
    initialize_ids = [m["id"] for m in messages if _is_request(m) and m["method"] == "initialize"]
    if not initialize_ids and headers.get("mcp-session-id") is not None:
        problem = _session_problem(headers, sessions)
        if problem:
            return problem
    if messages and all(_is_notification(m) or _is_response(m) for m in messages):
        notifications = [m for m in messages if _is_notification(m)]
        if notifications:  # responses answer server requests; we send none, so they are dropped
            await run(_encode(notifications if isinstance(decoded, list) else notifications[0]))
        return responses.empty(202)
    reply = await run(body)
    if reply is None:
        return responses.empty(202)
    if initialize_ids and _initialized(reply, initialize_ids):
        return Response(200, reply, ((SESSION_HEADER, sessions.open().encode()),))
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
    decoded = _decode(reply)
    answers = decoded if isinstance(decoded, list) else [decoded]
    return any(isinstance(a, dict) and "result" in a and a.get("id") in initialize_ids for a in answers)
