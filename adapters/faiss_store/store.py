"""``FaissNoteStore``: the store ports (``NoteStore``) on local disk, shared by several processes.

Layout of ``data_dir`` (format 6, see ``format.records`` and ``persistence.snapshot``)::

    LOCK                      flock'd by a writer for each write and each compaction
    MANIFEST.json             one checksummed line: {"format":6,"generation":g,"snapshot":…,"journal":…,"sidecar_crc":…}
    snapshot-<g>/             sidecar.json, note columns and bodies, vectors, globals, links (absent for generation 0)
    journal-<g>.jsonl         header, then every write since snapshot g

Guarantees:

* A write returns only after its journal line is fsync'd: it survives ``kill -9`` and
  power loss. Its cost does not depend on the store's size (one appended line).
* An incomplete last journal line (a crashed writer's) is never applied and is cut by
  the next writer, under the lock. A complete line failing its CRC is damage: skipped,
  reported, never cut.
* Every read first stats the manifest and the journal and replays what other processes
  appended, so it sees every write acknowledged before it began, in any process.
* Every decision a write depends on (dedup in ``add``, the note an ``update`` changes and
  whether it still exists, both notes stored in ``link``, a link stored in ``unlink``) is
  taken under the
  file lock after that catching up, so two processes adding the same text at once store
  it once.
* Compaction (automatic past ``compact_after_records``/``compact_after_bytes``, or
  ``compact()``) writes snapshot g+1 and an empty journal g+1, then switches the manifest
  atomically; notes expired at the wall clock's instant are left out of it, with their
  vectors and links. A process at generation g finishes reading journal g (already open,
  so its removal does not matter) and follows on to journal g+1; one further behind
  reloads (``persistence.generations``). The automatic one runs after the write is durable and
  applied, and never fails it: a failure (a full disk, damage found) is logged
  (``store.compaction_failed``), its files removed, and it is tried again only after
  another ``compact_retry_records`` records, so a full disk does not tax every write.
* Expiry is decided at read time (``NoteFilter.now``) from a column of expiry instants:
  no note is decoded to leave out the expired ones. ``get`` returns an expired note.
* Damage (``memory.damage``) fails only the answers that depend on it, with ``StoreCorrupt``;
  the rest is served. A format 2 to 5 store is upgraded by compacting it when a writer
  opens it.

Failure modes: ``StoreError`` for I/O errors and wrong vector lengths, ``StoreCorrupt``
for a file that is not what its format says, naming it. Sets FAISS to one OpenMP thread
(single queries are many times faster that way on small machines).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import faiss
import numpy as np
import structlog

from local_mcp_memory.adapters.cosines import cosine_rows
from local_mcp_memory.adapters.faiss_store.format.files import FileLock, tree_bytes
from local_mcp_memory.adapters.faiss_store.format.framing import batch_line, checked_line
from local_mcp_memory.adapters.faiss_store.format.records import (
    BATCH_FORMAT,
    FORMAT,
    Delete,
    DeleteLink,
    Drop,
    Put,
    PutGlobal,
    PutLink,
    Record,
    Rehome,
    fields_of,
    instant_micros,
    vector_bytes,
)
from local_mcp_memory.adapters.faiss_store.memory import search
from local_mcp_memory.adapters.faiss_store.persistence.generations import LOCK, Generations
from local_mcp_memory.adapters.private_files import make_private_dir
from local_mcp_memory.application.errors import StoreCorrupt, StoreError, SupersessionCycle
from local_mcp_memory.application.ports import CandidateQuery, Candidates, StoredNote, Vector
from local_mcp_memory.domain.errors import DomainError, InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey, Relation
from local_mcp_memory.domain.note import DedupKey, GlobalEntry, Note, NoteFilter
from local_mcp_memory.domain.time import format_instant, parse_instant

log = structlog.get_logger()


class FaissNoteStore:
    """Notes in ``data_dir`` (created if missing). Thread-safe; see the module docstring."""

    def __init__(
        self,
        data_dir: Path,
        *,
        compact_after_records: int = 20_000,
        compact_after_bytes: int = 256 * 1024 * 1024,
        compact_retry_records: int | None = None,
    ) -> None:
        """``compact_retry_records``: after a failed automatic compaction, how many more
        records to wait before the next try (default a quarter of ``compact_after_records``)."""
        faiss.omp_set_num_threads(1)
        self._root = Path(data_dir)
        self._compact_records = compact_after_records
        self._compact_bytes = compact_after_bytes
        self._retry_records = compact_retry_records or max(1, compact_after_records // 4)
        self._compact_due_at = 0  # journal records before which no compaction is tried again
        self._mutex = threading.RLock()
        self._live = Generations(self._root)
        self._closed = False
        with self._io("open"):
            make_private_dir(self._root)
            self._lock = FileLock(self._root / LOCK)
            if not self._live.manifest_path.exists():
                with self._lock:
                    self._live.initialize()
            self._live.sync()
            if self._live.format != FORMAT:
                with self._lock:
                    self._live.sync()
                    self._compact_quietly()

    @contextmanager
    def _io(self, action: str) -> Iterator[None]:
        with self._mutex:
            try:
                yield
            except OSError as exc:
                raise StoreError(
                    f"cannot {action} the note store: {exc.strerror or exc}", str(self._root)
                ) from exc

    def _reading(self):
        return self._io("read")

    # -- writing ----------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._io("write"), self._lock:
            self._live.sync()
            self._live.repair_tail()
            yield
            journal = self._live.journal
            assert journal is not None
            due = journal.records >= self._compact_records or journal.offset >= self._compact_bytes
            if due and journal.records >= self._compact_due_at:
                self._compact_quietly()

    def _compact_quietly(self) -> None:
        """Compact after a durable write: a failure is logged and retried later, never
        raised (the write it follows is done)."""
        try:
            self._live.compact()
            self._compact_due_at = 0
        except Exception as exc:  # any failure: the write it follows stands
            journal = self._live.journal
            self._compact_due_at = (journal.records if journal is not None else 0) + self._retry_records
            log.warning("store.compaction_failed", path=str(self._root), reason=str(exc), retry_after_records=self._retry_records)

    def _commit(self, *records: Record, lines: Sequence[bytes] | None = None, batch: bytes | None = None) -> None:
        """Append ``records`` (their ``lines``, if already checked; ``batch``, their batch
        line, if already made) and apply them. Several records share one line from format 6
        on (``batch_line``): all or none survive a writer killed mid-write. A store not yet
        upgraded (its upgrade failed: a full disk, a read-only copy) keeps one line per
        record, which its older readers can read."""
        assert self._live.journal is not None
        if lines is None:
            lines = [checked_line(r) for r in records]
        if len(records) > 1 and self._live.format >= BATCH_FORMAT:
            self._live.journal.append([batch or batch_line(records)], len(records))
        else:
            self._live.journal.append(lines)
        for record in records:
            self._live.state.apply(record)

    def put(self, note: Note, namespace: Namespace, vector: Vector | None) -> None:
        """See ``NoteStore.put``. ``StoreError`` for a vector of the wrong length."""
        data = None if vector is None else vector_bytes(vector, namespace.dim)
        record = Put(note=fields_of(note), namespace=str(namespace), vector=data)
        line = checked_line(record)
        with self._writing():
            if data is None:
                self._live.state.require_vector(note.id.value, record.namespace)
            self._commit(record, lines=[line])

    def update(
        self, note_id: NoteId, change: Callable[[Note], Note], namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Note | None:
        """See ``NoteWriter.update``: the note read, changed and written under the lock,
        caught up with every process; one ``Put`` record."""
        data = None
        if vector is not None:
            assert namespace is not None, "a vector comes with its namespace"
            data = vector_bytes(vector, namespace.dim)
        with self._writing():
            current = self._live.state.get(note_id.value)
            if current is None:
                return None
            note = change(current.note)
            home = current.namespace if data is None else namespace
            record = Put(note=fields_of(note), namespace=str(home), vector=data)
            self._commit(record)
            return note

    def put_many(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> None:
        """See ``NoteStore.put_many``: one journal write, one sync."""
        records = [
            Put(note=fields_of(note), namespace=str(namespace), vector=vector_bytes(vector, namespace.dim))
            for note, vector in notes
        ]
        lines = [_at_index(i, checked_line, record) for i, record in enumerate(records)]
        batch = batch_line(records) if len(records) > 1 else None  # made before the lock is taken
        if records:
            with self._writing():
                self._commit(*records, lines=lines, batch=batch)

    def put_batches(self, batches: Iterable[tuple[Sequence[tuple[Note, Vector]], Namespace]]) -> Iterator[int]:
        """See ``NoteWriter.put_batches``: one ``put_many`` after another, in the caller's thread."""
        for notes, namespace in batches:
            self.put_many(notes, namespace)
            yield len(notes)

    def add(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace, now: datetime) -> list[NoteId]:
        """See ``NoteWriter.add``: the entries that are not duplicates, in one journal write.
        Duplicates are found under the lock, caught up with every process, by the hash
        column (``StoreState.duplicates``); an entry repeating an earlier one of the call
        is compared by key."""
        records = [
            Put(note=fields_of(note), namespace=str(namespace), vector=vector_bytes(vector, namespace.dim))
            for note, vector in notes
        ]
        lines = [_at_index(i, checked_line, record) for i, record in enumerate(records)]
        batch = batch_line(records) if len(records) > 1 else None  # used when none is a duplicate
        keys = [note.dedup_key for note, _vector in notes]
        if not records:
            return []
        with self._writing():
            stored = self._live.state.duplicates(keys, instant_micros(now))
            ids: list[NoteId] = []
            first: dict[DedupKey, NoteId] = {}
            written: list[int] = []
            for i, ((note, _vector), key, held) in enumerate(zip(notes, keys, stored)):
                holder = NoteId(held) if held is not None else first.get(key)
                if holder is None:
                    holder = first[key] = note.id
                    written.append(i)
                ids.append(holder)
            if written:
                whole = batch if len(written) == len(records) else None
                self._commit(*(records[i] for i in written), lines=[lines[i] for i in written], batch=whole)
        return ids

    def rehome(self, namespace: Namespace, vectors: Mapping[NoteId, Vector]) -> None:
        rows = {note_id.value: vector_bytes(v, namespace.dim) for note_id, v in vectors.items()}
        with self._writing():
            ids = tuple(i for i in rows if i in self._live.state)
            if ids:
                data = b"".join(rows[i] for i in ids)
                self._commit(Rehome(namespace=str(namespace), ids=ids, vectors=data))

    def bulk(self, namespace: Namespace, count: int) -> AbstractContextManager[None]:
        return nullcontext()  # nothing to put off: every write keeps the store's indexes

    def delete(self, note_id: NoteId) -> bool:
        """See ``NoteWriter.delete``: one record, which removes the note's links too."""
        with self._writing():
            if note_id.value not in self._live.state:
                return False
            self._commit(Delete(id=note_id.value))
            return True

    def prolong(self, note_ids: Sequence[NoteId], now: datetime) -> int:
        """See ``NoteWriter.prolong``: the notes are read under the lock, caught up with every
        process, so a note deleted or changed meanwhile is never brought back or undone;
        one journal write for all."""
        with self._writing():
            state = self._live.state
            records = []
            for note_id in dict.fromkeys(note_ids):
                if note_id.value in state.damage.notes:
                    continue
                stored = state.get(note_id.value)
                later = None if stored is None else stored.note.prolonged(now)
                if later is not None:
                    records.append(Put(note=fields_of(later), namespace=str(stored.namespace)))
            if records:
                self._commit(*records)
            return len(records)

    def link(self, link: Link) -> bool:
        """See ``NoteWriter.link``. ``StoreCorrupt`` when either note is damaged (whether it
        is stored cannot be known). The cycle test reads the links as of the write lock."""
        key = link.key
        record = PutLink(
            source=key.from_id.value, target=key.to_id.value, relation=key.relation.value, created=format_instant(link.created_at)
        )
        line = checked_line(record)
        with self._writing():
            state = self._live.state
            for note_id in (record.source, record.target):
                state.damage.check_note(note_id)
                if note_id not in state.notes.row_of:
                    return False
            if key.relation == SUPERSEDES and state.links.closes_cycle(record.source, record.target):
                raise SupersessionCycle(record.source, record.target)
            if record.key not in state.links:
                self._commit(record, lines=[line])
            return True

    def unlink(self, key: LinkKey) -> bool:
        """See ``NoteWriter.unlink``. A link known to be damaged is removed too (the record
        heals the damage) and counts as removed."""
        record = DeleteLink(source=key.from_id.value, target=key.to_id.value, relation=key.relation.value)
        with self._writing():
            state = self._live.state
            if record.key not in state.links and record.key not in state.damage.links:
                return False
            self._commit(record)
            return True

    def drop_namespace(self, namespace: Namespace) -> int:
        with self._writing():
            count = len(self._live.state.droppable(str(namespace)))
            if count:
                self._commit(Drop(namespace=str(namespace)))
            return count

    def put_global(self, entry: GlobalEntry) -> None:
        record = PutGlobal(
            project=entry.project_id.value,
            key=entry.key.value,
            value=entry.value,
            updated=format_instant(entry.updated_at),
        )
        with self._writing():
            self._commit(record)

    def compact(self) -> None:
        """Fold the journal into a new snapshot now (also done automatically)."""
        with self._writing():
            self._live.compact()

    # -- reading ----------------------------------------------------------------------

    def get(self, note_id: NoteId) -> StoredNote | None:
        with self._reading():
            self._live.sync()
            return self._live.state.get(note_id.value)

    def get_many(self, note_ids: Sequence[NoteId]) -> dict[NoteId, StoredNote]:
        with self._reading():
            self._live.sync()
            found = {note_id: self._live.state.get(note_id.value) for note_id in note_ids}
        return {note_id: stored for note_id, stored in found.items() if stored is not None}

    def candidates(self, query: CandidateQuery) -> Candidates:
        """See ``NoteReader.candidates``: one pass over the state (``memory.search``); ``StoreError``
        for a vector of the wrong length. A pending vector is computed without the mutex,
        beside the part that needs none: the answer is as of that part, unless a thread
        applied a record meanwhile (then all is read anew). Without words to look up, that
        part is too small to hand to another thread."""
        if query.text is None:
            query = query.resolved()
        if not query.pending:
            with self._reading():
                self._live.sync()
                return search.candidates(self._live.state, query, self._mutex)

        def vectorless() -> tuple[search.Vectorless, tuple[object, int, int]]:
            with self._reading():
                self._live.sync()
                return search.vectorless(self._live.state, query), self._seen()

        (first, seen), query = query.beside(vectorless)
        with self._reading():
            if self._seen() != seen:
                self._live.sync()
                first = None
            return search.candidates(self._live.state, query, self._mutex, first)

    def candidates_each(self, queries: Sequence[CandidateQuery]) -> list[Candidates]:
        """See ``NoteReader.candidates_each``: one pass over one state (a filter's rows are
        kept from one question to the next, ``StoreState.selection``); pending vectors are
        computed first, without the mutex."""
        queries = [query.resolved() for query in queries]
        with self._reading():
            self._live.sync()
            return [search.candidates(self._live.state, query, self._mutex) for query in queries]

    def neighbours(
        self, note_ids: Sequence[str], where: NoteFilter, namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Candidates:
        """See ``NoteReader.neighbours``: from the note columns, as ``candidates`` finds them."""
        query = CandidateQuery(where, 0, namespace, vector)
        with self._reading():
            self._live.sync()
            return search.neighbours(self._live.state, note_ids, query, self._mutex)

    def _seen(self) -> tuple[object, int, int]:
        """What changes whenever the state does: it, its generation, the records it applied."""
        state = self._live.state
        return state, self._live.generation, state.applied

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        with self._reading():
            self._live.sync()
            return self._live.state.list_recent(where, limit)

    def links(self, note_id: NoteId) -> list[Link]:
        with self._reading():
            self._live.sync()
            records = self._live.state.links_of(note_id.value)
        return [_link_of(r) for r in records]

    def iter_links(self, project_id: CanonicalProjectId | None = None) -> Iterable[Link]:
        with self._reading():
            self._live.sync()
            records = self._live.state.all_links(None if project_id is None else project_id.value)
        return [_link_of(r) for r in records]

    def iter_notes(self, project_id: CanonicalProjectId | None = None) -> Iterator[StoredNote]:
        with self._reading():
            self._live.sync()
            return self._live.state.iter_notes(None if project_id is None else project_id.value)

    def vector(self, note_id: NoteId, namespace: Namespace) -> Vector | None:
        with self._reading():
            self._live.sync()
            return self._live.state.vector(note_id.value, str(namespace))

    def cosines(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[str, dict[str, float]]:
        ids, matrix = self._vectors(note_ids, namespace)
        return cosine_rows([i.value for i in ids], matrix)

    def vectors(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[NoteId, Vector]:
        ids, matrix = self._vectors(note_ids, namespace)
        return dict(zip(ids, matrix))

    def _vectors(self, note_ids: Iterable[NoteId], namespace: Namespace) -> tuple[list[NoteId], np.ndarray]:
        """The notes of ``note_ids`` (each once) with a vector in ``namespace``, and those vectors as rows."""
        ids = list(dict.fromkeys(note_ids))
        with self._reading():
            self._live.sync()
            held, matrix = self._live.state.vectors([n.value for n in ids], str(namespace))
        return [ids[i] for i in held], matrix

    def namespaces(self) -> dict[Namespace, int]:
        with self._reading():
            self._live.sync()
            return {self._live.state.namespace(ns): len(s) for ns, s in self._live.state.spaces.items() if len(s)}

    def disk_bytes(self) -> int:
        return tree_bytes(self._root)

    def get_global(self, project_id: CanonicalProjectId, key: GlobalKey) -> GlobalEntry | None:
        with self._reading():
            self._live.sync()
            record = self._live.state.get_global(project_id.value, key.value)
            return None if record is None else _entry_of(record)

    def iter_globals(self, project_id: CanonicalProjectId | None = None) -> Iterable[GlobalEntry]:
        with self._reading():
            self._live.sync()
            records = self._live.state.all_globals()
        return [_entry_of(r) for r in records if project_id is None or r.project == project_id.value]

    def close(self) -> None:
        """Release files; the store must not be used afterwards. Idempotent."""
        with self._mutex:
            if not self._closed:
                self._closed = True
                self._live.close()
                self._lock.close()


def _entry_of(record: PutGlobal) -> GlobalEntry:
    return GlobalEntry(
        CanonicalProjectId(record.project), GlobalKey(record.key), record.value, parse_instant(record.updated)
    )


def _link_of(record: PutLink) -> Link:
    try:
        key = LinkKey(NoteId(record.source), NoteId(record.target), Relation(record.relation))
        return Link(key, parse_instant(record.created))
    except DomainError as exc:
        raise StoreCorrupt(f"link {record.key} as stored breaks a rule ({exc})") from exc


def _at_index(index: int, check: Callable[[Record], bytes], record: Record) -> bytes:
    try:
        return check(record)
    except InvalidValue as exc:
        raise exc.at(f"[{index}]") from None
