from __future__ import annotations

import attrs

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import NoteId


@attrs.frozen
class DeleteNote:
    id: NoteId


def delete_note(command: DeleteNote, services: Services) -> None:
    """Remove a note with every vector and link it has. A second delete of the same id
    finds nothing and says so (NoteNotFound); it changes nothing further. An expired note
    is not found either (the store drops it later)."""
    live_note(command.id, services)
    if not services.writer.delete(command.id):
        raise NoteNotFound(command.id.value)
