"""Whole Claude Code sessions, offline: the real CLI (pinned in tests/clients/node) against
the fake Anthropic Messages API (``tests.fakes.anthropic_api``), with mcp-memory installed
the two ways a user installs it (the plugin from this repository's marketplace, or
``mcp-memory install-claude``). The tests read what reached the model (the requests the
fake recorded) and what was stored (an export of the data directory):

* a prompt about a stored note brings that note into the request, through the
  UserPromptSubmit hook, and no unrelated note with it; an unrelated prompt brings none;
* a scripted session that edits a file and commits is stored as one digest note of the
  session (files, commands, the commit, the last answer), with none of the secrets the
  session handled.

The notes are stored with the real local model; the hooks start the background service
(``MCP_MEMORY_SERVICE_IDLE`` keeps it short-lived) and the tests end every service of
their data directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.hook_runs import add_notes
from tests.fakes.anthropic_api import FakeAnthropicApi, Recorded, text, tool_use
from tests.integration.serve import MCP_MEMORY, server_env
from tests.integration.claude_code.test_claude_code import CLAUDE, ClaudeCode, end_services, services_of
from tests.secrets_corpus import corpus_text, surviving

REPOSITORY = Path(__file__).resolve().parents[3]
RECALLED = "UserPromptSubmit hook success:"
NOTES = [
    {"title": "Deploying", "text": "Production deploys run `fly deploy --app shop-prod` from main after CI is green; never deploy on Fridays."},
    {"title": "Password hashing", "text": "Passwords are hashed with argon2id (argon2-cffi), never bcrypt."},
    {"title": "Product search", "text": "Product search uses Meilisearch; the index is rebuilt nightly by the reindex_products job."},
]
GIT = ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com"]


class Session:
    """A project (a git repository), a memory home, the fake model API and Claude Code
    pointed at it, with ``mcp-memory`` on PATH as a pipx install puts it there."""

    def __init__(self, root: Path, api: FakeAnthropicApi) -> None:
        self.api = api
        self.claude = ClaudeCode(root / "claude")
        self.project = self.claude.project
        self.memory = root / "memory"
        self.memory.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.project, check=True)
        (self.project / "app.py").write_text("print('hello')\n")
        subprocess.run(["git", "add", "app.py"], cwd=self.project, check=True)
        subprocess.run([*GIT, "commit", "-qm", "Say hello"], cwd=self.project, check=True)
        self.claude.env.update(
            PATH=f"{Path(MCP_MEMORY).parent}{os.pathsep}{self.claude.env['PATH']}",
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-ant-api03-fake-key-for-the-fake-api",
            MCP_MEMORY_SERVICE_IDLE="20",
        )

    @property
    def data_dir(self) -> Path:
        return self.memory / "data"

    def install_plugin(self) -> None:
        """The plugin: its hooks and server get the memory home from Claude Code's environment."""
        self.claude.env.update(MCP_MEMORY_CONFIG=str(self.memory / "config.json"), MCP_MEMORY_DATA_DIR=str(self.data_dir))
        self.claude.run("plugin", "marketplace", "add", str(REPOSITORY))
        self.claude.run("plugin", "install", "mcp-memory@mcp-memory")

    def install_claude(self) -> None:
        """``install-claude`` into the project: its commands name the memory home themselves."""
        done = subprocess.run(
            [MCP_MEMORY, "install-claude", "--project-dir", str(self.project),
             "--config", str(self.memory / "config.json"), "--data-dir", str(self.data_dir)],
            env=server_env(self.memory), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def prompt(self, words: str, *tools: str) -> list[dict[str, Any]]:
        """``claude -p words`` in the project: the events it printed (hooks included)."""
        allowed = ["--allowedTools", " ".join(tools)] if tools else []
        done = subprocess.run(
            [str(CLAUDE), "-p", words, *allowed, "--output-format", "stream-json", "--verbose", "--include-hook-events"],
            cwd=self.project, env=self.claude.env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def stored(self) -> list[dict[str, Any]]:
        out = subprocess.run(
            [MCP_MEMORY, "export", "--config", str(self.memory / "config.json"), "--data-dir", str(self.data_dir)],
            env=server_env(self.memory), capture_output=True, check=True, timeout=120,
        )  # fmt: skip
        return [record for record in map(json.loads, out.stdout.splitlines()) if record.get("type") == "note"]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with FakeAnthropicApi() as api:
        session = Session(tmp_path, api)
        try:
            yield session
        finally:
            end_services(session.data_dir)


def recalled(request: Recorded) -> str:
    """What the recall hook added to a request ('' when it added nothing)."""
    whole = request.all_text()
    start = whole.find(RECALLED)
    return "" if start < 0 else whole[start : whole.find("\n\n", start)]


def test_a_prompt_brings_the_relevant_note_to_the_model_and_no_unrelated_one(session: Session) -> None:
    ids = add_notes(session.memory, str(session.project), NOTES)
    session.install_plugin()
    session.api.script(text("I will deploy once CI is green."))

    session.prompt("deploy this fix to production")

    (request,) = session.api.conversation()
    shown = recalled(request)
    assert f"[{ids[0]}] Deploying: Production deploys run `fly deploy --app shop-prod`" in shown, request.all_text()[-3000:]
    assert ids[1] not in shown and "argon2id" not in shown and "Meilisearch" not in shown
    assert "argon2id" not in request.all_text() and "Meilisearch" not in request.all_text()  # nor at the session's start
    assert len(shown) <= len(RECALLED) + 2000
    tools = {tool["name"] for tool in request.body["tools"]} | set(_deferred_tools(request))
    assert {f"mcp__plugin_mcp-memory_mcp-memory__memory_{name}" for name in ("search", "add_note", "get")} <= tools

    session.api.requests.clear()
    session.api.script(text("Here is a haiku."))
    session.prompt("write a haiku about autumn leaves")
    (request,) = session.api.conversation()
    assert recalled(request) == "" and "Notes from mcp-memory" not in request.all_text()
    assert len(services_of(session.data_dir)) <= 1


def _deferred_tools(request: Recorded) -> list[str]:
    """The tool names Claude Code lists for its tool search rather than sending their schemas."""
    return [word.strip("-*`, ") for word in request.all_text().split() if word.strip("-*`, ").startswith("mcp__")]


def test_a_session_that_edits_a_file_and_commits_is_stored_as_its_digest_without_a_secret(session: Session) -> None:
    session.install_claude()
    (session.project / ".env").write_text(corpus_text())
    session.api.script(
        tool_use("Write", {"file_path": str(session.project / "app.py"), "content": "print('hello, world')\n"}),
        tool_use("Bash", {"command": "cat .env", "description": "Read the settings"}),
        tool_use("Bash", {"command": f"{' '.join(GIT)} commit -am 'Greet the world'", "description": "Commit the change"}),
        text("Done: app.py now greets the world, committed as 'Greet the world'."),
    )

    events = session.prompt("Make app.py greet the world and commit it. The deploy key is AKIAT5E3TF4BEVWXOVPW.", "Bash", "Write")

    assert subprocess.run(["git", "log", "-1", "--format=%s"], cwd=session.project, capture_output=True, text=True).stdout == "Greet the world\n"
    assert len(session.api.conversation()) == 4  # the three tool results went back to the model
    stops = [e for e in events if e.get("subtype") == "hook_response" and e.get("hook_event") == "Stop"]
    assert stops and all(e["exit_code"] == 0 for e in stops), stops
    digests = _wait_for_digests(session)
    assert len(digests) == 1, digests
    digest = digests[0]
    assert (digest["groupId"], digest["projectId"]) == ("session", str(session.project.resolve()))
    for part in ("app.py", "Greet the world", "cat .env", "Done: app.py now greets the world"):
        assert part in digest["text"], digest["text"]
    assert surviving(json.dumps(session.stored())) == []


def _wait_for_digests(session: Session, seconds: float = 30) -> list[dict[str, Any]]:
    """The session's digest notes: the Stop hook stores it before Claude Code exits, SessionEnd
    again as it exits (in place)."""
    deadline = time.monotonic() + seconds
    while True:
        digests = [n for n in session.stored() if n["groupId"] == "session"]
        if digests or time.monotonic() > deadline:
            return digests
        time.sleep(0.2)
