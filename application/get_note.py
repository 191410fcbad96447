from __future__ import annotations

import attrs

from application.errors import NoteNotFound
from application.ports import StoredNote
from application.services import Services
from domain.identifiers import NoteId


@attrs.frozen
class GetNote:
    id: NoteId


def get_note(command: GetNote, services: Services) -> StoredNote:
    stored = services.reader.get(command.id)
    if stored is None:
        raise NoteNotFound(command.id.value)
    return stored
