"""The stdio server process: clean ends, protocol-only stdout, config and data paths."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.serve import MCP_MEMORY, StdioServer, server_env


def test_eof_ends_the_server_cleanly(tmp_path: Path) -> None:
    with StdioServer(tmp_path) as server:
        server.result("memory.get_config")
        code, _ = server.close()
    assert code == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_server_cleanly_without_closing_stdin(tmp_path: Path, signum: int) -> None:
    with StdioServer(tmp_path) as server:
        added = server.result("memory.add_note", {"projectId": "p", "groupId": "g", "text": "kept across restarts"})
        server.process.send_signal(signum)
        assert server.process.wait(timeout=20) == 0
    with StdioServer(tmp_path) as again:
        assert again.result("memory.get", {"id": added["id"]})["text"] == "kept across restarts"


def test_stdout_carries_only_protocol_lines(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"memory.add_note","params":{"projectId":"p","groupId":"g","text":"a\\nb"}}',
        b"garbage",
        b'{"jsonrpc":"2.0","method":"memory.get_config"}',
        b'{"jsonrpc":"2.0","id":2,"method":"memory.list_recent","params":{"projectId":"p"}}',
    ]
    done = subprocess.run(
        [MCP_MEMORY, "serve"], input=b"\n".join(lines) + b"\n", capture_output=True, env=server_env(tmp_path), timeout=60
    )
    out = done.stdout.decode().splitlines()
    replies = [json.loads(line) for line in out]
    assert [r.get("id") for r in replies] == [1, None, 2]
    assert replies[2]["result"]["items"][0]["text"] == "a\nb"
    assert all(json.loads(line)["level"] for line in done.stderr.decode().splitlines())


def test_flags_win_over_the_environment_for_paths(tmp_path: Path) -> None:
    flagged = tmp_path / "flagged"
    with StdioServer(tmp_path, "--config", str(flagged / "c.json"), "--data-dir", str(flagged / "d")) as server:
        paths = server.result("memory.get_config")["paths"]
    assert paths == {"configPath": str(flagged / "c.json"), "dataDir": str(flagged / "d")}


def test_the_first_answer_does_not_wait_for_the_store_or_the_model(tmp_path: Path) -> None:
    started = time.monotonic()
    with StdioServer(tmp_path) as server:
        reply = server.call("server/discover")
        assert reply["error"]["code"] == -32601
        assert time.monotonic() - started < 10
        assert not (tmp_path / "data").exists()


def test_an_unusable_embedder_setting_fails_requests_not_the_server(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"format": 1, "embedder": {"provider": "local", "model": "no-such-model"}}))
    with StdioServer(tmp_path) as server:
        failed = server.call("memory.add_note", {"projectId": "p", "groupId": "g", "text": "x"})
        assert failed["error"]["code"] == -32001
        assert "no-such-model" in failed["error"]["message"]
        assert server.result("memory.get_config")["embedder"]["model"] == "no-such-model"
        switched = server.result("memory.set_config", {"embedder": {"model": "all-MiniLM-L6-v2"}})
        assert switched["effectiveNamespace"] == "local:all-MiniLM-L6-v2:384"
        assert server.result("memory.add_note", {"projectId": "p", "groupId": "g", "text": "x"})["id"]
