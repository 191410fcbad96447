from __future__ import annotations

from collections.abc import Iterator

import attrs

from mcp_memory.application.ports import Vector
from mcp_memory.application.services import Services
from mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
from mcp_memory.domain.note import GlobalEntry, Note


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
    """Everything of a store (or of one project): notes in write order, then the global
    settings. ``notes`` is read lazily and may be iterated once."""

    project_id: CanonicalProjectId | None
    namespace: Namespace | None
    note_count: int
    notes: Iterator[ExportedNote]
    globals: list[GlobalEntry]


def export_notes(command: ExportNotes, services: Services) -> Export:
    project = None if command.project_id is None else services.project(command.project_id)
    stored = list(services.maintenance.iter_notes(project))

    def with_vectors() -> Iterator[ExportedNote]:
        for s in stored:
            vector = services.maintenance.vector(s.note.id, s.namespace) if command.with_vectors else None
            yield ExportedNote(s.note, s.namespace, vector)

    return Export(
        project_id=project,
        namespace=services.embedding.known_namespace(),
        note_count=len(stored),
        notes=with_vectors(),
        globals=list(services.maintenance.iter_globals(project)),
    )
