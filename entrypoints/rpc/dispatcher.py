"""A transport-independent JSON-RPC 2.0 dispatcher.

Transports hand it the bytes of one message (a request, a notification or a batch) and
write back what it returns: the bytes of one response or batch of responses, on one line,
or None when nothing is to be answered (notifications, a batch of notifications).

``handle`` never raises, whatever the bytes:

    not UTF-8, not JSON, truncated, a number out of range     -32700, id null
    nested deeper than MAX_DEPTH arrays and objects          -32600, id null (refused whole,
                                                              before decoding)
    valid JSON but not a request (or an empty batch)          -32600
    a reply that cannot be encoded                            -32603 for that request
    anything else unexpected                                  -32603, logged on stderr

It knows no method: it serves the route tables it is given (``entrypoints.methods.routes``
for ``memory.*``, ``entrypoints.mcp.mcp_routes`` for MCP), looked up in order. Routes take
the request's ``params`` as decoded JSON (None when absent) and return any value msgspec
can encode. Whatever they raise is answered through ``entrypoints.rpc.errors.to_rpc_error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from local_mcp_memory.entrypoints.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    cut,
    to_rpc_error,
)
from local_mcp_memory.entrypoints.logs import get_logger
from local_mcp_memory.entrypoints.rpc.nesting import nested_deeper_than

MAX_DEPTH = 256
"""The deepest nesting of arrays and objects a message may have (params are held to 64
levels by the methods' own rules; this bound keeps every decoder and encoder far from
the interpreter's recursion limit)."""

Route = Callable[[Any], Any]

_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
_NO_ID = object()
_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()
_INTERNAL = b'{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"Internal error"}}' % INTERNAL_ERROR

log = get_logger()


def decode_message(data: bytes) -> Any:
    """The JSON value ``data`` holds. Raises RpcError: -32700 for bytes that are not a JSON
    text in UTF-8 (or hold a number out of range), -32600 for one nested too deep."""
    if nested_deeper_than(data, MAX_DEPTH):
        raise RpcError(INVALID_REQUEST, f"Invalid request: the message is nested deeper than {MAX_DEPTH} levels")
    try:
        return _DECODER.decode(data)
    except UnicodeDecodeError:
        raise RpcError(PARSE_ERROR, "Parse error: the message is not valid UTF-8") from None
    except msgspec.ValidationError:  # the only one an untyped decode raises: a number beyond float
        raise RpcError(PARSE_ERROR, "Parse error: a number in the message is out of range") from None
    except msgspec.DecodeError as exc:
        raise RpcError(PARSE_ERROR, f"Parse error: the message is not valid JSON ({_reason(exc, data)})") from None
    except RecursionError:  # the bound above keeps this away; kept as a second line
        raise RpcError(INVALID_REQUEST, "Invalid request: the message is nested too deep") from None


_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")


def _reason(exc: msgspec.DecodeError, data: bytes) -> str:
    """What msgspec found wrong, in its words without its prefix ("trailing comma in object
    (byte 7)"); a lone high surrogate escape, which msgspec calls truncated input, by its name
    (a lone low one it names itself)."""
    if not data.strip():
        return "it is empty"
    reason = str(exc).removeprefix("JSON is malformed: ")
    if reason == "Input data was truncated" and (lone := _LONE_SURROGATE.search(data)):
        return f"{lone.group().decode()} is a lone surrogate escape, not a character"
    return reason[:1].lower() + reason[1:]


def error_reply(error: RpcError, request_id: Any = None) -> bytes:
    """The encoded response carrying ``error``."""
    return _ENCODER.encode(_error(request_id, error))


class Dispatcher:
    def __init__(self, *tables: Mapping[str, Route]) -> None:
        self._tables = tables  # looked up per request: a lazy table may load its routes on first use

    def handle(self, data: bytes) -> bytes | None:
        """The reply to the message in ``data``; never raises (see the module docstring)."""
        try:
            message = decode_message(data)
        except RpcError as exc:
            return error_reply(exc)
        return self.answer(message)

    def answer(self, message: Any) -> bytes | None:
        """The reply to an already decoded message (``decode_message``); never raises."""
        try:
            if isinstance(message, list):
                if not message:
                    return error_reply(RpcError(INVALID_REQUEST, "Invalid request: empty batch"))
                replies = [_encode(r) for r in map(self.handle_object, message) if r is not None]
                return b"[" + b",".join(replies) + b"]" if replies else None
            reply = self.handle_object(message)
            return None if reply is None else _encode(reply)
        except Exception as exc:  # the last line: a transport must never die on a message
            log.error("internal_error", exc_info=exc)
            return _INTERNAL

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
        route = next((found for table in self._tables if (found := table.get(method)) is not None), None)
        try:
            if route is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {cut(method)}", {"method": cut(method)})
            result = route(message.get("params"))
        except BaseException as exc:  # answered, never propagated: the server keeps serving
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if request_id is _NO_ID:
                to_rpc_error(exc, method, message.get("params"))
                return None
            return _error(request_id, to_rpc_error(exc, method, message.get("params")))
        if request_id is _NO_ID:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _encode(reply: dict[str, Any]) -> bytes:
    """One response; a result that cannot be encoded becomes an internal error for its id."""
    try:
        return _ENCODER.encode(reply)
    except Exception as exc:  # TypeError, ValueError, OverflowError, RecursionError, ...
        return error_reply(to_rpc_error(exc), reply.get("id"))


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
