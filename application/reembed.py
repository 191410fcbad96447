from __future__ import annotations

import attrs

from local_mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.ports import Progress, no_progress
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import Note


@attrs.frozen
class Reembed:
    """Re-embed the notes whose home is an older namespace (only ``from_namespace``, if
    given) into the current one; at most ``limit`` of them in this run (None: all)."""

    from_namespace: Namespace | None = None
    batch_size: int = DEFAULT_BATCH
    limit: int | None = None

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise InvalidRequest("batch_size", f"must be an integer in 1..{MAX_BATCH}", self.batch_size)
        if self.limit is not None and self.limit < 1:
            raise InvalidRequest("limit", "must be a positive integer", self.limit)


@attrs.frozen
class Reembedded:
    namespace: Namespace
    reembedded: int
    remaining: int


def reembed(command: Reembed, services: Services, progress: Progress = no_progress) -> Reembedded:
    """Batch by batch, each note gets a vector in the current namespace, which becomes its
    home; its older vectors stay until their namespace is dropped. The store is the only
    record of progress: a note already re-homed is no longer pending, so an interrupted
    run resumes by running again."""
    target = services.embedding.namespace()
    if command.from_namespace == target:
        raise InvalidRequest("from_namespace", "is the current namespace: its notes need no re-embedding", str(target))
    pending = [
        s.note
        for s in services.maintenance.iter_notes()
        if s.namespace != target and command.from_namespace in (None, s.namespace)
    ]
    todo = pending[: command.limit]
    rehomed = 0
    progress(0, len(todo))
    for start in range(0, len(todo), command.batch_size):
        batch = todo[start : start + command.batch_size]
        namespace, vectors = services.embedding.embed([note.text for note in batch], "passage")
        fresh = {note.id: v for note, v in zip(batch, vectors) if _still_pending(services, note, namespace)}
        services.maintenance.rehome(namespace, fresh)
        rehomed += len(fresh)
        progress(start + len(batch), len(todo))
    return Reembedded(target, rehomed, len(pending) - len(todo))


def _still_pending(services: Services, note: Note, namespace: Namespace) -> bool:
    """Not deleted, not re-embedded by an update meanwhile: the vector is of its text."""
    current = services.reader.get(note.id)
    return current is not None and current.namespace != namespace and current.note.text == note.text
