from __future__ import annotations

from collections.abc import Sequence

import attrs

from mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from mcp_memory.application.errors import InvalidRequest
from mcp_memory.application.export_notes import ExportedNote
from mcp_memory.application.ports import Progress, Vector, no_progress
from mcp_memory.application.services import Services
from mcp_memory.domain.identifiers import Namespace
from mcp_memory.domain.note import GlobalEntry


@attrs.frozen
class ImportNotes:
    """Notes and global settings read from an export, already validated as a whole."""

    notes: Sequence[ExportedNote]
    globals: Sequence[GlobalEntry] = ()
    batch_size: int = DEFAULT_BATCH

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise InvalidRequest("batch_size", f"must be an integer in 1..{MAX_BATCH}", self.batch_size)


@attrs.frozen
class Imported:
    namespace: Namespace
    written: int
    embedded: int
    unchanged: int
    globals_written: int
    globals_unchanged: int


def import_notes(command: ImportNotes, services: Services, progress: Progress = no_progress) -> Imported:
    """Idempotent by id: a note already stored exactly so (fields, and home in the current
    namespace) is skipped, any other is written whole. A vector of the current namespace
    is reused; every other note is embedded, a batch at a time. Running an interrupted
    import again finishes it."""
    target = services.embedding.namespace()
    total, written, embedded = len(command.notes), 0, 0
    progress(0, total)
    for start in range(0, total, command.batch_size):
        batch = [n for n in command.notes[start : start + command.batch_size] if not _stored_as(services, n, target)]
        reused: list[Vector | None] = [n.vector if n.namespace == target else None for n in batch]
        texts = [n.note.text for n, v in zip(batch, reused) if v is None]
        namespace, fresh = services.embedding.embed(texts, "passage") if texts else (target, [])
        vectors = iter(fresh)
        for exported, vector in zip(batch, reused):
            if vector is None:
                services.writer.put(exported.note, namespace, next(vectors))
            else:
                services.writer.put(exported.note, target, vector)
        written, embedded = written + len(batch), embedded + len(texts)
        progress(min(start + command.batch_size, total), total)
    fresh_globals = [e for e in command.globals if services.reader.get_global(e.project_id, e.key) != e]
    for entry in fresh_globals:
        services.writer.put_global(entry)
    return Imported(
        namespace=target,
        written=written,
        embedded=embedded,
        unchanged=total - written,
        globals_written=len(fresh_globals),
        globals_unchanged=len(command.globals) - len(fresh_globals),
    )


def _stored_as(services: Services, exported: ExportedNote, target: Namespace) -> bool:
    current = services.reader.get(exported.note.id)
    return current is not None and current.namespace == target and current.note == exported.note
