"""Drive a real ``mcp-memory serve`` process over stdio, one NDJSON line at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

MCP_MEMORY = str(Path(sys.executable).with_name("mcp-memory"))


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    env.update(
        HOME=str(home),
        MCP_MEMORY_CONFIG=str(home / "config.json"),
        MCP_MEMORY_DATA_DIR=str(home / "data"),
        **extra,
    )
    return env


class StdioServer:
    """A server subprocess; ``call`` sends one request and reads its one reply line. ``env``
    adds environment variables to ``server_env``'s."""

    def __init__(
        self, home: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, program: str = MCP_MEMORY
    ) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [program, "serve", "--transport", "stdio", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(home, **(env or {})),
            cwd=cwd or home,
        )
        self._next_id = 0

    def send_line(self, line: bytes) -> dict[str, Any] | list[Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(line.rstrip(b"\n") + b"\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline()
        assert reply.endswith(b"\n"), f"no reply line; stderr: {self.stderr_so_far()}"
        return json.loads(reply)

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.send_line(json.dumps(message).encode())
        assert isinstance(reply, dict) and reply["id"] == self._next_id
        return reply

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def stderr_so_far(self) -> str:
        return "(stderr is read at close)"

    def close(self, timeout: float = 20) -> tuple[int, str]:
        assert self.process.stdin
        self.process.stdin.close()
        code = self.process.wait(timeout=timeout)
        stderr = self.process.stderr.read().decode() if self.process.stderr else ""
        return code, stderr

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.close()
