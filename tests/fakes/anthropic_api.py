"""A fake Anthropic Messages API: real HTTP on 127.0.0.1, in a thread, for whole Claude Code
sessions run offline (``ANTHROPIC_BASE_URL`` pointed at it).

It answers ``POST /v1/messages`` (Claude Code adds ``?beta=true``) as the real API does,
streamed as server-sent events (``message_start``, ``content_block_start`` /
``content_block_delta`` / ``content_block_stop`` per block, ``message_delta``,
``message_stop``) when the request says ``"stream": true`` and as one JSON message otherwise;
``POST /v1/messages/count_tokens`` with a rough count; anything else with the API's JSON 404.
Every request is recorded with its body::

    with FakeAnthropicApi() as api:
        api.script(tool_use("Bash", {"command": "git commit -am fix"}), text("Done."))
        run claude -p ... with ANTHROPIC_BASE_URL=api.url
        api.conversation()   # the requests of the session's own conversation

The script is for the session's conversation: each request carrying tools (the agent's
loop) takes the next scripted answer, and the last one is repeated once the script is
used up. Side requests the CLI makes on its own (a session title, a topic check: no
tools) get ``side_answer``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

import attrs

from tests.fakes.local_http import LocalHttpFake, Server

Block = dict[str, Any]

_ids = itertools.count(1)


def text(words: str) -> list[Block]:
    """An answer: one text block, ending the turn."""
    return [{"type": "text", "text": words}]


def tool_use(name: str, arguments: dict[str, Any], preface: str | None = None) -> list[Block]:
    """An answer calling the tool ``name`` (after a short text when ``preface`` is given)."""
    call = {"type": "tool_use", "id": f"toolu_fake{next(_ids):04d}", "name": name, "input": arguments}
    return ([] if preface is None else text(preface)) + [call]


@attrs.define
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any

    @property
    def is_conversation(self) -> bool:
        return self.path == "/v1/messages" and isinstance(self.body, dict) and bool(self.body.get("tools"))

    def texts(self) -> Iterator[str]:
        """Every text the request sends the model: system blocks, then each message's text
        and tool results, in order."""
        body = self.body if isinstance(self.body, dict) else {}
        system = body.get("system")
        yield from [system] if isinstance(system, str) else _block_texts(system)
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            yield from [content] if isinstance(content, str) else _block_texts(content)

    def all_text(self) -> str:
        return "\n".join(self.texts())


def _block_texts(blocks: Any) -> Iterator[str]:
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            yield block["text"]
        content = block.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from _block_texts(content)


class _Handler(BaseHTTPRequestHandler):
    server: Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def _read(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _handle(self) -> None:
        url = urlsplit(self.path)
        request = Recorded(self.command, url.path, url.query, {k.lower(): v for k, v in self.headers.items()}, self._read())
        status, kind, data = self.server.fake.respond(request)
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_fake{next(_ids):06d}")
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle  # noqa: N815 (http.server's naming)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FakeAnthropicApi(LocalHttpFake):
    MODEL_FALLBACK = "claude-sonnet-4-5"
    handler = _Handler

    def __init__(self, side_answer: str = "Notes") -> None:
        super().__init__()
        self.requests: list[Recorded] = []
        self.side_answer = side_answer
        self._answers: list[list[Block]] = []
        self._taken = 0
        self._lock = threading.Lock()

    def script(self, *answers: list[Block]) -> None:
        """The conversation's answers, in order (replacing any earlier script)."""
        with self._lock:
            self._answers = list(answers)
            self._taken = 0

    def conversation(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.is_conversation]

    def respond(self, request: Recorded) -> tuple[int, str, bytes]:
        with self._lock:
            self.requests.append(request)
            if request.method == "POST" and request.path == "/v1/messages" and isinstance(request.body, dict):
                blocks = self._next_answer() if request.is_conversation else text(self.side_answer)
            else:
                blocks = None
        if blocks is None:
            if request.method == "POST" and request.path == "/v1/messages/count_tokens":
                return _json(200, {"input_tokens": max(1, len(request.all_text()) // 4)})
            return _json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"Not found: {request.path}"}})
        message = self._message(request, blocks)
        if request.body.get("stream"):
            return 200, "text/event-stream; charset=utf-8", _events(message)
        return _json(200, message)

    def _next_answer(self) -> list[Block]:
        if not self._answers:
            return text("OK.")
        answer = self._answers[min(self._taken, len(self._answers) - 1)]
        self._taken += 1
        return answer

    def _message(self, request: Recorded, blocks: list[Block]) -> dict[str, Any]:
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return {
            "id": f"msg_fake{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model") or self.MODEL_FALLBACK,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": max(1, len(request.all_text()) // 4), "output_tokens": 8},
        }


def _json(status: int, payload: Any) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(payload).encode()


def _events(message: dict[str, Any]) -> bytes:
    """``message`` as the API streams it."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            {"type": "content_block_start", "index": index, "content_block": opening},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": 8}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
