"""HTTP answers as values, and the JSON bodies of refusals.

On the JSON-RPC endpoints (``/rpc``, ``/mcp``) every refusal carries a JSON-RPC error
response with ``id: null``, code -32600 and ``data: {status, reason}``; elsewhere a plain
``{"error": {status, reason, message}}``. ``reason`` is a stable code for programs.
``internal_error`` is the 500 for a fault of the server itself, in the same shapes
(code -32603 on the JSON-RPC endpoints), with a fixed message.
"""

from __future__ import annotations

import attrs
import msgspec

from local_mcp_memory.entrypoints.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST

JSON = b"application/json"
JSONRPC_PATHS = frozenset({"/rpc", "/mcp"})

_encode = msgspec.json.Encoder().encode


@attrs.frozen
class Response:
    status: int
    body: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    content_type: bytes | None = JSON


def empty(status: int, *headers: tuple[bytes, bytes]) -> Response:
    return Response(status, b"", tuple(headers), None)


def json(status: int, value: object, *headers: tuple[bytes, bytes]) -> Response:
    return Response(status, _encode(value), tuple(headers))


def refusal(path: str, status: int, reason: str, message: str, *headers: tuple[bytes, bytes]) -> Response:
    if path in JSONRPC_PATHS:
        error = {"code": INVALID_REQUEST, "message": message, "data": {"status": status, "reason": reason}}
        return json(status, {"jsonrpc": "2.0", "id": None, "error": error}, *headers)
    return json(status, {"error": {"status": status, "reason": reason, "message": message}}, *headers)


def internal_error(path: str) -> Response:
    if path in JSONRPC_PATHS:
        error = {"code": INTERNAL_ERROR, "message": "Internal error", "data": {"status": 500, "reason": "internal_error"}}
        return json(500, {"jsonrpc": "2.0", "id": None, "error": error})
    return json(500, {"error": {"status": 500, "reason": "internal_error", "message": "Internal error"}})
