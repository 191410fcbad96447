"""A transport-independent JSON-RPC 2.0 dispatcher.

Transports hand it the bytes of one message (a request, a notification or a batch) and
write back what it returns: the bytes of one response or batch of responses, on one line,
or None when nothing is to be answered (notifications, a batch of notifications).

Routes take the request's ``params`` as decoded JSON (None when absent) and return any
value msgspec can encode. Whatever they raise is answered through
``entrypoints.errors.to_rpc_error``; the dispatcher itself never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from entrypoints.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    to_rpc_error,
)

Route = Callable[[Any], Any]

_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
_NO_ID = object()


class Dispatcher:
    def __init__(self, routes: Mapping[str, Route]) -> None:
        self._routes = routes  # looked up per request: a lazy Mapping may load routes on first use
        self._decoder = msgspec.json.Decoder()
        self._encoder = msgspec.json.Encoder()

    def handle(self, data: bytes) -> bytes | None:
        try:
            message = self._decoder.decode(data)
        except msgspec.DecodeError:
            return self._encode(_error(None, RpcError(PARSE_ERROR, "Parse error: the message is not valid JSON")))
        if isinstance(message, list):
            if not message:
                return self._encode(_error(None, RpcError(INVALID_REQUEST, "Invalid request: empty batch")))
            replies = [r for r in map(self.handle_object, message) if r is not None]
            return self._encode(replies) if replies else None
        reply = self.handle_object(message)
        return None if reply is None else self._encode(reply)

    def handle_object(self, message: Any) -> dict[str, Any] | None:
        """Answer one decoded message; None for a notification."""
        if not isinstance(message, dict):
            return _error(None, RpcError(INVALID_REQUEST, "Invalid request: expected a JSON object"))
        request_id = message.get("id", _NO_ID)
        valid_id = request_id is _NO_ID or request_id is None or (
            isinstance(request_id, (str, int, float)) and not isinstance(request_id, bool)
        )
        problem = _envelope_problem(message, valid_id)
        if problem:
            return _error(request_id if valid_id and request_id is not _NO_ID else None, RpcError(INVALID_REQUEST, f"Invalid request: {problem}"))
        method = message["method"]
        route = self._routes.get(method)
        try:
            if route is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
            result = route(message.get("params"))
        except BaseException as exc:  # answered, never propagated: the server keeps serving
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if request_id is _NO_ID:
                to_rpc_error(exc, method)
                return None
            return _error(request_id, to_rpc_error(exc, method))
        if request_id is _NO_ID:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _encode(self, reply: Any) -> bytes:
        try:
            return self._encoder.encode(reply)
        except (TypeError, ValueError, OverflowError) as exc:
            request_id = reply.get("id") if isinstance(reply, dict) else None
            return self._encoder.encode(_error(request_id, to_rpc_error(exc)))


def _envelope_problem(message: dict[str, Any], valid_id: bool) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not valid_id:
        return "id must be a string, a number or null"
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if "params" in message and not isinstance(message["params"], (dict, list)):
        return "params must be an object or an array"
    extra = sorted(set(message) - _ENVELOPE)
    if extra:
        return f"unknown member {extra[0]!r}"
    return None


def _error(request_id: Any, error: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def memory_route(method: Any, services: Callable[[], Any]) -> Route:
    """A route serving one ``entrypoints.methods.Method`` with the given services."""
    decode = _params_decoder(method.params)

    def route(params: Any) -> Any:
        return method.run(decode(params), services())

    return route


def _params_decoder(params_type: type) -> Callable[[Any], Any]:
    def decode(params: Any) -> Any:
        if isinstance(params, list):
            raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object with named fields", {"field": None, "rule": "params must be an object"})
        return msgspec.convert({} if params is None else params, params_type)

    return decode
