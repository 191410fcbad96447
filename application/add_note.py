from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from mcp_memory.application.services import Services
from mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from mcp_memory.domain.note import Note, Tags


@attrs.frozen
class AddNote:
    project_id: str
    group_id: GroupId
    text: str
    title: str | None = None
    tags: Tags = Tags()
    source: str | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] | None = None


@attrs.frozen
class NoteAdded:
    id: NoteId
    namespace: Namespace


def add_note(command: AddNote, services: Services) -> NoteAdded:
    note = new_note(command, services)
    namespace, (vector,) = services.embedding.embed([note.text], "passage")
    services.writer.put(note, namespace, vector)
    return NoteAdded(note.id, namespace)


def new_note(command: AddNote, services: Services) -> Note:
    """The note ``command`` describes, with a fresh id."""
    return Note(
        id=NoteId.new(),
        project_id=services.project(command.project_id),
        group_id=command.group_id,
        text=command.text,
        created_at=command.created_at or services.clock.now(),
        title=command.title,
        tags=command.tags,
        source=command.source,
        metadata=command.metadata,
    )
