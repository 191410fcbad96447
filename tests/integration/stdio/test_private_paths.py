"""A real ``mcp-memory serve`` under umask 022 keeps the user's files private from its first
start: the config and data directories, and every parent it creates for them, are 0700
even before the config file is written; the config file is 0600 whenever it exists."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from tests.integration.serve import MCP_MEMORY

GET_CONFIG = b'{"jsonrpc":"2.0","id":1,"method":"memory.get_config"}\n'
SET_CONFIG = b'{"jsonrpc":"2.0","id":2,"method":"memory.set_config","params":{"embedder":{"model":"all-MiniLM-L6-v2"}}}\n'


def serve_once(home: Path, lines: bytes, **env: str) -> list[dict]:
    """Start ``serve`` in ``home`` with umask 022, send ``lines``, return the replies."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    completed = subprocess.run(
        [MCP_MEMORY, "serve", "--transport", "stdio"],
        input=lines,
        capture_output=True,
        env={**environ, "HOME": str(home), **env},
        cwd=home,
        umask=0o022,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    return [json.loads(line) for line in completed.stdout.splitlines()]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_default_directories_are_private_before_anything_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    [reply] = serve_once(home, GET_CONFIG)
    root = home / ".local-mcp-memory"
    assert reply["result"]["paths"] == {"configPath": str(root / "config.json"), "dataDir": str(root / "data")}
    assert not (root / "config.json").exists()
    assert (mode(root), mode(root / "data")) == (0o700, 0o700)
    assert mode(home) == 0o755  # a directory the server did not create keeps its mode


def test_parents_created_for_configured_paths_are_private_too(tmp_path: Path) -> None:
    config, data = tmp_path / "a" / "b" / "config.json", tmp_path / "x" / "y" / "data"
    serve_once(tmp_path, GET_CONFIG, MCP_MEMORY_CONFIG=str(config), MCP_MEMORY_DATA_DIR=str(data))
    for directory in (tmp_path / "a", config.parent, tmp_path / "x", data.parent, data):
        assert mode(directory) == 0o700, directory


def test_the_config_file_is_private_when_written_and_made_private_at_start(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    replies = serve_once(tmp_path, SET_CONFIG, MCP_MEMORY_CONFIG=str(config), MCP_MEMORY_DATA_DIR=str(tmp_path / "data"))
    assert replies[0]["result"]["ok"] is True
    assert mode(config) == 0o600
    config.chmod(0o644)  # loosened by hand
    serve_once(tmp_path, GET_CONFIG, MCP_MEMORY_CONFIG=str(config), MCP_MEMORY_DATA_DIR=str(tmp_path / "data"))
    assert mode(config) == 0o600
