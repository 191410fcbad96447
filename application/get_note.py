from __future__ import annotations

import attrs

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.link import SUPERSEDES


@attrs.frozen
class GetNote:
    id: NoteId


def get_note(command: GetNote, services: Services) -> StoredNote:
    """The note, recorded as read (``fading``)."""
    stored = live_note(command.id, services)
    services.reads.saw([stored.note])
    return stored


def live_note(note_id: NoteId, services: Services) -> StoredNote:
    """The stored note, unless it is missing or expired (``NoteNotFound``, naming the id)."""
    stored = services.reader.get(note_id)
    if stored is None or stored.note.expired(services.clock.now()):
        raise NoteNotFound(note_id.value)
    return stored


def superseded_by(note_id: NoteId, services: Services) -> list[str]:
    """The ids of the live notes superseding this one, newest link first."""
    now = services.clock.now()
    found = []
    for link in services.reader.links(note_id):
        key = link.key
        if key.relation == SUPERSEDES and key.to_id == note_id:
            source = services.reader.get(key.from_id)
            if source is not None and not source.note.expired(now):
                found.append(key.from_id.value)
    return found
