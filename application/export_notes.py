from __future__ import annotations

from collections.abc import Iterator

import attrs

from local_mcp_memory.application.ports import Vector
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace, NoteId
from local_mcp_memory.domain.link import Link
from local_mcp_memory.domain.note import GlobalEntry, Note


@attrs.frozen
class ExportNotes:
    project_id: str | None = None
    with_vectors: bool = False


@attrs.frozen
class ExportedNote:
    """A note, its home namespace (None: not known, as in a hand-written file) and, when
    exported with vectors, its vector there."""

    note: Note
    namespace: Namespace | None
    vector: Vector | None = None


@attrs.frozen
class Export:
    """Everything of a store (or of one project) that is live: notes in write order, the
    global settings, then the links between exported notes of one project, oldest first. Expired notes
    and their links are left out. ``notes`` is read lazily and may be iterated once."""

    project_id: CanonicalProjectId | None
    namespace: Namespace | None
    note_count: int
    notes: Iterator[ExportedNote]
    globals: list[GlobalEntry]
    links: list[Link] = attrs.field(factory=list)


VECTOR_BATCH = 500
"""Notes whose vectors an export reads in one store call (one query on PostgreSQL)."""


@attrs.frozen
class ExportFile:
    """What an export file holds, read back and checked whole (``ports.ExportReader``): its
    notes, global settings and links, in the file's order."""

    notes: list[ExportedNote]
    globals: list[GlobalEntry]
    links: list[Link] = attrs.field(factory=list)


def export_notes(command: ExportNotes, services: Services) -> Export:
    project = None if command.project_id is None else services.project(command.project_id)
    now = services.clock.now()
    stored = [s for s in services.maintenance.iter_notes(project) if not s.note.expired(now)]
    exported = {s.note.id: s.note.project_id for s in stored}
    links = [link for link in services.maintenance.iter_links(project) if _within_one_project(link, exported)]

    def with_vectors() -> Iterator[ExportedNote]:
        for start in range(0, len(stored), VECTOR_BATCH):
            batch = stored[start : start + VECTOR_BATCH]
            vectors: dict[NoteId, Vector] = {}
            if command.with_vectors:
                for namespace in {s.namespace for s in batch}:
                    wanted = [s.note.id for s in batch if s.namespace == namespace]
                    vectors |= services.maintenance.vectors(wanted, namespace)
            yield from (ExportedNote(s.note, s.namespace, vectors.get(s.note.id)) for s in batch)

    return Export(
        project_id=project,
        namespace=services.embedding.known_namespace(),
        note_count=len(stored),
        notes=with_vectors(),
        globals=list(services.maintenance.iter_globals(project)),
        links=links,
    )


def _within_one_project(link: Link, exported: dict[NoteId, CanonicalProjectId]) -> bool:
    """Both notes exported and of one project. A link between two projects cannot be made
    now, but a store written by an earlier version may hold one (an import that moved a
    note); an export leaves it out, so that the export always imports."""
    source, target = exported.get(link.key.from_id), exported.get(link.key.to_id)
    return source is not None and source == target
