"""One note per agent session, holding its digest (``session_digest``), updated in place.

The note's id is derived from the project and the session id (a UUID 5), so every capture
of a session finds the same note without an index: the first creates it, the next ones
replace its text, keeping its createdAt. An unchanged digest writes nothing. The note lives
in group ``session``, with source ``claude-code:session:<id>`` and ``metadata.sessionId``,
and expires ``expiry`` after the last capture (None: never) unless its importance (kept
from capture to capture, default 0.5) is ``LASTING`` or more (``domain.note.default_expiry``).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import attrs

from local_mcp_memory.application.session_digest import Digest
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
from local_mcp_memory.domain.note import IMPORTANCE_DEFAULT, Note, Tags, default_expiry

SESSION_GROUP = GroupId("session")
SOURCE_PREFIX = "claude-code:session:"
_IDS = uuid.UUID("6f6a2b1e-3c1d-4f59-9a57-2f1b3c7d0e27")


@attrs.frozen
class CaptureSession:
    project_id: str
    session_id: str
    digest: Digest
    expiry: timedelta | None = timedelta(days=90)


@attrs.frozen
class SessionCaptured:
    id: NoteId
    written: bool


def session_note_id(project: CanonicalProjectId, session_id: str) -> NoteId:
    return NoteId(str(uuid.uuid5(_IDS, f"{project.value}\x00{session_id}")))


def capture_session(command: CaptureSession, services: Services) -> SessionCaptured:
    project = services.project(command.project_id)
    note_id = session_note_id(project, command.session_id)
    now = services.clock.now()
    stored = services.reader.get(note_id)
    found = stored.note if stored is not None and not stored.note.expired(now) else None
    if found is not None and found.text == command.digest.text:
        return SessionCaptured(note_id, False)
    d = command.digest
    note = Note(
        id=note_id,
        project_id=project,
        group_id=SESSION_GROUP,
        text=d.text,
        created_at=found.created_at if found is not None else now,
        title=d.title,
        tags=Tags(("session", "claude-code")),
        source=SOURCE_PREFIX + command.session_id[:200],
        metadata={
            "sessionId": command.session_id[:200],
            "prompts": d.prompts,
            "commands": d.commands,
            "failedCommands": d.failed_commands,
            "filesChanged": d.files,
            "commits": d.commits,
            "capturedAt": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        importance=found.importance if found is not None else IMPORTANCE_DEFAULT,
    )
    note = note.with_expiry(default_expiry(note.importance, now, command.expiry), now)
    namespace, (vector,) = services.embedding.embed([note.text], "passage")
    services.writer.put(note, namespace, vector)
    return SessionCaptured(note_id, True)


def session_digest_text(project_id: str, session_id: str, services: Services) -> str | None:
    """The stored digest of a session, if any and not expired."""
    project = services.project(project_id)
    stored = services.reader.get(session_note_id(project, session_id))
    if stored is None or stored.note.expired(services.clock.now()):
        return None
    return stored.note.text
