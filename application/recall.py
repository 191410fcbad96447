"""Recall for a prompt: the project's notes relevant to what the user just asked, as a short
text an agent reads before it answers; nothing at all when no note is relevant enough.

Relevance is the semantic search score, ``(1 + cosine) / 2``, against a floor,
``RecallPrompt.floor``, chosen by leaving one topic out at a time on a set of related and
unrelated prompts (``bench.recall_floor``, docs/claude-code.md). The cosine alone held out
better than the hybrid score (balanced accuracy 0.917 against 0.871): the hybrid score is
relative to the notes in scope, so an unrelated prompt's best note can still score well, and
it changes scale below eight notes; the cosine means the same for every store. A note that
updates an older one among the hits is shown just above it, with its place's score
(``search.newer_first_hits``), as default search ranks it. Each note is shown with its id, its text cut to fit, and the whole
text is at most ``max_chars`` characters; a note that does not fit whole is cut, the ones
after it are dropped. The session's own digest is never recalled into the same session.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from local_mcp_memory.application.capture_session import session_note_id
from local_mcp_memory.application.context_markdown import printable
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.search import SearchNotes, newer_first_hits, search
from local_mcp_memory.application.services import Services

HEADER = "Notes from mcp-memory that may bear on this prompt (memory_get with an id gives the whole note):"
DEFAULT_FLOOR = 0.68
"""The semantic score a note needs to be recalled: a cosine of 0.36 with the local model
(all-MiniLM-L6-v2). Other models spread their cosines differently: set
``MCP_MEMORY_RECALL_FLOOR`` for them (``bench.recall_floor --data`` measures it)."""


@attrs.frozen
class RecallPrompt:
    project_id: str
    prompt: str
    max_chars: int = 2000
    floor: float = DEFAULT_FLOOR
    session_id: str | None = None
    top_k: int = 5

    MIN_CHARS: ClassVar[int] = 200
    NOTE_CHARS: ClassVar[int] = 700
    PROMPT_CHARS: ClassVar[int] = 2000
    """Only the start of a long prompt is searched for: the ask usually comes first."""

    def __attrs_post_init__(self) -> None:
        if self.max_chars < self.MIN_CHARS:
            raise InvalidRequest("max_chars", f"must be at least {self.MIN_CHARS}", self.max_chars)


def recall(command: RecallPrompt, services: Services) -> str:
    """The recall text for ``command.prompt``, or "" when nothing is relevant."""
    query = command.prompt.strip()[: command.PROMPT_CHARS]
    if len(query) < 3:
        return ""
    found = search(SearchNotes(command.project_id, query, top_k=command.top_k, mode="semantic"), services)
    own = None
    if command.session_id:
        own = session_note_id(services.project(command.project_id), command.session_id)
    ranked = newer_first_hits(query, found.hits, found.namespace, services)  # an update before what it updates
    hits = [h for h in ranked if h.score >= command.floor and h.stored.note.id != own]
    if not hits:
        return ""
    lines = [HEADER]
    room = command.max_chars - len(HEADER) - 1  # the text ends with a newline; each line has one before it
    for hit in hits:
        note = hit.stored.note
        lead = f"- [{note.id}] " + (f"{_one_line(note.title)[:120]}: " if note.title else "")
        text = _one_line(note.text)
        width = min(room - 1 - len(lead), command.NOTE_CHARS - len(lead))
        if width < 40:
            break
        line = lead + (text if len(text) <= width else text[: width - 1].rstrip() + "…")
        lines.append(line)
        room -= len(line) + 1
    return printable("\n".join(lines) + "\n") if len(lines) > 1 else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
