"""``mcp-memory serve --project``, ``--max-text-chars`` and ``--tools`` shape what the MCP tools do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.integration.serve import MCP_MEMORY, StdioServer, server_env


def test_tools_use_the_project_flag_and_cut_texts_at_max_text_chars(tmp_path: Path) -> None:
    project = tmp_path / "linked"
    (tmp_path / "real").mkdir()
    project.symlink_to(tmp_path / "real")
    with StdioServer(tmp_path / "home", "--project", str(project), "--max-text-chars", "40") as server:
        added = server.result("tools/call", {"name": "memory_add_note", "arguments": {"groupId": "global", "text": "z" * 100}})
        note_id = added["structuredContent"]["id"]
        listed = server.result("tools/call", {"name": "memory_list_recent", "arguments": {}})
        whole = server.result("tools/call", {"name": "memory_get", "arguments": {"id": note_id}})
    item = listed["structuredContent"]["items"][0]
    assert item["projectId"] == os.path.realpath(tmp_path / "real")
    assert item["text"].startswith("z" * 40) and not item["text"].startswith("z" * 41) and note_id in item["text"]
    assert whole["structuredContent"]["text"] == "z" * 100


def test_a_bad_max_text_chars_is_a_usage_error(tmp_path: Path) -> None:
    flag = subprocess.run([MCP_MEMORY, "serve", "--max-text-chars", "0"], capture_output=True, env=server_env(tmp_path), timeout=30)
    env = subprocess.run(
        [MCP_MEMORY, "serve"], capture_output=True, env=server_env(tmp_path, MCP_MEMORY_MAX_TEXT_CHARS="lots"), timeout=30
    )
    assert flag.returncode == 2 and b"--max-text-chars" in flag.stderr
    assert env.returncode == 2 and b"MCP_MEMORY_MAX_TEXT_CHARS" in env.stderr


def test_a_max_text_chars_setting_in_other_digits_is_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    env = subprocess.run([MCP_MEMORY, "serve"], capture_output=True, env=server_env(tmp_path, MCP_MEMORY_MAX_TEXT_CHARS="²"), timeout=30)
    assert env.returncode == 2 and b"Traceback" not in env.stderr
    assert "MCP_MEMORY_MAX_TEXT_CHARS must be a positive integer (got '²')" in env.stderr.decode()


def test_serve_lists_the_default_tools_and_every_method_with_tools_all(tmp_path: Path) -> None:
    from local_mcp_memory.entrypoints.mcp.tools import DEFAULT_TOOLS
    from local_mcp_memory.entrypoints.methods.table import METHODS

    every = {name.replace(".", "_") for name in METHODS}
    cases = [((), {}, DEFAULT_TOOLS), (("--tools", "all"), {}, every), ((), {"MCP_MEMORY_TOOLS": "all"}, every), (("--tools", "default"), {"MCP_MEMORY_TOOLS": "all"}, DEFAULT_TOOLS)]
    for number, (args, env, expected) in enumerate(cases):
        with StdioServer(tmp_path / f"home-{number}", *args, env=env) as server:
            listed = {t["name"] for t in server.result("tools/list", {})["tools"]}
        assert listed == expected, (args, env)


def test_a_bad_tools_setting_is_a_usage_error(tmp_path: Path) -> None:
    flag = subprocess.run([MCP_MEMORY, "serve", "--tools", "some"], capture_output=True, env=server_env(tmp_path), timeout=30)
    env = subprocess.run([MCP_MEMORY, "serve"], capture_output=True, env=server_env(tmp_path, MCP_MEMORY_TOOLS="most"), timeout=30)
    assert flag.returncode == 2 and b"--tools" in flag.stderr
    assert env.returncode == 2 and b"MCP_MEMORY_TOOLS must be one of default, all (got 'most')" in env.stderr


def test_a_bad_local_products_setting_is_a_usage_error(tmp_path: Path) -> None:
    env = server_env(tmp_path, MCP_MEMORY_LOCAL_PRODUCTS="int4")
    refused = subprocess.run([MCP_MEMORY, "serve"], capture_output=True, env=env, timeout=30)
    assert refused.returncode == 2 and b"MCP_MEMORY_LOCAL_PRODUCTS must be one of auto, int8, float (got 'int4')" in refused.stderr
