"""What the Claude Code hooks print carries no terminal control sequence: the recall lines
of a prompt and the session page (with the session's digest after a compaction) show a
control character of a note or a transcript as the symbol that pictures it."""

from __future__ import annotations

from local_mcp_memory.application.capture_session import CaptureSession, capture_session
from local_mcp_memory.application.recall import RecallPrompt, recall
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.session_digest import Command, Prompt
from local_mcp_memory.entrypoints.cli.hook_handlers import handle
from tests.unit.application.test_session_capture import made
from tests.unit.steps import add

HOSTILE = "deploy \x1b]0;owned\x07 with \x1b[2J fly \x9b31m now"


def controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_recall_shows_a_notes_escape_sequences_as_symbols(services: Services) -> None:
    add(services, HOSTILE, project="/repo", title="Deploy \x1b[1m")
    text = recall(RecallPrompt("/repo", "how do we deploy", floor=0.0), services)
    assert "␛]0;owned␇" in text and controls(text) == []


def test_the_session_start_page_and_its_digest_show_escape_sequences_as_symbols(services: Services) -> None:
    add(services, HOSTILE, project="/repo")
    capture_session(CaptureSession("/repo", "s-1", made([Prompt("Fix \x1b[2J the login"), Command("echo \x1b]0;x\x07", failed=False)])), services)
    request = {"event": "session-start", "input": {"cwd": "/repo", "session_id": "s-1", "source": "compact"}}
    page = handle(request, services, lambda *a, **k: None)
    assert "mcp-memory digest" in page and "␛[2J" in page
    assert controls(page) == []
