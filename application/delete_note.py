from __future__ import annotations

import attrs

from mcp_memory.application.errors import NoteNotFound
from mcp_memory.application.services import Services
from mcp_memory.domain.identifiers import NoteId


@attrs.frozen
class DeleteNote:
    id: NoteId


def delete_note(command: DeleteNote, services: Services) -> None:
    """Remove a note with every vector it has. A second delete of the same id finds
    nothing and says so (NoteNotFound); it changes nothing further."""
    if not services.writer.delete(command.id):
        raise NoteNotFound(command.id.value)
