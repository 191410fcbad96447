from __future__ import annotations

import attrs

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import NoteId


@attrs.frozen
class GetNote:
    id: NoteId


def get_note(command: GetNote, services: Services) -> StoredNote:
    return live_note(command.id, services)


def live_note(note_id: NoteId, services: Services) -> StoredNote:
    """The stored note, unless it is missing or expired (``NoteNotFound``, naming the id)."""
    stored = services.reader.get(note_id)
    if stored is None or stored.note.expired(services.clock.now()):
        raise NoteNotFound(note_id.value)
    return stored
