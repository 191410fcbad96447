"""Claude Code (the real CLI, pinned in tests/clients/node) runs the SessionStart hook that
``mcp-memory install-claude`` writes, and puts the page it prints into the session.

Offline and without a login, ``claude -p`` still starts a session: it runs the SessionStart
hooks, reports each one's stdout and exit code as a ``hook_response`` event (with
``--output-format stream-json --verbose --include-hook-events``), builds the request to the
model with the hook's output in it, records that request in the session transcript under
CLAUDE_CONFIG_DIR, and only then stops at the missing login. The tests read those three
things: the event, the transcript and the other hooks' marker files.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.embedding_servers import FakeOllamaServer
from tests.integration.serve import MCP_MEMORY, StdioServer, server_env
from tests.integration.claude_code.test_claude_code import CLAUDE, ClaudeCode, end_services


@pytest.fixture
def ollama(tmp_path: Path) -> Iterator[FakeOllamaServer]:
    with FakeOllamaServer(dim=16) as fake:
        yield fake
    end_services(tmp_path / "memory" / "data")  # the hooks' service, started by the session


def memory_home(tmp_path: Path, ollama: FakeOllamaServer, project: Path) -> Path:
    home = tmp_path / "memory"
    home.mkdir()
    embedder = {"provider": "ollama", "baseUrl": ollama.url, "model": "nomic-embed-text"}
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": embedder}))
    with StdioServer(home) as server:
        server.result("memory.upsert_global", {"projectId": str(project), "key": "global.project.conventions", "value": "Small PRs; tests first."})
        server.result("memory.add_note", {"projectId": str(project), "groupId": "task-9", "title": "Deploys", "text": "Deploys go blue-green; never on Fridays."})
    return home


def local_mcp_memory(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([MCP_MEMORY, *args], cwd=cwd, env=server_env(home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def start_session(claude: ClaudeCode) -> list[dict[str, Any]]:
    """``claude -p`` in the project, without a login: the events it prints."""
    done = subprocess.run(
        [str(CLAUDE), "-p", "hello", "--output-format", "stream-json", "--verbose", "--include-hook-events"],
        cwd=claude.project, env=claude.env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events, done.stdout + done.stderr
    return events


def session_start_outputs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]


def model_request_texts(claude_config: Path, session_id: str) -> list[str]:
    """The system texts of the request Claude Code built for the model, from the transcript."""
    transcript = next(claude_config.glob(f"projects/*/{session_id}.jsonl"))
    texts = []
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") if record.get("type") == "api-request-blob" else None
        if isinstance(message, dict) and message.get("role") == "system":
            texts += [block.get("text", "") for block in message.get("content", []) if isinstance(block, dict)]
    return texts


def test_claude_code_runs_the_installed_hook_and_puts_the_page_in_the_session(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    claude = ClaudeCode(tmp_path / "claude")
    home = memory_home(tmp_path, ollama, claude.project)
    marker = tmp_path / "other-hook-ran"
    settings = claude.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": f"touch {marker}"}]}]},
    }))  # fmt: skip
    paths = ("--config", str(home / "config.json"), "--data-dir", str(home / "data"))
    local_mcp_memory(home, "install-claude", "--project-dir", str(claude.project), *paths, cwd=tmp_path)
    page = local_mcp_memory(home, "context", "--project", str(claude.project), "--group", "session", "--limit", "3", *paths, cwd=tmp_path).stdout
    assert "Small PRs" in page and "Deploys go blue-green" not in page  # other notes come with the prompts they fit

    events = start_session(claude)

    ours = [e for e in session_start_outputs(events) if e["stdout"].startswith("# Project memory:")]
    assert len(ours) == 1, session_start_outputs(events)
    assert (ours[0]["exit_code"], ours[0]["outcome"], ours[0]["stdout"]) == (0, "success", page)
    assert marker.exists()  # the hook that was there before still runs
    assert json.loads(settings.read_text())["permissions"] == {"allow": ["Bash(ls)"]}
    texts = model_request_texts(Path(claude.env["CLAUDE_CONFIG_DIR"]), ours[0]["session_id"])
    assert any(page.strip() in text for text in texts), texts


def test_a_user_scope_hook_gives_each_project_its_own_page(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    claude = ClaudeCode(tmp_path / "claude")
    home = memory_home(tmp_path, ollama, claude.project)
    paths = ("--config", str(home / "config.json"), "--data-dir", str(home / "data"))
    installer_env = {**server_env(home), "CLAUDE_CONFIG_DIR": claude.env["CLAUDE_CONFIG_DIR"]}
    subprocess.run([MCP_MEMORY, "install-claude", "--scope", "user", *paths], env=installer_env, check=True, timeout=120, capture_output=True)
    assert (Path(claude.env["CLAUDE_CONFIG_DIR"]) / "settings.json").exists()

    ours = [e for e in session_start_outputs(start_session(claude)) if e["stdout"].startswith("# Project memory:")]
    assert len(ours) == 1 and ours[0]["exit_code"] == 0
    assert ours[0]["stdout"].startswith(f"# Project memory: {claude.project.resolve()} (group session)\n")
    assert "Small PRs" in ours[0]["stdout"]

    elsewhere = claude.project.parent / "other-project"
    elsewhere.mkdir()
    claude.project = elsewhere
    ours = [e for e in session_start_outputs(start_session(claude)) if e["stdout"].startswith("# Project memory:")]
    assert [e["stdout"] for e in ours] == [f"# Project memory: {elsewhere.resolve()} (group session)\n"]
