"""``mcp-memory install-claude`` / ``uninstall-claude`` as a user runs them, and what the real
Claude Code CLI (pinned in tests/clients/node) makes of the files they write."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from local_mcp_memory.entrypoints.cli.claude_settings import HOOKS, MARKER
from tests.integration.serve import MCP_MEMORY, server_env
from tests.integration.claude_code.test_claude_code import CONNECTED, ClaudeCode, end_services


def run(home: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``mcp-memory`` of a virtualenv not on PATH: the entries name it by its absolute path."""
    environ = server_env(home, **{"PATH": "/usr/bin:/bin", **env})
    return subprocess.run([MCP_MEMORY, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120)


def test_install_claude_reports_what_it_did_and_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "app"
    project.mkdir()
    settings, servers = project / ".claude" / "settings.json", project / ".mcp.json"
    first = run(home, project, "install-claude")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"wrote {settings}, {servers}\n")
    assert all(f"  {spec.event}: {MCP_MEMORY} hook {spec.argument} {MARKER}\n" in first.stdout for spec in HOOKS), first.stdout
    again = run(home, tmp_path, "install-claude", "--project-dir", str(project))
    assert again.returncode == 0 and again.stdout.startswith("already installed, nothing written:")

    settings.write_text('{"hooks": {"SessionStart": [}')
    broken = run(home, project, "uninstall-claude")
    assert broken.returncode == 1 and "not valid JSON" in broken.stderr and "nothing was written" in broken.stderr
    assert settings.read_text() == '{"hooks": {"SessionStart": [}' and "mcp-memory" in json.loads(servers.read_text())["mcpServers"]

    missing = run(home, tmp_path, "install-claude", "--project-dir", str(tmp_path / "no-such-project"))
    assert missing.returncode == 1 and "no such directory" in missing.stderr
    assert not (tmp_path / "no-such-project").exists()
    both = run(home, tmp_path, "uninstall-claude", "--scope", "user", "--project-dir", str(project))
    assert both.returncode == 2 and "--project-dir is for --scope project" in both.stderr


def test_user_scope_gives_claude_code_the_connected_server_and_uninstall_takes_back_only_its_own(tmp_path: Path) -> None:
    claude = ClaudeCode(tmp_path / "claude")
    config_dir = Path(claude.env["CLAUDE_CONFIG_DIR"])
    claude.run("mcp", "add", "--scope", "user", "theirs", "--", MCP_MEMORY, "serve")
    state_before = json.loads((config_dir / ".claude.json").read_text())
    home = tmp_path / "memory"
    paths = ("--config", str(home / "config.json"), "--data-dir", str(home / "data"))

    done = run(home, tmp_path, "install-claude", "--scope", "user", *paths, CLAUDE_CONFIG_DIR=str(config_dir))
    assert done.returncode == 0, done.stderr
    try:
        assert CONNECTED in claude.status_of("mcp-memory") and CONNECTED in claude.status_of("theirs")
    finally:
        end_services(home / "data")  # claude mcp list runs the SessionStart hook, which starts one
    hooks = json.loads((config_dir / "settings.json").read_text())["hooks"]
    assert [spec.event for spec in HOOKS] == list(hooks)
    assert f"MCP_MEMORY_DATA_DIR={home / 'data'}" in hooks["Stop"][0]["hooks"][0]["command"]
    assert (config_dir / ".claude.json").stat().st_mode & 0o777 == 0o600

    gone = run(home, tmp_path, "uninstall-claude", "--scope", "user", CLAUDE_CONFIG_DIR=str(config_dir))
    assert gone.returncode == 0 and gone.stdout.startswith("removed install-claude's entries from")
    assert not (config_dir / "settings.json").exists()  # it held nothing else
    state_after = json.loads((config_dir / ".claude.json").read_text())
    assert state_after["mcpServers"] == state_before["mcpServers"]
    assert "mcp-memory:" not in claude.run("mcp", "list") and CONNECTED in claude.status_of("theirs")


def test_an_older_installs_session_page_hook_is_left_alone_and_reported(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "app"
    older = {"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": 'mcp-memory context --project "${CLAUDE_PROJECT_DIR:-$PWD}"', "timeout": 30}]}  # fmt: skip
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"SessionStart": [older]}}))
    done = run(home, project, "install-claude")
    assert done.returncode == 0 and "runs `mcp-memory context` without the marker" in done.stderr
    assert json.loads(settings.read_text())["hooks"]["SessionStart"][0] == older
    run(home, project, "uninstall-claude")
    assert json.loads(settings.read_text()) == {"hooks": {"SessionStart": [older]}}


def test_a_hook_entry_claude_code_would_not_read_is_reported_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    for content in ('{"hooks":{"Stop":[{"matcher":5,"hooks":[]}]}}', '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":5}]}]}}'):
        settings.write_text(content)
        refused = run(home, tmp_path, "install-claude", "--scope", "user")  # HOME is home
        assert refused.returncode == 1 and f"{settings}: " in refused.stderr and "nothing was written" in refused.stderr
        assert settings.read_text() == content and not (home / ".claude.json").exists()


def test_uninstall_after_install_leaves_an_empty_project_empty_and_keeps_what_else_is_there(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "app"
    project.mkdir()
    assert run(home, project, "install-claude").returncode == 0
    gone = run(home, project, "uninstall-claude")
    assert gone.returncode == 0, gone.stderr
    assert f"deleted {project / '.claude' / 'settings.json'}, {project / '.mcp.json'}, {project / '.claude'}: nothing else was in them" in gone.stdout
    assert list(project.iterdir()) == []
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text("{}")
    run(home, project, "install-claude")
    run(home, project, "uninstall-claude")
    assert [p.name for p in project.rglob("*")] == [".claude", "settings.local.json"]
