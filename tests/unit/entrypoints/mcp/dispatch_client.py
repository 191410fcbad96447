"""A client of the MCP methods on the shared dispatcher, sending one message at a time as a
transport would, with in-memory fakes behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.mcp import McpOptions, TextBounds
from local_mcp_memory.entrypoints.server import build_dispatcher


class Client:
    """``tools``: the tools listed, every method's by default (``serve --tools all``)."""

    def __init__(
        self, services: Services, project: Path, bounds: TextBounds = TextBounds(), tools: frozenset[str] | None = None
    ) -> None:
        self.dispatcher = build_dispatcher(lambda: services, McpOptions(project=str(project), bounds=bounds, tools=tools))
        self._id = 0

    def send(self, message: dict[str, Any]) -> Any:
        reply = self.dispatcher.handle(json.dumps(message).encode())
        return None if reply is None else json.loads(reply)

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message)

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, params: Any = None) -> dict[str, Any]:
        reply = self.call(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments})

    def tools(self) -> dict[str, dict[str, Any]]:
        return {t["name"]: t for t in self.result("tools/list")["tools"]}
