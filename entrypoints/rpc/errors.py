"""JSON-RPC error codes, and the one table that maps exceptions to them.

    JSON-RPC 2.0                         server codes (-32000..-32099)
    -32700 PARSE_ERROR                   -32001 EMBEDDER_NOT_CONFIGURED
    -32600 INVALID_REQUEST               -32002 EMBEDDER_UNAVAILABLE
    -32601 METHOD_NOT_FOUND              -32003 EMBEDDER_REJECTED
    -32602 INVALID_PARAMS                -32004 NOT_FOUND
    -32603 INTERNAL_ERROR                -32005 DIMENSION_MISMATCH
                                         -32006 STORE_UNAVAILABLE

``RpcError`` is a JSON-RPC error to answer with as it is (code, message, data).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from local_mcp_memory.adapters.msgspec_errors import SHOWN_CHARS, cut, field_and_rule, shown_as_json, wire_path
from local_mcp_memory.application import errors as app
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.entrypoints.logs import get_logger

PARSE_ERROR = -32700
"""The line or body is not JSON."""
INVALID_REQUEST = -32600
"""The JSON is not a JSON-RPC 2.0 request object."""
METHOD_NOT_FOUND = -32601
"""No such method."""
INVALID_PARAMS = -32602
"""Params broke a rule; ``data.field`` names the field, ``data.rule`` the rule."""
INTERNAL_ERROR = -32603
"""A fault of the server; details are on stderr only."""
EMBEDDER_NOT_CONFIGURED = -32001
"""The embedder lacks a setting (API key, model); the message says how to set it."""
EMBEDDER_UNAVAILABLE = -32002
"""The embedder could not be reached or kept failing; ``data.url`` names where."""
EMBEDDER_REJECTED = -32003
"""The embedding provider refused the request or the key (``data.status``)."""
NOT_FOUND = -32004
"""No note has the id in ``data.id``."""
DIMENSION_MISMATCH = -32005
"""A model answered with another dimension than recorded for it; nothing was written."""
STORE_UNAVAILABLE = -32006
"""The store on disk could not be read or written; ``data.path`` names the file."""

log = get_logger()


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(message)


def request_rule(exc: app.InvalidRequest) -> str:
    """The rule a refused request broke, with the remedy when that is one of our methods."""
    if isinstance(exc, app.NamespaceStillHome):
        return f"{exc.rule} (memory.reembed or mcp-memory reembed)"
    return exc.rule


def explain(exc: BaseException) -> str:
    """What an error says to a caller of the edge (JSON-RPC, MCP or the CLI): the
    application's message with field paths in wire names and the remedies that name one
    of our methods, which the application leaves to the edge."""
    match exc:
        case app.InvalidRequest():
            return f"{wire_path(exc.field)} {request_rule(exc)}"
        case app.DimensionChanged():
            return f"{exc} Choose another model name with memory.set_config if the model really changed."
    return str(exc)


def _validation(exc: msgspec.ValidationError) -> RpcError:
    field, rule = field_and_rule(exc)
    return RpcError(INVALID_PARAMS, f"Invalid params: {rule}" + (f" at {field}" if field else ""), {"field": field, "rule": rule})


_UNSENT = object()


def _refused_value(exc: InvalidValue, sent: Any) -> RpcError:
    """-32602 for a value object's refusal: the field's wire path, the rule, and the value
    as the request sent it (when the path leads to it in ``sent``), never a Python repr."""
    field = wire_path(exc.field)
    secret = field is not None and _SECRET.search(field) is not None  # never told back, however refused
    raw = _UNSENT if field is None or secret else sent_at(sent, field)
    shown = "***" if secret else shown_as_json(exc.value if raw is _UNSENT else raw, SHOWN_CHARS)
    rule = exc.field_rule()
    message = f"Invalid params: {field or exc.type_name} {rule} (got {shown})"
    data: dict[str, Any] = {"field": field, "rule": rule}
    if raw is not _UNSENT and (raw is None or isinstance(raw, (bool, int, float)) or (isinstance(raw, str) and len(raw) <= SHOWN_CHARS)):
        data["value"] = raw
    return RpcError(INVALID_PARAMS, message, data)


_SECRET = re.compile(r"(?i)api_?key|token|password|secret")
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


def sent_at(sent: Any, path: str) -> Any:
    """The value at wire path ``path`` (``notes[1].expiresAt``) of the decoded params
    ``sent``; ``_UNSENT`` when the path leads nowhere."""
    value = sent
    for name, index in _STEP.findall(path):
        if name and isinstance(value, dict) and name in value:
            value = value[name]
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return _UNSENT
    return value


def to_rpc_error(exc: BaseException, method: str | None = None, sent: Any = None) -> RpcError:
    """The JSON-RPC error answering ``exc``; ``sent`` is the request's params as decoded
    JSON, where a refused value is looked up to be told back as it was sent. Unexpected
    exceptions are logged with their traceback and answered with a fixed message."""
    match exc:
        case RpcError():
            return exc
        case msgspec.ValidationError():
            return _validation(exc)
        case InvalidValue():
            return _refused_value(exc, sent)
        case app.InvalidRequest():
            data = {"field": wire_path(exc.field), "rule": request_rule(exc)}
            return RpcError(INVALID_PARAMS, f"Invalid params: {explain(exc)}", data)
        case app.NoteNotFound():
            return RpcError(NOT_FOUND, str(exc), {"id": exc.id})
        case app.DimensionChanged():
            data = {"provider": exc.provider, "model": exc.model, "expected": exc.expected, "got": exc.got}
            return RpcError(DIMENSION_MISMATCH, explain(exc), data)
        case app.EmbedderNotConfigured():
            return RpcError(EMBEDDER_NOT_CONFIGURED, str(exc), {"provider": exc.provider})
        case app.EmbedderUnavailable():
            return RpcError(EMBEDDER_UNAVAILABLE, str(exc), {"provider": exc.provider, "url": exc.url})
        case app.EmbedderRejected():
            return RpcError(EMBEDDER_REJECTED, str(exc), {"provider": exc.provider, "status": exc.status})
        case app.StoreError():
            log.error("store_error", method=method, error=str(exc), path=exc.path)
            return RpcError(STORE_UNAVAILABLE, f"The store is unavailable: {exc}", {"path": exc.path})
    log.error("internal_error", method=method, exc_info=exc)
    return RpcError(INTERNAL_ERROR, "Internal error")
