"""The repository is a Claude Code plugin marketplace: the real CLI (pinned in
tests/clients/node) validates it, adds it and installs the plugin from it, which gives the
MCP server and every hook, running the ``mcp-memory`` command found on PATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

from local_mcp_memory.entrypoints.cli import claude_settings
from tests.integration.serve import MCP_MEMORY
from tests.integration.claude_code.test_claude_code import CONNECTED, ClaudeCode, end_services

REPOSITORY = Path(__file__).resolve().parents[3]
PLUGIN = REPOSITORY / "plugins" / "mcp-memory"


def with_mcp_memory_on_path(claude: ClaudeCode) -> ClaudeCode:
    """The plugin runs ``mcp-memory`` as a user who installed it with pipx would have it."""
    claude.env["PATH"] = f"{Path(MCP_MEMORY).parent}{os.pathsep}{claude.env['PATH']}"
    return claude


def test_claude_validates_the_marketplace_and_the_plugin(tmp_path: Path) -> None:
    claude = ClaudeCode(tmp_path)
    for path in (REPOSITORY, PLUGIN):
        report = claude.run("plugin", "validate", "--strict", str(path))
        assert "✔ Validation passed" in report, report
    listed = claude.run("plugin", "validate", str(PLUGIN))
    for spec in claude_settings.HOOKS:
        assert f'hooks: {spec.event} {spec.matcher + " " if spec.matcher else ""}command "mcp-memory hook {spec.argument}"' in listed
    assert 'mcpServers: mcp-memory stdio mcp-memory ["serve"]' in listed


def test_the_plugin_declares_what_install_claude_writes() -> None:
    """One table of hooks (``claude_settings.HOOKS``) for both ways of installing."""
    declared = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert declared == {spec.event: [spec.group("mcp-memory " + spec.hook_arguments())] for spec in claude_settings.HOOKS}
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert server == {claude_settings.SERVER_NAME: {"command": "mcp-memory", "args": ["serve"]}}
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPOSITORY / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert (entry["name"], entry["version"], REPOSITORY / entry["source"]) == (manifest["name"], manifest["version"], PLUGIN)


def test_installing_the_plugin_gives_the_server_and_every_hook(tmp_path: Path) -> None:
    claude = with_mcp_memory_on_path(ClaudeCode(tmp_path))
    claude.env["MCP_MEMORY_DATA_DIR"] = str(tmp_path / "data")
    claude.env["MCP_MEMORY_CONFIG"] = str(tmp_path / "config.json")
    assert "Successfully added marketplace: mcp-memory" in claude.run("plugin", "marketplace", "add", str(REPOSITORY))
    assert "Successfully installed plugin: mcp-memory@mcp-memory" in claude.run("plugin", "install", "mcp-memory@mcp-memory")

    details = claude.run("plugin", "details", "mcp-memory@mcp-memory")
    hooks = next(line for line in details.splitlines() if line.strip().startswith("Hooks ("))
    assert hooks.split()[:2] == ["Hooks", f"({len(claude_settings.HOOKS)})"], details
    assert all(spec.event in hooks for spec in claude_settings.HOOKS), details
    assert "MCP servers (1)  mcp-memory" in details, details
    try:
        assert CONNECTED in claude.status_of("plugin:mcp-memory:mcp-memory")
    finally:
        end_services(tmp_path / "data")
    assert "✔ enabled" in claude.run("plugin", "list")
