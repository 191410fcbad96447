"""Fake OpenAI and Ollama embedding servers: real HTTP on 127.0.0.1, in a thread.

They speak the real APIs' JSON shapes, compute vectors with ``HashingEmbedder`` (so a
vector depends on its text only), record every request, and play scripted faults::

    with FakeOpenAIServer(api_key="sk-test") as server:
        server.fail_next(429, headers={"Retry-After": "2"})
        client = OpenAIEmbedder(httpx.Client(), api_key="sk-test", base_url=server.base_url)

``fail_next`` answers the next request(s) with an error; ``delay_next`` answers late;
``dim`` may be changed between calls to play a model that changed.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs

from tests.fakes.hashing_embedder import HashingEmbedder
from tests.fakes.local_http import LocalHttpFake, Server


@attrs.define
class Fault:
    status: int | None = None  # None: answer normally (after the delay)
    body: Any = None
    headers: dict[str, str] = attrs.field(factory=dict)
    delay: float = 0.0


@attrs.define
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    server: Server
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fake = self.server.fake
        fake.record(Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        fault = fake.take_fault()
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.status is not None:
            self.reply(fault.status, fault.body, fault.headers)
            return
        status, payload, headers = fake.answer(self.path, self.headers, body)
        self.reply(status, payload, headers)

    def reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, (bytes, str)):
            data = payload.encode() if isinstance(payload, str) else payload
            kind = "text/plain; charset=utf-8"
        else:
            data = json.dumps(payload).encode()
            kind = "application/json; charset=utf-8"
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


class FakeEmbeddingServer(LocalHttpFake):
    """Base: lifecycle, request log and fault script. Subclasses implement ``answer``."""

    handler = _Handler

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.dim = dim
        self.requests: list[Recorded] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()

    def fail_next(self, status: int, body: Any = None, headers: dict[str, str] | None = None, times: int = 1) -> None:
        with self._lock:
            self._faults.extend(Fault(status, body if body is not None else self.error_body(status), headers or {}) for _ in range(times))

    def delay_next(self, seconds: float, times: int = 1) -> None:
        with self._lock:
            self._faults.extend(Fault(delay=seconds) for _ in range(times))

    def take_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def vectors(self, texts: list[str]) -> list[list[float]]:
        return HashingEmbedder(dim=self.dim).embed(texts).tolist()

    def error_body(self, status: int) -> Any:
        return {"error": f"fake error {status}"}

    def answer(self, path: str, headers: Any, body: Any) -> tuple[int, Any, dict[str, str]]:
        raise NotImplementedError


class FakeOpenAIServer(FakeEmbeddingServer):
    """``POST /v1/embeddings`` as OpenAI answers it. ``api_key=None`` accepts any caller;
    empty strings and more than ``max_inputs`` inputs are refused with 400, like OpenAI."""

    def __init__(self, dim: int = 16, api_key: str | None = None, max_inputs: int = 2048, reverse: bool = False) -> None:
        super().__init__(dim)
        self.api_key = api_key
        self.max_inputs = max_inputs
        self.reverse = reverse  # answer items in reverse order: clients must sort by index

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def error_body(self, status: int) -> Any:
        return {"error": {"message": f"fake error {status}", "type": "server_error", "param": None, "code": None}}

    def answer(self, path: str, headers: Any, body: Any) -> tuple[int, Any, dict[str, str]]:
        if path != "/v1/embeddings":
            return 404, {"error": {"message": f"Invalid URL (POST {path})", "type": "invalid_request_error"}}, {}
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            sent = (headers.get("Authorization") or "").removeprefix("Bearer ")
            return 401, {"error": {"message": f"Incorrect API key provided: {sent[:3]}***{sent[-4:]}.", "type": "invalid_request_error", "code": "invalid_api_key"}}, {}
        inputs = body.get("input") if isinstance(body, dict) else None
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not inputs or len(inputs) > self.max_inputs or any(not isinstance(t, str) or t == "" for t in inputs):
            return 400, {"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error"}}, {}
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(self.vectors(inputs))]
        if self.reverse:
            data.reverse()
        usage = {"prompt_tokens": sum(len(t.split()) for t in inputs), "total_tokens": sum(len(t.split()) for t in inputs)}
        return 200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}, {}


class FakeOllamaServer(FakeEmbeddingServer):
    """Ollama's ``/api/embed`` (``legacy=False``) and ``/api/embeddings``. A model not in
    ``models`` is answered like Ollama does: JSON 404 "model ... not found". Ollama has no
    authentication of its own; ``token`` plays a reverse proxy in front of it that answers
    401 to any request without ``Authorization: Bearer <token>``."""

    def __init__(
        self, dim: int = 12, models: tuple[str, ...] = ("nomic-embed-text",), legacy: bool = False, token: str | None = None
    ) -> None:
        super().__init__(dim)
        self.models = models
        self.legacy = legacy
        self.token = token

    def answer(self, path: str, headers: Any, body: Any) -> tuple[int, Any, dict[str, str]]:
        if self.token is not None and headers.get("Authorization") != f"Bearer {self.token}":
            return 401, "401 Unauthorized", {"WWW-Authenticate": "Bearer"}
        if path == "/api/embed" and not self.legacy:
            return self._embed(body)
        if path == "/api/embeddings":
            return self._embeddings(body)
        return 404, "404 page not found", {}

    def _missing(self, body: Any) -> tuple[int, Any, dict[str, str]] | None:
        model = body.get("model") if isinstance(body, dict) else None
        if model not in self.models:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}, {}
        return None

    def _embed(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        missing = self._missing(body)
        if missing:
            return missing
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list):
            return 400, {"error": "invalid input type"}, {}
        return 200, {"model": body["model"], "embeddings": self.vectors(inputs), "total_duration": 1000, "load_duration": 10, "prompt_eval_count": len(inputs)}, {}

    def _embeddings(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        missing = self._missing(body)
        if missing:
            return missing
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            return 400, {"error": "invalid prompt"}, {}
        return 200, {"embedding": self.vectors([prompt])[0] if prompt else []}, {}


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
