"""HTTP answers as values, and the JSON bodies of refusals.

On the JSON-RPC endpoints (``/rpc``, ``/mcp``) every refusal carries a JSON-RPC error
response with ``id: null``, code -32600 and ``data: {status, reason}``; elsewhere a plain
``{"error": {status, reason, message}}``. ``reason`` is a stable code for programs.
"""

from __future__ import annotations

import attrs
import msgspec

from entrypoints.errors import INVALID_REQUEST

JSON = b"application/json"
JSONRPC_PATHS = frozenset({"/rpc", "/mcp"})

_encode = msgspec.json.Encoder().encode


@attrs.frozen
class Response:
    status: int
    body: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    content_type: bytes | None = JSON

    def with_headers(self, *headers: tuple[bytes, bytes]) -> Response:
        return attrs.evolve(self, headers=self.headers + tuple(headers))


def empty(status: int, *headers: tuple[bytes, bytes]) -> Response:
    return Response(status, b"", tuple(headers), None)


def json(status: int, value: object, *headers: tuple[bytes, bytes]) -> Response:
    return Response(status, _encode(value), tuple(headers))


def refusal(path: str, status: int, reason: str, message: str, *headers: tuple[bytes, bytes]) -> Response:
    if path in JSONRPC_PATHS:
        error = {"code": INVALID_REQUEST, "message": message, "data": {"status": status, "reason": reason}}
        return json(status, {"jsonrpc": "2.0", "id": None, "error": error}, *headers)
    return json(status, {"error": {"status": status, "reason": reason, "message": message}}, *headers)
