"""Run a real ``mcp-memory serve --transport http`` on 127.0.0.1 and talk to it with httpx."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.integration.serve import MCP_MEMORY, server_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rpc(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


class HttpServer:
    """A server subprocess with its own home (config, data, log). ``config`` is written
    to the config file before start; ``env`` adds environment variables. Logs go to
    ``home/server.log`` (a full stderr pipe would block the server)."""

    def __init__(
        self,
        home: Path,
        *,
        config: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        token: str | None = None,
        program: str = MCP_MEMORY,
    ) -> None:
        home.mkdir(parents=True, exist_ok=True)
        if config is not None:
            (home / "config.json").write_text(json.dumps({"format": 1, **config}))
        self.home = home
        self.host = host
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self._log = open(home / "server.log", "ab")
        self.process = subprocess.Popen(
            [program, "serve", "--transport", "http", "--host", host, "--port", str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=server_env(home, **(env or {})),
            cwd=home,
        )

    def client(self, **kwargs: Any) -> httpx.Client:
        headers = {"authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30, **kwargs)

    def wait_ready(self, timeout: float = 30) -> HttpServer:
        deadline = time.monotonic() + timeout
        with self.client() as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise AssertionError(f"server exited {self.process.returncode}: {self.log()}")
                try:
                    if client.get("/health").status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        raise AssertionError(f"server not ready after {timeout} s: {self.log()}")

    def wait_listening(self, timeout: float = 30) -> httpx.Response:
        """The first answer of ``/health``, whatever its status (503: the store is not open)."""
        deadline = time.monotonic() + timeout
        with self.client() as client:
            while True:
                if self.process.poll() is not None:
                    raise AssertionError(f"server exited {self.process.returncode}: {self.log()}")
                try:
                    return client.get("/health")
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise AssertionError(f"server not listening after {timeout} s: {self.log()}") from None
                    time.sleep(0.05)

    def stop(self, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self._log.close()
        return code

    def log(self) -> str:
        return (self.home / "server.log").read_text(errors="replace")

    def __enter__(self) -> HttpServer:
        return self.wait_ready()

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
