"""The dispatcher speaks JSON-RPC 2.0 strictly, whatever the routes behind it."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import structlog

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.entrypoints.rpc.dispatcher import MAX_DEPTH, Dispatcher


def _boom(params: Any) -> Any:
    raise RuntimeError("secret detail /home/alice")


def _missing(params: Any) -> Any:
    raise NoteNotFound("0b7a4c1e-0000-4000-8000-000000000000")


def _deeply_nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


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


def test_routes_are_looked_up_in_each_table_given_in_order() -> None:
    tables = Dispatcher({"first": lambda params: "first", "both": lambda params: "first"}, {"both": lambda params: "second", "second": lambda params: "second"})
    answers = {name: json.loads(tables.handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": name}).encode()) or b"{}") for name in ("first", "second", "both", "none")}
    assert [answers[name].get("result") for name in ("first", "second", "both")] == ["first", "second", "first"]
    assert answers["none"]["error"]["code"] == -32601


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


def _nested(depth: int) -> bytes:
    return b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"v": ' + b"[" * (depth - 2) + b"]" * (depth - 2) + b"}}"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": "\xc3"}}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "\xed\xa0\x80"}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1e400}}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": -1e999}}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": "\\ud800"}}', -32700),
        (b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 1, "method": "echo"}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo\x00"}', -32700),
        (b"\x00\x00\x00", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "met', -32700),
        (b"[" * 2000, -32600),
        (b"{\"a\":" * 5000, -32600),
        (_nested(257), -32600),
    ],
    ids=["invalid utf-8", "utf-8 surrogate", "huge number", "huge negative", "lone surrogate escape", "bom", "nul in string", "nul bytes", "truncated", "deep arrays", "deep objects", "one level too deep"],
)
def test_bytes_that_cannot_be_a_request_get_an_error_with_null_id(raw: bytes, code: int) -> None:
    reply = call(raw)
    assert reply["error"]["code"] == code and reply["id"] is None
    assert call('{"jsonrpc": "2.0", "id": 2, "method": "echo", "params": [1]}')["result"] == [1]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1,}}', "(trailing comma in object (byte 64))"),
        (b'{"jsonrpc": "2.0", "id": 1, "met', "(input data was truncated)"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": "x\\ud800y"}}', "(\\ud800 is a lone surrogate escape, not a character)"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": "\\udc00"}}', "(invalid utf-16 surrogate pair (byte 69))"),
    ],
    ids=["trailing comma", "truncated", "lone high surrogate", "lone low surrogate"],
)
def test_a_parse_error_says_what_is_wrong_and_where(raw: bytes, reason: str) -> None:
    assert call(raw)["error"]["message"] == "Parse error: the message is not valid JSON " + reason


def test_a_message_nested_as_deep_as_allowed_is_served() -> None:
    reply = call(_nested(MAX_DEPTH))
    assert reply["id"] == 1 and "result" in reply


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = "[{" * 5000 + '\\"[' * 300 + "\\\\"
    reply = call(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"t": text}}))
    assert reply["result"] == {"t": text}


def test_deep_nesting_is_refused_in_a_thread_with_a_small_stack() -> None:
    replies: list[Any] = []
    threading.stack_size(256 * 1024)
    try:
        worker = threading.Thread(target=lambda: replies.append(call(b"[" * 100_000 + b"]" * 100_000)))
        worker.start()
        worker.join()
    finally:
        threading.stack_size(0)
    assert replies[0]["error"]["code"] == -32600


def test_a_batch_of_thousands_is_answered_member_by_member() -> None:
    batch = [{"jsonrpc": "2.0", "id": i, "method": "echo", "params": [i]} for i in range(5000)]
    replies = call(json.dumps(batch))
    assert [r["result"] for r in replies] == [[i] for i in range(5000)]


@pytest.mark.parametrize(
    "result",
    [object(), "\ud800", {"deep": _deeply_nested_list(5000)}, {(1, 2): "tuple key"}],
    ids=["not json", "surrogate", "too deep to encode", "key not a string"],
)
def test_a_result_that_cannot_be_encoded_is_an_internal_error_and_the_next_request_is_served(result: Any) -> None:
    bad = Dispatcher({"bad": lambda params: result, "echo": lambda params: params})
    with structlog.testing.capture_logs() as logs:
        reply = json.loads(bad.handle(b'[{"jsonrpc": "2.0", "id": 1, "method": "bad"}, {"jsonrpc": "2.0", "id": 2, "method": "echo", "params": [2]}]') or b"")
    assert reply[0] == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}
    assert reply[1]["result"] == [2]
    assert any(entry["event"] == "internal_error" for entry in logs)
