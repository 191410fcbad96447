from __future__ import annotations

import attrs

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.application.supersession import check_superseded, supersede
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.note import Note, NotePatch, require_future


@attrs.frozen
class UpdateNote:
    """``patch`` None: only ``supersedes`` (the patch's, which marks more notes as
    superseded by this one; none is unmarked)."""

    id: NoteId
    patch: NotePatch | None
    supersedes: tuple[NoteId, ...] = ()


def update_note(command: UpdateNote, services: Services) -> None:
    """Only a text change re-embeds (into the current namespace); any other change keeps
    the note's vector and namespace. id and created_at never change. The patch is applied to
    the note as stored when the store writes it, so a change another server made meanwhile
    to other fields stays, and a note deleted (or expired) meanwhile is not found rather
    than brought back."""
    stored = live_note(command.id, services)
    check_superseded(command.supersedes, stored.note.project_id, services, "patch.supersedes", newer=command.id)
    if command.patch is not None:
        _apply(command, stored, services)
    supersede(command.id, command.supersedes, services, "patch.supersedes")


def _apply(command: UpdateNote, stored: StoredNote, services: Services) -> None:
    assert command.patch is not None
    if "expires_at" in command.patch.changes():
        at("patch", require_future, command.patch.expires_at, services.clock.now())
    at("patch", command.patch.apply, stored.note)  # a value refused before anything is embedded

    def patched(current: Note) -> Note:
        now = services.clock.now()
        if current.expired(now):
            raise NoteNotFound(command.id.value)
        return at("patch", command.patch.apply, current, now)

    if command.patch.changes_text:
        namespace, (vector,) = services.embedding.embed([command.patch.text], "passage")
        written = at("patch", services.writer.update, command.id, patched, namespace, vector)
    else:
        written = at("patch", services.writer.update, command.id, patched)
    if written is None:
        raise NoteNotFound(command.id.value)
