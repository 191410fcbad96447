from __future__ import annotations

import attrs

from mcp_memory.application.errors import NoteNotFound
from mcp_memory.application.ports import StoredNote
from mcp_memory.application.services import Services
from mcp_memory.domain.identifiers import NoteId


@attrs.frozen
class GetNote:
    id: NoteId


def get_note(command: GetNote, services: Services) -> StoredNote:
    stored = services.reader.get(command.id)
    if stored is None:
        raise NoteNotFound(command.id.value)
    return stored
