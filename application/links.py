"""Links between notes (SPEC §11): link, unlink, and the notes related to one."""

from __future__ import annotations

from typing import Literal

import attrs

from local_mcp_memory.application.errors import InvalidRequest, NoteNotFound, SupersessionCycle
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.supersession import CYCLE, check_superseded
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey, Relation


@attrs.frozen
class LinkNotes:
    key: LinkKey


@attrs.frozen
class UnlinkNotes:
    key: LinkKey


@attrs.frozen
class GetRelated:
    id: NoteId
    relation: Relation | None = None


@attrs.frozen
class RelatedNote:
    """The other note of a link from or to the asked one: ``direction`` ``out`` when the
    asked note is the link's source."""

    relation: Relation
    direction: Literal["out", "in"]
    stored: StoredNote


def link_notes(command: LinkNotes, services: Services) -> None:
    """Both notes must be live (``NoteNotFound`` naming the first that is not), of one
    project and not the same note (``InvalidRequest`` at ``to_id``). Linking twice is
    one link, made at the first instant."""
    key = command.key
    source, target = live_note(key.from_id, services), live_note(key.to_id, services)
    if key.from_id == key.to_id:
        raise InvalidRequest("to_id", "must name another note than fromId", key.to_id.value)
    if source.note.project_id != target.note.project_id:
        raise InvalidRequest("to_id", "must name a note of the same project as fromId", key.to_id.value)
    if key.relation == SUPERSEDES:
        check_superseded([key.to_id], source.note.project_id, services, "to_id", newer=key.from_id)
    try:
        linked = services.writer.link(Link(key, services.clock.now()))
    except SupersessionCycle:  # linked the other way meanwhile, by another process
        raise InvalidRequest("to_id", CYCLE, key.to_id.value) from None
    if not linked:
        # A note was deleted between the check and the write: report it as not found.
        missing = key.from_id if services.reader.get(key.from_id) is None else key.to_id
        raise NoteNotFound(missing.value)


def unlink_notes(command: UnlinkNotes, services: Services) -> bool:
    """Remove one link; whether there was one."""
    return services.writer.unlink(command.key)


def related(command: GetRelated, services: Services) -> list[RelatedNote]:
    """The live notes linked to or from a live note (``NoteNotFound`` otherwise), newest
    link first, of one relation when asked."""
    live_note(command.id, services)
    now = services.clock.now()
    found = []
    for link in services.reader.links(command.id):
        key = link.key
        if command.relation is not None and key.relation != command.relation:
            continue
        outgoing = key.from_id == command.id
        other = services.reader.get(key.to_id if outgoing else key.from_id)
        if other is not None and not other.note.expired(now):
            found.append(RelatedNote(key.relation, "out" if outgoing else "in", other))
    return found
