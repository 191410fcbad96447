from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, Tags, require_future, require_within_size


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
    expires_at: datetime | None = None


@attrs.frozen
class NoteAdded:
    """``duplicate``: a live note of the same project and group already held this text
    (SPEC §11); ``id`` is that note's and nothing was written."""

    id: NoteId
    namespace: Namespace
    duplicate: bool = False


def add_note(command: AddNote, services: Services) -> NoteAdded:
    now = services.clock.now()
    note = new_note(command, services, now)
    namespace, (vector,) = services.embedding.embed([note.text], "passage")
    (holder,) = services.writer.add([(note, vector)], namespace, now)
    services.counters.duplicates_refused += holder != note.id
    return NoteAdded(holder, namespace, holder != note.id)


def new_note(command: AddNote, services: Services, now: datetime) -> Note:
    """The note ``command`` describes, with a fresh id; its ``expires_at`` must lie after
    ``now``."""
    require_future(command.expires_at, now)
    require_within_size("Note", "metadata", command.metadata)
    return Note(
        id=NoteId.new(),
        project_id=services.project(command.project_id),
        group_id=command.group_id,
        text=command.text,
        created_at=command.created_at or now,
        title=command.title,
        tags=command.tags,
        source=command.source,
        metadata=command.metadata,
        expires_at=command.expires_at,
    )
