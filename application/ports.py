"""Ports: what the use cases need from the outside world.

Every port is a small ``typing.Protocol``. Adapters implement them structurally (no base
classes). The store is three ports, one per kind of consumer — ``NoteWriter``,
``NoteReader``, ``StoreMaintenance`` — which every store adapter implements together
(``NoteStore``). The ports with state or I/O — the store, ``Embedder``,
``ConfigRepository`` — and ``Clock`` and ``EmbedderFactory`` each have a fake in
``tests/fakes/`` and one contract test suite in ``tests/contracts/`` that the fake and
every real adapter pass. ``ProjectResolver`` has one adapter, checked by properties
(``tests/unit/adapters/test_system.py``); ``Progress`` is a plain callable. ``ExportWriter``
and ``ExportReader``, the export file the commands write and read, have one adapter
(``adapters.export_file``) and its own tests. Each port holds what its consumers call and
nothing more.

Units and conventions shared by all ports:

* A *vector* is a sequence of floats of the namespace's dimension, L2-normalized
  (length 1 within 1e-3). Real adapters pass ``numpy.float32`` arrays; the application
  never looks inside.
* A *similarity* is the cosine of two vectors, in ``[-1, 1]``. Use cases turn it into the
  contract's 0..1 score; stores never normalize.
* Times are aware ``datetime`` objects in UTC.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, BinaryIO, Literal, Protocol, TypeVar

import attrs

from local_mcp_memory.application.folder_documents import Document, FolderFile, Skipped
from local_mcp_memory.application.settings import EmbedderSettings, Settings
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey
from local_mcp_memory.domain.note import GlobalEntry, Note, NoteFilter

if TYPE_CHECKING:  # the use cases' own types, which import this module
    from local_mcp_memory.application.export_notes import Export, ExportFile

T = TypeVar("T")
Vector = Sequence[float]
EmbedKind = Literal["query", "passage"]


@attrs.frozen
class StoredNote:
    """A note as the store keeps it: its fields and the namespace of its current vector."""

    note: Note
    namespace: Namespace


@attrs.frozen
class Hit:
    """One search result: the note and its score in 0..1, 1 the most relevant."""

    stored: StoredNote
    score: float


@attrs.frozen
class Spread:
    """How a query's cosine similarities spread over the notes in scope: how many notes
    were looked at, the mean and the standard deviation."""

    count: int
    mean: float
    std: float


NO_SPREAD = Spread(0, 0.0, 0.0)


class PendingVector(Protocol):
    """A query's vector not computed yet (``query_vector.QueryVector``): computed when a
    store asks for it, or beside the store's own work."""

    def result(self) -> Vector:
        """The vector, computed on the calling thread the first time; raises what computing
        it raised."""

    def alongside(self, work: Callable[[], T]) -> tuple[T, Vector]:
        """``work()`` and the vector, computed side by side (``work`` maybe on another
        thread: it must take the locks it needs itself, none the caller holds); both are done
        when it returns or raises, the vector's failure raised first, then the work's."""


@attrs.frozen
class CandidateQuery:
    """One search question to a store: which notes (``where``) and what to find among them.

    ``vector`` is the query's vector in ``namespace`` (None: no semantic candidates, no
    spread, no neighbour cosines), or a ``PendingVector`` that the store resolves where its
    semantic part starts (``resolved``), best with what needs no vector (the filter, the
    keyword candidates) done meanwhile (``beside``). What resolving raises (the embedder's
    errors) the store raises unchanged, outside its own error translation. ``text`` is the
    query's words (None: no keyword candidates).
    ``depth`` is how many candidates each ranking returns at most; ``spread_sample`` how many
    notes at most the spread is measured on (0: not measured); ``neighbours`` whether the
    candidates' neighbours are wanted.
    """

    where: NoteFilter
    depth: int
    namespace: Namespace | None = None
    vector: Vector | PendingVector | None = None
    text: str | None = None
    spread_sample: int = 0
    neighbours: bool = False

    def __attrs_post_init__(self) -> None:
        if self.vector is not None and self.namespace is None:
            raise ValueError("a CandidateQuery with a vector needs its namespace")

    @property
    def pending(self) -> bool:
        """Whether ``vector`` is still a ``PendingVector``."""
        return hasattr(self.vector, "result")

    def resolved(self) -> CandidateQuery:
        """This question with its vector computed."""
        return attrs.evolve(self, vector=self.vector.result()) if self.pending else self  # type: ignore[union-attr]

    def beside(self, work: Callable[[], T]) -> tuple[T, CandidateQuery]:
        """``work()`` and this question resolved, side by side when the vector is pending
        (``PendingVector.alongside``)."""
        if not self.pending:
            return work(), self
        done, vector = self.vector.alongside(work)  # type: ignore[union-attr]
        return done, attrs.evolve(self, vector=vector)


@attrs.frozen
class Candidate:
    """A note a search found, and its score: a cosine similarity (semantic candidates) or
    the share of the query's keyword information it matches, in (0, 1] (keyword candidates).
    ``id`` is the note's ``NoteId.value``; ``created_at`` its createdAt, by which ties go to
    the newer note (then the smaller id)."""

    id: str
    created_at: datetime
    score: float


@attrs.frozen
class Neighbour:
    """A note written just before or after a candidate in its group, and its cosine with the
    query (None: it has no vector in the query's namespace, or the query had no vector)."""

    id: str
    created_at: datetime
    cosine: float | None


@attrs.frozen
class Candidates:
    """A store's answer to a ``CandidateQuery``, as of one moment.

    ``semantic``: the ``depth`` matching notes with a vector in the namespace by cosine,
    highest first, ties by newer createdAt then id. ``keyword``: the ``depth`` matching notes
    of any namespace by keyword score (title, text, tags), highest first, same ties; notes
    sharing no term with the query are left out. Both hold ``depth`` notes whenever that many
    qualify, however selective the filter. ``spread``: of the query's cosine over the
    matching notes with a vector in the namespace, all of them when they are at most
    ``spread_sample``, else a sample of ``spread_sample`` of them that does not depend on
    their vectors (the FAISS store takes them evenly spaced in write order, the PostgreSQL
    store by a fixed hash of the note id).
    ``neighbours``: for each candidate id (when asked), the matching notes of its project and
    group written just before and just after it, in the order of createdAt, ties by write
    order (at most two, older first). ``notes``: the stored note of every candidate and
    neighbour, by id; an adapter may decode each on first access (as of the question).
    """

    semantic: Sequence[Candidate] = ()
    keyword: Sequence[Candidate] = ()
    spread: Spread = NO_SPREAD
    neighbours: Mapping[str, Sequence[Neighbour]] = attrs.field(factory=dict)
    notes: Mapping[str, StoredNote] = attrs.field(factory=dict)


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, aware, in UTC."""


class Progress(Protocol):
    def __call__(self, done: int, total: int) -> None:
        """``done`` of ``total`` items are finished and durable.

        Long use cases (import, re-embed) call it once with ``done=0`` before their first
        batch and again after each batch. It may raise (``KeyboardInterrupt`` for a user's
        interruption) to stop the run between two batches: what was done stays done, and
        running the use case again resumes where it stopped.
        """


def no_progress(done: int, total: int) -> None:
    """A ``Progress`` that reports nothing."""


class ProjectResolver(Protocol):
    def canonical(self, raw: str) -> CanonicalProjectId:
        """The canonical projectId of a raw one.

        Paths (``domain.identifiers.is_path_like``) are expanded (``~``), made absolute and
        resolved through symlinks, falling back to the absolute path when resolution fails;
        opaque ids come back unchanged. Raises ``InvalidValue`` for a string that can be
        neither (empty, control characters, an unknown ``~user``).
        """


class Embedder(Protocol):
    """Turns texts into vectors with one model.

    ``embed`` returns one L2-normalized vector per text, in order, all of one length (the
    model's dimension, learned by the caller from the first answer). ``kind`` says whether
    the texts are stored passages or search queries; models that embed both alike ignore it.

    Failure modes (``application.errors``): ``EmbedderNotConfigured`` (no key, unknown
    model), ``EmbedderUnavailable`` (unreachable, timed out, 5xx after retries),
    ``EmbedderRejected`` (the provider refused the request or the key). Never returns
    fewer vectors than texts.
    """

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Sequence[Vector]: ...


class EmbedderFactory(Protocol):
    def create(self, settings: EmbedderSettings) -> Embedder:
        """An embedder for these settings. Cheap: no model load and no network until the
        first ``embed``. Raises ``EmbedderNotConfigured`` for an unknown provider."""


class ConfigRepository(Protocol):
    """The user's settings file, which several processes may share. Writes are atomic
    (never a half-written file) and keep the file private to its owner (mode 0600: it
    may hold an API key)."""

    def load(self) -> Settings: ...

    def update(self, change: Callable[[Settings], Settings]) -> Settings:
        """Store ``change(current)``, ``current`` being the settings as stored at this
        moment (read afresh, maybe written by another process), and return it. Updates are
        serialized, so one never loses another's change. ``change`` must be pure: it
        may see newer settings than the caller last loaded."""


class MarkdownFolder(Protocol):
    """A folder of markdown files, as a sync reads it (``application.folder_documents``).

    ``root`` is the folder's absolute path with symlinks resolved: the sync's key to the
    notes it owns. ``files`` lists the markdown files to sync, sorted by path, each once,
    and the files it will not read (outside the folder through a symlink, a name that is
    not UTF-8) as ``Skipped``. ``read`` reads one file: a ``Document``; ``Skipped`` when it
    cannot be read as markdown (not UTF-8, bad front matter, unreadable); None when it is
    gone (deleted or replaced meanwhile). Neither raises for a file's problem.
    """

    @property
    def root(self) -> str: ...

    def files(self) -> Iterator[FolderFile | Skipped]: ...

    def read(self, path: str) -> Document | Skipped | None: ...


class ExportWriter(Protocol):
    def write(self, export: Export, out: BinaryIO, exported_at: datetime, vectors: bool) -> None:
        """``export`` as one export file on ``out``: a header (``exported_at``, the counts),
        then its notes (with their vectors when ``vectors``), global settings and links."""


class ExportReader(Protocol):
    def read(self, lines: Iterable[bytes]) -> ExportFile:
        """The export file of ``lines``, every line checked before anything is returned;
        ``errors.ImportFileInvalid`` names the first line that breaks the format."""


class NoteWriter(Protocol):
    """Writes notes and global settings: what the adding and changing use cases need.

    A note has fields (``Note``) and a *home* namespace: the namespace of the vector it is
    searched by. It may also keep vectors in other namespaces (an older model's, until
    dropped). Vectors of different namespaces are never compared.

    Every write is durable when the method returns; several processes may share one store.
    A store that writes through a codec reads each record back before writing it: a value
    that would not read back as written is refused with ``InvalidValue`` at its field
    (``metadata``; ``[i].metadata`` for entry ``i`` of ``put_many``), and nothing is written.
    """

    def put(self, note: Note, namespace: Namespace, vector: Vector | None) -> None:
        """Insert or replace a note and make ``namespace`` its home.

        With ``vector=None`` the note keeps the vector it already has in ``namespace``
        (a change of fields only); ``StoreError`` if it has none there.
        """

    def update(
        self, note_id: NoteId, change: Callable[[Note], Note], namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Note | None:
        """Store ``change(current)``, ``current`` being the note as stored at the moment of
        the write (read under the store's write lock or in its transaction, after catching up
        with every process), and return it; None, and nothing written, when no note has the
        id then (deleted meanwhile, by any process: never brought back). ``change`` keeps
        the id and must be pure; what it raises propagates and nothing is written. With
        ``vector`` (and its ``namespace``), the note gets that vector there and it becomes
        its home; without, the note keeps its home and vectors (whatever they are then).
        Two updates of one note are applied one after the other, neither undoing the
        fields the other changed and it did not."""

    def put_many(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> None:
        """``put`` each (note, vector) into ``namespace``, all or none: one durable write.
        ``StoreError`` (nothing written) if any vector has the wrong length."""

    def put_batches(self, batches: Iterable[tuple[Sequence[tuple[Note, Vector]], Namespace]]) -> Iterator[int]:
        """``put_many`` of each (notes, namespace) of ``batches``, in their order, as they are
        iterated: yields each batch's size once it is written (durably; an empty batch writes
        nothing). The store may take the next batch from ``batches``, and prepare it, in a
        thread of its own while it writes one, at most one batch ahead: taking a batch must
        not need the caller's thread. What taking or writing a batch raises is raised in its
        place: the batches before it are written, it and those after are not. Closing the
        iterator stops taking batches; no thread outlives it."""

    def add(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace, now: datetime) -> list[NoteId]:
        """Add new notes with dedup on write (SPEC §11), all or none: one durable write.

        An entry whose ``note.dedup_key`` equals that of a stored note not expired at
        ``now`` and not superseded (by a note not expired at ``now``: restating a replaced
        fact stores it anew, as the newest), or of an earlier entry of the same call, is not
        written. Notes a markdown
        sync owns (``Note.origin`` set) hold no key: the next sync of their file may delete
        them, so an entry is never answered with one of them. Returns, per entry
        in order, the id of the note that holds it: the entry's own id when it was written,
        else the stored (or earlier) note's, which is left exactly as it was. The decision
        and the write are one step under the store's write lock or transaction, so two
        processes adding the same text at once store it once. ``StoreError`` (nothing
        written) for a vector of the wrong length; ``InvalidValue`` at ``[i].<field>`` as
        ``put_many``."""

    def bulk(self, namespace: Namespace, count: int) -> AbstractContextManager[None]:
        """A block in which about ``count`` notes are written into ``namespace`` (an import):
        the store may put off the upkeep of its search indexes until the block ends. Reads
        stay correct meanwhile (they may be slower); a process that dies inside the block
        leaves a whole store (what was put off is done when a store next opens)."""

    def delete(self, note_id: NoteId) -> bool:
        """Remove a note with all its vectors and every link from or to it; False when
        there was none."""

    def put_global(self, entry: GlobalEntry) -> None: ...

    def prolong(self, note_ids: Sequence[NoteId], now: datetime) -> int:
        """Fading (SPEC §13): each note read at ``now`` gets ``Note.prolonged(now)`` — its
        expiresAt moved out by half its original span — decided and written under the
        store's write lock or transaction on the note as stored then, in one durable write.
        A note that is gone (deleted meanwhile: never brought back), expired, without an
        expiry or damaged is skipped; no other field changes. The count prolonged."""

    def link(self, link: Link) -> bool:
        """Store ``link`` unless a link with its key is stored (then nothing changes and the
        first one's ``created_at`` stays). False, and nothing written, when either note is
        not stored (as of the write: a note deleted meanwhile is caught). A ``supersedes``
        link of a note to itself, or to a note that already supersedes it (directly or down a
        chain of ``supersedes`` links): ``SupersessionCycle``, nothing written; decided under
        the write's lock, after every other process's writes, so two links written at once
        never close a cycle."""

    def unlink(self, key: LinkKey) -> bool:
        """Remove the link with ``key``; False when there was none."""


class NoteReader(Protocol):
    """Finds notes and global settings: what the reading use cases need. Each read sees
    every write acknowledged before it began, in any process. Filters are exact:
    ``candidates`` and ``list_recent`` return ``depth``/``limit`` matching notes whenever
    that many exist.

    Supersession (SPEC §13): unless ``NoteFilter.include_superseded``, both leave out every
    note that is the target of a ``supersedes`` link (``domain.link.SUPERSEDES``) whose
    source note is stored and not expired at ``NoteFilter.now``, inside the filter (so a
    superseded note never shortens an answer). ``get`` returns a superseded note as any
    other; who supersedes it is read from ``links``. Every ``Note`` carries
    ``importance`` (0..1), which ranking may read from ``Candidates.notes``."""

    def get(self, note_id: NoteId) -> StoredNote | None: ...

    def get_many(self, note_ids: Sequence[NoteId]) -> dict[NoteId, StoredNote]:
        """``get`` of each id, in one read: the stored ones (an id not stored is left out)."""

    def candidates(self, query: CandidateQuery) -> Candidates:
        """What a search needs from the store, in one question (see ``Candidates``): the
        best notes by cosine and by keyword, the spread of the query's cosines, and the
        candidates' neighbours with their cosines. ``StoreError`` for a vector of the wrong
        length where the namespace holds vectors."""

    def candidates_each(self, queries: Sequence[CandidateQuery]) -> list[Candidates]:
        """``candidates`` of each of ``queries``, in order, as one read: a store may answer
        questions that share a filter together (one look at the filter, one round trip for
        their notes) — an ``add_notes`` asks one per entry for its suggestions."""

    def neighbours(
        self, note_ids: Sequence[str], where: NoteFilter, namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Candidates:
        """The neighbours of those of ``note_ids`` (``NoteId.value``) that match ``where``,
        exactly as ``candidates`` with ``neighbours`` gives them for its candidates (an id with
        none may be left out), with their cosines with ``vector`` in ``namespace`` (None: no
        cosines); ``notes``: the neighbours' stored notes. A search asks for the few
        candidates it ranks first only (``search``: looking up the neighbours of all of them
        was most of a hybrid search's database time)."""

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        """Matching notes of every namespace, newest createdAt first (ties: last written first)."""

    def get_global(self, project_id: CanonicalProjectId, key: GlobalKey) -> GlobalEntry | None: ...

    def links(self, note_id: NoteId) -> list[Link]:
        """Every link from or to the note, newest ``created_at`` first (ties: last written
        first). Links of expired notes are returned too: the caller hides them."""


class StoreMaintenance(Protocol):
    """The whole store at once: what statistics, export, re-embedding and dropping an old
    namespace need."""

    def iter_notes(self, project_id: CanonicalProjectId | None = None) -> Iterator[StoredNote]:
        """Every note (of one project), in write order."""

    def vector(self, note_id: NoteId, namespace: Namespace) -> Vector | None: ...

    def vectors(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[NoteId, Vector]:
        """The vectors of many notes in ``namespace`` in one read (one round trip to a
        database): each of ``note_ids`` that has one there, as ``vector`` returns it; a note
        without a vector in ``namespace``, or no longer existing, is missing from the answer."""

    def cosines(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[str, dict[str, float]]:
        """The cosine of every two of ``note_ids`` that have a vector in ``namespace`` (one
        ``vectors`` read, the products computed by the store): ``answer[a][b]``, both ways,
        never ``a`` with itself, keyed by the ids' ``value`` (as a ``Candidate`` names its note:
        a table of 25 notes built with ``NoteId`` keys hashed them 600 times); the others are
        missing from the answer."""

    def iter_globals(self, project_id: CanonicalProjectId | None = None) -> Iterable[GlobalEntry]: ...

    def namespaces(self) -> dict[Namespace, int]:
        """Every namespace holding vectors, with how many."""

    def disk_bytes(self) -> int:
        """Bytes the store occupies on disk (0 for a store in memory)."""

    def rehome(self, namespace: Namespace, vectors: Mapping[NoteId, Vector]) -> None:
        """Give existing notes a vector in ``namespace`` and make it their home, keeping
        their vectors elsewhere. Ids of notes that no longer exist are skipped."""

    def drop_namespace(self, namespace: Namespace) -> int:
        """Remove every vector of ``namespace`` that is not a note's home; the count removed."""

    def iter_links(self, project_id: CanonicalProjectId | None = None) -> Iterable[Link]:
        """Every link (whose notes are of one project), oldest first."""


class NoteStore(NoteWriter, NoteReader, StoreMaintenance, Protocol):
    """A whole store: what an adapter implements and the composition root holds and closes."""

    def close(self) -> None: ...
