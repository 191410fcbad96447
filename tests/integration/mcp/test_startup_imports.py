"""An MCP handshake loads nothing heavy: the store, the model and the HTTP client (and
the logging library) are imported on first use, so ``initialize`` is answered fast.

Measured with ``python -X importtime`` on the real ``mcp-memory serve`` script.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.serve import MCP_MEMORY, server_env

HEAVY = ("numpy", "faiss", "httpx", "onnxruntime", "tokenizers", "uvicorn", "structlog")
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "ping"},
]


def imported_during(messages: list[dict[str, object]], home: Path) -> tuple[set[str], list[dict[str, object]]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", MCP_MEMORY, "serve", "--transport", "stdio"],
        input=b"".join(json.dumps(m).encode() + b"\n" for m in messages),
        capture_output=True,
        env=server_env(home),
        cwd=home,
        timeout=60,
    )
    modules = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", done.stderr.decode(), re.MULTILINE))
    return modules, [json.loads(line) for line in done.stdout.splitlines()]


def test_the_mcp_handshake_imports_no_heavy_library(tmp_path: Path) -> None:
    modules, replies = imported_during(HANDSHAKE, tmp_path)
    assert [r.get("id") for r in replies] == [0, 1, 2, 3] and "result" in replies[2]
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"imported before the first tool call: {heavy}"


def test_initialize_does_not_load_the_use_cases(tmp_path: Path) -> None:
    modules, replies = imported_during(HANDSHAKE[:2], tmp_path)
    assert "result" in replies[1]
    light = {"local_mcp_memory.application.errors", "local_mcp_memory.entrypoints.methods", "local_mcp_memory.entrypoints.methods.texts"}
    assert not any(m.startswith(("local_mcp_memory.application.", "local_mcp_memory.entrypoints.methods")) and m not in light for m in modules)
