"""Markdown sync (SPEC §11): a folder's markdown files kept as notes of one project and group.

The sync owns exactly the notes whose ``origin.root`` is the folder's root, in the project
it syncs into; no other note is read for a decision or touched. A file is in sync when its
owned notes in the target group with its current digest cover every part of the file (one
kept per address; other notes of the file are dropped). Otherwise its new notes are written
first and its old ones deleted after, so an interruption leaves at worst both, which the next
run repairs.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from local_mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.folder_documents import Document, FolderFile, Part, Skipped, file_of, under
from local_mcp_memory.application.ports import MarkdownFolder, Progress, no_progress
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, SyncOrigin, Tags

EMPTY = "empty: no text to keep"
PROGRESS_EVERY = 100  # files between two progress reports when nothing is written


@attrs.frozen
class SyncFolder:
    project_id: str
    group_id: str = "kb"
    batch_size: int = DEFAULT_BATCH

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH:
            raise InvalidRequest("batch_size", f"must be an integer in 1..{MAX_BATCH}", self.batch_size)


@attrs.frozen
class FolderSynced:
    """What one sync did, by file path. A skipped file keeps the notes an earlier sync gave
    it, except an empty one, whose notes are removed."""

    root: str
    project_id: CanonicalProjectId
    group_id: GroupId
    namespace: Namespace | None
    added: tuple[str, ...]
    updated: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: int
    skipped: tuple[Skipped, ...]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


@attrs.frozen
class _Owned:
    id: NoteId
    address: str
    digest: str
    group_id: GroupId


@attrs.frozen
class _Shape:
    """What a file's notes must be to be in sync: its digest and its parts' addresses."""

    digest: str
    addresses: tuple[str, ...]  # sorted


class SyncMemo:
    """What the syncs of one process learned of each file (its stamp and shape), so that a
    later sync skips reading a file whose stamp has not changed. Only a hint: the store is
    checked against it every time."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[tuple[int, ...], _Shape]] = {}

    def recall(self, file: FolderFile) -> _Shape | None:
        stamp, shape = self._files.get(file.path, ((), None))
        return shape if stamp == file.stamp else None

    def remember(self, file: FolderFile, shape: _Shape) -> None:
        self._files[file.path] = (file.stamp, shape)


def sync_folder(
    command: SyncFolder,
    folder: MarkdownFolder,
    services: Services,
    progress: Progress = no_progress,
    memo: SyncMemo | None = None,
) -> FolderSynced:
    project = services.project(command.project_id)
    group = at("group_id", GroupId, command.group_id)
    run = _Run(folder.root, project, group, command.batch_size, services, memo or SyncMemo(), progress)
    owned = run.owned()
    entries = list(folder.files())
    run.total = len(entries)
    progress(0, run.total)
    for done, entry in enumerate(entries, 1):
        known = owned.pop(entry.path, [])
        if isinstance(entry, Skipped):
            run.skipped.append(entry)
        else:
            run.sync_file(entry, known, folder)
        run.flush(force=False)  # reports progress after each batch written
        run.done = done
        if done % PROGRESS_EVERY == 0:
            progress(done, run.total)
    run.flush(force=True)
    folders_left_alone = [s.path for s in run.skipped if s.path.endswith("/")]
    for path, notes in owned.items():
        if not any(under(path, folder) for folder in folders_left_alone):
            run.delete(notes)
            run.removed.append(path)
    progress(len(entries), len(entries))
    return FolderSynced(
        folder.root, project, group, run.namespace or services.embedding.known_namespace(),
        tuple(run.added), tuple(run.updated), tuple(run.removed), run.unchanged, tuple(run.skipped),
    )  # fmt: skip


class _Run:
    def __init__(
        self, root: str, project: CanonicalProjectId, group: GroupId, batch: int, services: Services, memo: SyncMemo, progress: Progress
    ) -> None:
        self.root, self.project, self.group, self.batch = root, project, group, batch
        self.services, self.memo, self.progress = services, memo, progress
        self.done = self.total = 0  # files done, of all listed
        self.now = services.clock.now()
        self.namespace: Namespace | None = None
        self.added: list[str] = []
        self.updated: list[str] = []
        self.removed: list[str] = []
        self.skipped: list[Skipped] = []
        self.unchanged = 0
        self.pending: list[tuple[Note, str]] = []
        self.waiting: dict[str, tuple[int, list[_Owned]]] = {}  # file -> (parts unwritten, old notes)

    def owned(self) -> dict[str, list[_Owned]]:
        by_file: dict[str, list[_Owned]] = {}
        for stored in self.services.maintenance.iter_notes(self.project):
            origin = stored.note.origin
            if origin is not None and origin.root == self.root:
                owned = _Owned(stored.note.id, origin.path, origin.digest, stored.note.group_id)
                by_file.setdefault(file_of(origin.path), []).append(owned)
        return by_file

    def sync_file(self, file: FolderFile, known: list[_Owned], folder: MarkdownFolder) -> None:
        remembered = self.memo.recall(file)
        if remembered is not None and self._stale(known, remembered) == []:
            self.unchanged += 1
            return
        document = folder.read(file.path)
        if document is None:  # gone since it was listed
            if known:
                self.delete(known)
                self.removed.append(file.path)
            return
        if isinstance(document, Skipped) or not document.parts:
            self.skipped.append(document if isinstance(document, Skipped) else Skipped(file.path, EMPTY))
            if isinstance(document, Document):
                self.delete(known)
            return
        shape = _Shape(document.digest, tuple(sorted(document.address(part) for part in document.parts)))
        stale = self._stale(known, shape)
        if stale is not None:
            self.memo.remember(file, shape)
        if stale == []:
            self.unchanged += 1
            return
        if stale is not None:  # the file's notes are all there, beside stale ones
            self.delete(stale)
            self.updated.append(file.path)
            return
        try:
            notes = [self._note(document, part) for part in document.parts]
        except InvalidValue as exc:
            self.skipped.append(Skipped(file.path, str(exc)))
            return
        self.memo.remember(file, shape)
        (self.updated if known else self.added).append(file.path)
        self.waiting[file.path] = (len(notes), known)
        self.pending.extend((note, file.path) for note in notes)

    def _stale(self, known: list[_Owned], shape: _Shape) -> list[_Owned] | None:
        """The notes to drop when the file's current notes are complete (the first written of
        each address kept: two syncs of one folder at once may both have written it); None
        when they are not."""
        wanted, keep = set(shape.addresses), {}
        for note in known:
            if note.digest == shape.digest and note.group_id == self.group and note.address in wanted:
                keep.setdefault(note.address, note)
        if len(keep) != len(wanted):
            return None
        kept = set(keep.values())
        return [n for n in known if n not in kept]

    def _note(self, document: Document, part: Part) -> Note:
        address = document.address(part)
        return Note(
            id=NoteId.new(), project_id=self.project, group_id=self.group, text=part.text, created_at=self.now,
            title=part.title, tags=Tags.of(list(part.tags)), source=address,
            origin=SyncOrigin(self.root, address, document.digest),
        )  # fmt: skip

    def flush_due(self) -> bool:
        return len(self.pending) >= self.batch

    def flush(self, force: bool) -> None:
        while self.pending and (force or self.flush_due()):
            batch, self.pending = self.pending[: self.batch], self.pending[self.batch :]
            namespace, vectors = self.services.embedding.embed([note.text for note, _ in batch], "passage")
            self.services.writer.put_many([(note, vector) for (note, _), vector in zip(batch, vectors)], namespace)
            self.namespace = namespace
            for _, path in batch:
                left, old = self.waiting[path]
                self.waiting[path] = (left - 1, old)
                if left == 1:
                    self.delete(old)
                    del self.waiting[path]
            self.progress(self.done, self.total)

    def delete(self, notes: Iterable[_Owned]) -> None:
        for note in notes:
            self.services.writer.delete(note.id)
