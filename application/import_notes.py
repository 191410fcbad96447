from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator, Sequence

import attrs

from local_mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from local_mcp_memory.application.errors import InvalidRequest, SupersessionCycle
from local_mcp_memory.application.export_notes import ExportedNote
from local_mcp_memory.application.ports import Progress, StoredNote, Vector, no_progress
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.supersession import CYCLE, PlannedLinks
from local_mcp_memory.domain.identifiers import Namespace, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link
from local_mcp_memory.domain.note import GlobalEntry, Note


@attrs.frozen
class ImportNotes:
    """Notes, global settings and links read from an export, already validated as a whole."""

    notes: Sequence[ExportedNote]
    globals: Sequence[GlobalEntry] = ()
    batch_size: int = DEFAULT_BATCH
    links: Sequence[Link] = ()

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
    links_written: int = 0
    links_unchanged: int = 0
    expired: int = 0
    expired_links: int = 0


def import_notes(command: ImportNotes, services: Services, progress: Progress = no_progress) -> Imported:
    """Idempotent by id: a note already stored exactly so (fields, and home in the current
    namespace) is skipped, any other is written whole. A vector of the current namespace
    is reused; every other note is embedded, a batch at a time. Running an interrupted
    import again finishes it. Links are written last, each note of a link being in the
    file or already in the store (else ``InvalidRequest`` at ``links[i]`` before anything
    is written); a link already stored is left as it is. A note already expired (its
    ``expiresAt`` not after now) is skipped with its links, never written back: an
    expired note does not come back."""
    now = services.clock.now()
    notes = [n for n in command.notes if not n.note.expired(now)]
    gone = {n.note.id for n in command.notes} - {n.note.id for n in notes}
    links = [k for k in command.links if k.key.from_id not in gone and k.key.to_id not in gone]
    _check_projects(command, services)
    _check_links(notes, command.links, gone, services)
    target = services.embedding.namespace()
    total = len(notes)
    progress(0, total)
    with services.writer.bulk(target, total):
        written, embedded = _write_notes(notes, command.batch_size, target, services, progress)
    fresh_globals = [e for e in command.globals if services.reader.get_global(e.project_id, e.key) != e]
    for entry in fresh_globals:
        services.writer.put_global(entry)
    links_written = 0
    for link in links:
        if not any(stored.key == link.key for stored in services.reader.links(link.key.from_id)):
            try:
                services.writer.link(link)
            except SupersessionCycle as exc:  # linked the other way meanwhile, by another process
                raise InvalidRequest("links", CYCLE, exc.to_id) from None
            links_written += 1
    return Imported(
        namespace=target,
        written=written,
        embedded=embedded,
        unchanged=total - written,
        globals_written=len(fresh_globals),
        globals_unchanged=len(command.globals) - len(fresh_globals),
        links_written=links_written,
        links_unchanged=len(links) - links_written,
        expired=len(gone),
        expired_links=len(command.links) - len(links),
    )


WRITE_BATCH = MAX_BATCH
"""Notes an import writes per store call (one transaction): the notes that carry a vector of
the current namespace need no embedding, and a store writes a large batch much faster per
note (one commit, set-based statements) than many small ones."""


def _write_notes(
    notes: Sequence[ExportedNote], batch_size: int, target: Namespace, services: Services, progress: Progress
) -> tuple[int, int]:
    """Write the notes not stored exactly so, ``WRITE_BATCH`` at a time, embedding the ones
    without a vector of ``target`` ``batch_size`` at a time; how many written and embedded.
    The store may take each batch (``put_batches``: the reading, the embedding) in a thread
    of its own while it writes the one before; the progress counts what is written."""
    total, written, embedded = len(notes), 0, 0
    done: deque[int] = deque()  # per batch taken, in order: the notes of the file done once it is written

    def batches() -> Iterator[tuple[list[tuple[Note, Vector]], Namespace]]:
        nonlocal embedded
        for start in range(0, total, WRITE_BATCH):
            chunk = notes[start : start + WRITE_BATCH]
            stored = services.reader.get_many([n.note.id for n in chunk])
            batch = [n for n in chunk if not _stored_as(stored.get(n.note.id), n, target)]
            texts = [n.note.text for n in batch if n.namespace != target or n.vector is None]
            fresh: list[tuple[Namespace, Vector]] = []
            for first in range(0, len(texts), batch_size):
                namespace, vectors = services.embedding.embed(texts[first : first + batch_size], "passage")
                fresh += [(namespace, vector) for vector in vectors]
            embeddings = iter(fresh)
            homes: dict[Namespace, list[tuple[Note, Vector]]] = {}  # each in the file's order
            for exported in batch:
                kept = exported.namespace == target and exported.vector is not None
                home, vector = (target, exported.vector) if kept else next(embeddings)
                homes.setdefault(home, []).append((exported.note, vector))
            embedded += len(texts)
            if not homes:
                homes[target] = []  # nothing to write: the batch still counts for the progress
            for i, (home, entries) in enumerate(homes.items()):  # one write per namespace: all of a batch or none
                done.append(min(start + WRITE_BATCH, total) if i == len(homes) - 1 else start)
                yield entries, home

    with contextlib.closing(services.writer.put_batches(batches())) as writes:
        for count in writes:
            written += count
            progress(done.popleft(), total)
    return written, embedded


def _check_projects(command: ImportNotes, services: Services) -> None:
    stored_notes: dict[NoteId, StoredNote] = {}
    for start in range(0, len(command.notes), MAX_BATCH):
        stored_notes |= services.reader.get_many([n.note.id for n in command.notes[start : start + MAX_BATCH]])
    for index, exported in enumerate(command.notes):
        stored = stored_notes.get(exported.note.id)
        if stored is not None and stored.note.project_id != exported.note.project_id:
            raise InvalidRequest(
                f"notes[{index}].project_id",
                f"must be the project note {exported.note.id.value} is stored in ({stored.note.project_id.value}): "
                "an import never moves a note to another project",
                exported.note.project_id.value,
            )


def _check_links(notes: Sequence[ExportedNote], links: Sequence[Link], gone: set[NoteId], services: Services) -> None:
    in_file = {n.note.id: n.note.project_id for n in notes}
    for index, link in enumerate(links):
        if link.key.from_id in gone or link.key.to_id in gone:
            continue
        projects = []
        for end in (link.key.from_id, link.key.to_id):
            stored = None if end in in_file else services.reader.get(end)
            project = in_file.get(end) or (None if stored is None else stored.note.project_id)
            if project is None:
                raise InvalidRequest(f"links[{index}]", f"names note {end.value}, which is neither in the file nor in the store", end.value)
            projects.append(project)
        if projects[0] != projects[1]:
            raise InvalidRequest(f"links[{index}]", "must link two notes of one project", link.key.to_id.value)
    _check_cycles(links, gone, services)


def _check_cycles(links: Sequence[Link], gone: set[NoteId], services: Services) -> None:
    """No ``supersedes`` link of the file closes a cycle with the store's links and the file's
    before it (``InvalidRequest`` at that ``links[i]``): what ``memory.link`` refuses, refused
    before anything is written."""
    planned = PlannedLinks(services)
    for index, link in enumerate(links):
        key = link.key
        if key.relation == SUPERSEDES and key.from_id not in gone and key.to_id not in gone:
            if planned.closes_cycle(key.from_id, key.to_id, f"links[{index}]"):
                raise InvalidRequest(f"links[{index}]", CYCLE, key.to_id.value)


def _stored_as(current: StoredNote | None, exported: ExportedNote, target: Namespace) -> bool:
    return current is not None and current.namespace == target and current.note == exported.note
