"""The dispatcher speaks JSON-RPC 2.0 strictly, whatever the routes behind it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import structlog

from application.errors import NoteNotFound
from entrypoints.jsonrpc import Dispatcher


def _boom(params: Any) -> Any:
    raise RuntimeError("secret detail /home/alice")


def _missing(params: Any) -> Any:
    raise NoteNotFound("0b7a4c1e-0000-4000-8000-000000000000")


dispatcher = Dispatcher({"echo": lambda params: params, "boom": _boom, "missing": _missing})


def call(raw: str | bytes) -> Any:
    reply = dispatcher.handle(raw.encode() if isinstance(raw, str) else raw)
    return None if reply is None else json.loads(reply)


@pytest.mark.parametrize("request_id", ["abc", 7, -3, 2.5, None, 9007199254740993, ""])
def test_ids_of_every_json_type_come_back_unchanged(request_id: Any) -> None:
    reply = call(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "echo", "params": {"a": 1}}))
    assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {"a": 1}}


def test_malformed_json_is_a_parse_error_with_null_id() -> None:
    assert call('{"jsonrpc": "2.0", "id": 1, "method"')["error"]["code"] == -32700
    assert call('{"jsonrpc": "2.0", "id": 1, "method"')["id"] is None


@pytest.mark.parametrize(
    "message",
    [
        '{"id": 1, "method": "echo"}',
        '{"jsonrpc": "1.0", "id": 1, "method": "echo"}',
        '{"jsonrpc": "2.0", "id": 1, "method": 5}',
        '{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "x"}',
        '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "echo"}',
        '{"jsonrpc": "2.0", "id": true, "method": "echo"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "echo", "extra": 1}',
        "42",
        "[]",
    ],
)
def test_invalid_requests_get_minus_32600(message: str) -> None:
    assert call(message)["error"]["code"] == -32600


def test_an_unknown_method_is_minus_32601_at_once() -> None:
    reply = call('{"jsonrpc": "2.0", "id": 1, "method": "server/discover"}')
    assert reply["error"] == {"code": -32601, "message": "Method not found: server/discover", "data": {"method": "server/discover"}}


def test_notifications_get_no_reply_even_when_they_fail() -> None:
    assert call('{"jsonrpc": "2.0", "method": "echo", "params": {}}') is None
    assert call('{"jsonrpc": "2.0", "method": "boom"}') is None
    assert call('{"jsonrpc": "2.0", "method": "nope"}') is None


def test_an_unexpected_error_is_internal_with_a_fixed_message_and_logged() -> None:
    with structlog.testing.capture_logs() as logs:
        reply = call('{"jsonrpc": "2.0", "id": 1, "method": "boom"}')
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in json.dumps(reply)
    assert logs[0]["event"] == "internal_error" and logs[0]["method"] == "boom"


def test_not_found_is_a_named_server_code_with_the_id() -> None:
    reply = call('{"jsonrpc": "2.0", "id": 1, "method": "missing"}')
    assert reply["error"]["code"] == -32004
    assert reply["error"]["data"] == {"id": "0b7a4c1e-0000-4000-8000-000000000000"}


def test_a_batch_answers_each_request_and_skips_notifications() -> None:
    replies = call(
        '[{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1]},'
        ' {"jsonrpc": "2.0", "method": "echo", "params": {}},'
        ' {"jsonrpc": "2.0", "id": 2, "method": "nope"},'
        " 5]"
    )
    assert [r.get("id") for r in replies] == [1, 2, None]
    assert replies[0]["result"] == [1]
    assert replies[1]["error"]["code"] == -32601
    assert replies[2]["error"]["code"] == -32600


def test_a_batch_of_notifications_gets_no_reply() -> None:
    assert call('[{"jsonrpc": "2.0", "method": "echo"}]') is None


def test_replies_are_one_line_even_with_newlines_in_strings() -> None:
    reply = dispatcher.handle(b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"t": "a\\nb"}}')
    assert reply is not None and b"\n" not in reply
