from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from local_mcp_memory.application.services import Services
from local_mcp_memory.application.suggestions import possibly_superseded
from local_mcp_memory.application.supersession import check_superseded, supersede_each
from local_mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import IMPORTANCE_DEFAULT, Note, Tags, require_future, require_within_size


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
    importance: float = IMPORTANCE_DEFAULT
    supersedes: tuple[NoteId, ...] = ()


@attrs.frozen
class NoteAdded:
    """``duplicate``: a live note of the same project and group already held this text
    (SPEC §11); ``id`` is that note's and nothing was written. ``possibly_supersedes``: the
    older notes of the project the new one likely replaces (``suggestions``), for the
    caller to confirm; none for a duplicate."""

    id: NoteId
    namespace: Namespace
    duplicate: bool = False
    possibly_supersedes: tuple[NoteId, ...] = ()


def add_note(command: AddNote, services: Services) -> NoteAdded:
    """The superseded notes are checked before anything is written, and linked from the
    note that holds the text (the new one, or the duplicate's holder) after."""
    now = services.clock.now()
    note = new_note(command, services, now)
    check_superseded(command.supersedes, note.project_id, services, "supersedes", text=note.dedup_key)
    namespace, (vector,) = services.embedding.embed([note.text], "passage")
    similar = possibly_superseded(note.project_id, note.text, note.created_at, namespace, vector, services)
    (holder,) = services.writer.add([(note, vector)], namespace, now)
    duplicate = holder != note.id
    services.counters.duplicates_refused += duplicate
    supersede_each([(holder, command.supersedes, "supersedes")], services)
    named = () if duplicate else tuple(i for i in map(NoteId, similar) if i not in command.supersedes)
    return NoteAdded(holder, namespace, duplicate, named)


def new_note(command: AddNote, services: Services, now: datetime) -> Note:
    """The note ``command`` describes, with a fresh id; its ``expires_at`` must lie after
    ``now``, and its span is recorded from it."""
    require_future(command.expires_at, now)
    require_within_size("Note", "metadata", command.metadata)
    note = Note(
        id=NoteId.new(),
        project_id=services.project(command.project_id),
        group_id=command.group_id,
        text=command.text,
        created_at=command.created_at or now,
        title=command.title,
        tags=command.tags,
        source=command.source,
        metadata=command.metadata,
        importance=command.importance,
    )
    return note.with_expiry(command.expires_at, now)
