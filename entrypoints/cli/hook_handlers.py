"""What each Claude Code hook event does, given the services: the same code runs in the
background service and, when it cannot answer, in the hook's own process.

A request is ``{"event", "input", "cwd", "settings"}``: ``input`` is the JSON Claude Code
gave the hook (``session_id``, ``transcript_path``, ``cwd``, ``prompt``, ``source``, …),
``settings`` the hook settings the hook resolved (``HookSettings``). The answer is the text
the hook prints (Claude Code adds it to the context for SessionStart and UserPromptSubmit);
"" for the capture events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import Any

import attrs

from local_mcp_memory.application.capture_session import CaptureSession, capture_session, session_digest_text
from local_mcp_memory.application.context import GetContext, context_text
from local_mcp_memory.application.context_markdown import printable
from local_mcp_memory.application.recall import DEFAULT_FLOOR, RecallPrompt, recall
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.session_digest import DigestLimits, digest
from local_mcp_memory.domain.identifiers import GroupId
from local_mcp_memory.entrypoints.composition.adapters import default_project, transcript_events, transcript_stats

EVENTS = ("session-start", "user-prompt-submit", "stop", "session-end", "pre-compact")
CAPTURE_EVENTS = ("stop", "session-end", "pre-compact")
DIGEST_HEADING = "## This session so far (mcp-memory digest)"
SESSION_GROUP = GroupId("session")
SESSION_START_DIGESTS = 3
"""The SessionStart page is the context page of group ``session``: the project's globals and
its last few session digests. Other notes arrive with each prompt (recall), when relevant, so
the start of a session is never flooded with notes unrelated to the work at hand."""


@attrs.frozen
class HookSettings:
    recall_chars: int = 2000
    recall_floor: float = DEFAULT_FLOOR
    expiry_days: float | None = 90.0
    digest_chars: int = 4000

    @classmethod
    def from_json(cls, data: Any) -> HookSettings:
        """The settings a hook sent (``cli.hooks.hook_settings``), defaults for the rest."""
        if not isinstance(data, dict):
            return cls()
        fields = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})


def handle(
    request: Mapping[str, Any], services: Services, log: Callable[..., None], turn: AbstractContextManager[Any] | None = None
) -> str:
    """The hook's output for ``request``. ``turn``: held while the services are used (the
    service's lock); reading a transcript happens outside it."""
    turn = turn or nullcontext()
    event = request.get("event")
    payload = request.get("input")
    if event not in EVENTS or not isinstance(payload, dict):
        raise ValueError("a request names a known event and carries the hook's input object")
    settings = HookSettings.from_json(request.get("settings"))
    where = payload.get("cwd") if isinstance(payload.get("cwd"), str) else request.get("cwd")
    project = default_project(where if isinstance(where, str) and where else "/")
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    if event == "session-start":
        with turn:
            return _session_start(project, session, payload.get("source"), services)
    if event == "user-prompt-submit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            log("hook_input_refused", hook_event=event, reason="prompt is not a string")
            return ""
        if not prompt.strip():
            return ""
        command = RecallPrompt(project, prompt, settings.recall_chars, settings.recall_floor, session)
        with turn:
            return recall(command, services)
    return _capture(event, project, session, payload.get("transcript_path"), settings, services, log, turn)


def _session_start(project: str, session: str | None, source: Any, services: Services) -> str:
    page = context_text(GetContext(project, SESSION_GROUP, limit=SESSION_START_DIGESTS), services)
    if session and source in ("compact", "resume"):
        so_far = session_digest_text(project, session, services)
        if so_far and not _shown_whole(so_far, page):
            page = f"{page.rstrip()}\n\n{DIGEST_HEADING}\n\n{printable(so_far)}\n"
    return page


def _shown_whole(text: str, page: str) -> bool:
    """Whether the page's recent notes already show ``text`` uncut (the page indents a note's
    lines)."""
    return " ".join(text.split()) in " ".join(page.split())


def _capture(
    event: str,
    project: str,
    session: str | None,
    transcript: Any,
    settings: HookSettings,
    services: Services,
    log: Callable[..., None],
    turn: AbstractContextManager[Any],
) -> str:
    if not session or not isinstance(transcript, str) or not transcript:
        log("hook_capture_skipped", hook_event=event, reason="no session_id or transcript_path")
        return ""
    stats = transcript_stats()
    limits = DigestLimits(chars=settings.digest_chars)
    try:
        summary = digest(transcript_events(transcript, stats), limits, root=project)
    except OSError as exc:
        log("hook_capture_skipped", hook_event=event, reason=f"transcript unreadable: {exc.strerror or type(exc).__name__}")
        return ""
    if getattr(stats, "skipped", 0) or getattr(stats, "truncated", False):
        log("hook_transcript_partial", skipped_lines=stats.skipped, truncated=stats.truncated)
    if summary is None:
        return ""
    expiry = None if settings.expiry_days is None else timedelta(days=settings.expiry_days)
    with turn:
        done = capture_session(CaptureSession(project, session, summary, expiry), services)
    log("hook_captured", level="info", hook_event=event, note_id=str(done.id), written=done.written, chars=len(summary.text))
    return ""
