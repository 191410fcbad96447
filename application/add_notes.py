from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import attrs

from local_mcp_memory.application.add_note import AddNote, new_note
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.application.suggestions import superseded_each
from local_mcp_memory.application.supersession import check_superseded, supersede_each
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import Namespace, NoteId
from local_mcp_memory.domain.note import Note


@attrs.frozen
class AddNotes:
    notes: tuple[AddNote, ...]

    MAX_NOTES: ClassVar[int] = 1000

    def __attrs_post_init__(self) -> None:
        if not 1 <= len(self.notes) <= self.MAX_NOTES:
            raise InvalidRequest("notes", f"must hold 1..{self.MAX_NOTES} notes", len(self.notes))


@attrs.frozen
class NotesAdded:
    """``ids`` in the order of the request; ``duplicates`` the indexes of the entries
    that were duplicates (of a stored note or of an earlier entry), whose id is the
    holder's. ``possibly_supersedes``: per entry, in order, the older stored notes of its
    project it likely replaces (``suggestions``, as ``add_note`` answers them); none for a
    duplicate."""

    ids: list[NoteId]
    namespace: Namespace
    duplicates: list[int]
    possibly_supersedes: list[tuple[NoteId, ...]]


def add_notes(command: AddNotes, services: Services) -> NotesAdded:
    """All or nothing: every note is checked before any is embedded, all are embedded in one
    call and written in one durable store write, with dedup on write (SPEC §11). The
    ``supersedes`` links are written after, from each entry's holder, once all are checked
    (``supersede_each``): a cycle only a duplicate's holder closes is known then, and refused
    with no link written; the notes the call wrote stay (a retry answers them as duplicates). Each entry's
    suggestions come from the store searched before the write, all entries' at once: the
    stored notes it likely replaces, not other entries of the batch."""
    now = services.clock.now()
    notes = [_checked(i, c, services, now) for i, c in enumerate(command.notes)]
    for i, (entry, note) in enumerate(zip(command.notes, notes)):
        check_superseded(entry.supersedes, note.project_id, services, f"notes[{i}].supersedes", text=note.dedup_key)
    namespace, vectors = services.embedding.embed([n.text for n in notes], "passage")
    similar = superseded_each(notes, namespace, vectors, services)
    holders = at("notes", services.writer.add, list(zip(notes, vectors)), namespace, now)
    duplicates = [i for i, (note, holder) in enumerate(zip(notes, holders)) if holder != note.id]
    services.counters.duplicates_refused += len(duplicates)
    supersede_each([(holder, entry.supersedes, f"notes[{i}].supersedes") for i, (entry, holder) in enumerate(zip(command.notes, holders))], services)
    named = [
        () if i in duplicates else tuple(n for n in map(NoteId, found) if n not in entry.supersedes)
        for i, (entry, found) in enumerate(zip(command.notes, similar))
    ]
    return NotesAdded(holders, namespace, duplicates, named)


def _checked(index: int, command: AddNote, services: Services, now: datetime) -> Note:
    try:
        return new_note(command, services, now)
    except InvalidValue as exc:
        raise exc.at(f"notes[{index}]") from None
