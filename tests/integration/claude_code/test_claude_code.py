"""Claude Code (the real CLI, pinned in tests/clients/node) connects to mcp-memory.

``claude mcp list`` starts every configured server, runs initialize and tools/list, and
prints ``✔ Connected`` per healthy server; it exits 0 whatever the outcome, so the tests
read the mark. It needs no login. HOME and CLAUDE_CONFIG_DIR point into a temporary
directory, and every network feature of the CLI is switched off.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.integration.http_server import HttpServer
from tests.integration.serve import MCP_MEMORY

CLAUDE = Path(__file__).resolve().parents[2] / "clients" / "node" / "node_modules" / ".bin" / "claude"
CONNECTED = "✔ Connected"


class ClaudeCode:
    def __init__(self, root: Path) -> None:
        if not CLAUDE.exists():
            pytest.fail(f"{CLAUDE} is missing: run `npm ci --prefix tests/clients/node` (scripts/test does)")
        self.project = root / "project"
        for path in (root / "home", root / "claude-config", self.project):
            path.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "CLAUDE_CONFIG_DIR": str(root / "claude-config"),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "MCP_MEMORY_SERVICE_IDLE": "5",  # a hook Claude Code leaves running may start a service after the test
        }

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(CLAUDE), *args], cwd=self.project, env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def status_of(self, name: str) -> str:
        listing = self.run("mcp", "list")
        lines = [line for line in listing.splitlines() if line.startswith(f"{name}:")]
        assert len(lines) == 1, listing
        return lines[0]


def services_of(data_dir: Path) -> list[int]:
    """Pids of the ``mcp-memory service`` processes hooks started for ``data_dir``, named in
    their arguments (``--data-dir``) or their environment (``MCP_MEMORY_DATA_DIR``)."""
    found = []
    named = os.fsencode(str(data_dir))
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in argv and b"local_mcp_memory.entrypoints.cli" in argv and (named in argv or b"MCP_MEMORY_DATA_DIR=" + named in environ):
            found.append(int(entry.name))
    return found


def end_services(data_dir: Path) -> None:
    """A test's hooks leave no service behind (they would live until idle)."""
    for pid in services_of(data_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_claude_code_connects_over_stdio(tmp_path: Path) -> None:
    claude = ClaudeCode(tmp_path)
    claude.run(
        "mcp", "add", "mcp-memory",
        "-e", f"MCP_MEMORY_CONFIG={tmp_path / 'config.json'}",
        "-e", f"MCP_MEMORY_DATA_DIR={tmp_path / 'data'}",
        "--", MCP_MEMORY, "serve",
    )  # fmt: skip
    assert CONNECTED in claude.status_of("mcp-memory")


def test_claude_code_connects_over_streamable_http(tmp_path: Path) -> None:
    claude = ClaudeCode(tmp_path)
    with HttpServer(tmp_path / "server") as server:
        claude.run("mcp", "add", "--transport", "http", "mcp-memory", f"{server.base_url}/mcp")
        assert CONNECTED in claude.status_of("mcp-memory")


def test_claude_code_reports_a_broken_server(tmp_path: Path) -> None:
    claude = ClaudeCode(tmp_path)
    claude.run("mcp", "add", "broken", "--", MCP_MEMORY, "serve", "--transport", "nope")
    assert CONNECTED not in claude.status_of("broken")
