from __future__ import annotations

from typing import ClassVar

import attrs

from mcp_memory.application.add_note import AddNote, new_note
from mcp_memory.application.errors import InvalidRequest
from mcp_memory.application.services import Services, at
from mcp_memory.domain.errors import InvalidValue
from mcp_memory.domain.identifiers import Namespace, NoteId
from mcp_memory.domain.note import Note


@attrs.frozen
class AddNotes:
    notes: tuple[AddNote, ...]

    MAX_NOTES: ClassVar[int] = 1000

    def __attrs_post_init__(self) -> None:
        if not 1 <= len(self.notes) <= self.MAX_NOTES:
            raise InvalidRequest("notes", f"must hold 1..{self.MAX_NOTES} notes", len(self.notes))


@attrs.frozen
class NotesAdded:
    ids: list[NoteId]
    namespace: Namespace


def add_notes(command: AddNotes, services: Services) -> NotesAdded:
    """All or nothing: every note is checked before any is embedded, all are embedded in one
    call and written in one durable store write."""
    notes = [_checked(i, c, services) for i, c in enumerate(command.notes)]
    namespace, vectors = services.embedding.embed([n.text for n in notes], "passage")
    at("notes", services.writer.put_many, list(zip(notes, vectors)), namespace)
    return NotesAdded([n.id for n in notes], namespace)


def _checked(index: int, command: AddNote, services: Services) -> Note:
    try:
        return new_note(command, services)
    except InvalidValue as exc:
        raise exc.at(f"notes[{index}]") from None
