"""The part every fake HTTP server of the tests shares: a real server on 127.0.0.1 (a free
port), run in a thread for the length of a ``with`` block. A subclass names its request
handler class (``handler``), which reaches the fake as ``self.server.fake``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


class Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: Any


class LocalHttpFake:
    handler: ClassVar[type[BaseHTTPRequestHandler]]

    def __init__(self) -> None:
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first (use it as a context manager)"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._server = Server(("127.0.0.1", 0), self.handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
