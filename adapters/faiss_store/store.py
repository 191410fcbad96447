"""``FaissNoteStore``: the ``NoteStore`` port on local disk, shared by several processes.

Layout of ``data_dir`` (format 1, see ``records``)::

    LOCK                      flock'd by a writer for each write and each compaction
    MANIFEST.json             {"format":1,"generation":g,"snapshot":…,"journal":…}
    snapshot-<g>/             sidecar.json + space-<n>.faiss (absent for generation 0)
    journal-<g>.jsonl         header, then every write since snapshot g

Guarantees:

* A write returns only after its journal line is fsync'd: it survives ``kill -9`` and
  power loss. Its cost does not depend on the store's size (one appended line).
* A line that is incomplete or fails its CRC at the end of the journal (a crashed
  writer's) is never applied and is truncated by the next writer, under the lock.
* Every read first stats the manifest and the journal and replays what other processes
  appended, so it sees every write acknowledged before it began, in any process.
* Compaction (automatic past ``compact_after_records``/``compact_after_bytes``, or
  ``compact()``) writes snapshot g+1 and an empty journal g+1, then switches the manifest
  atomically. A process at generation g finishes reading journal g (already open, so its
  removal does not matter) and follows on to journal g+1; one further behind reloads.

Failure modes: ``StoreError`` for I/O errors and wrong vector lengths, ``StoreCorrupt``
for a file that is not what its format says. Sets FAISS to one OpenMP thread (single
queries are many times faster that way on small machines).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import faiss
import msgspec
import structlog

from adapters.faiss_store.disk import TMP_MARK, FileLock, remove_path, replace_atomically, tree_bytes
from adapters.faiss_store.journal import Journal
from adapters.faiss_store.records import (
    FORMAT,
    Delete,
    Drop,
    Manifest,
    Put,
    PutGlobal,
    Record,
    Rehome,
    decode_manifest,
    encode,
    fields_of,
    vector_bytes,
)
from adapters.faiss_store.snapshot import load_snapshot, write_snapshot
from adapters.faiss_store.state import StoreState
from application.errors import StoreError
from application.ports import Hit, StoredNote, Vector
from domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from domain.note import GlobalEntry, Note, NoteFilter
from domain.time import format_instant, parse_instant

log = structlog.get_logger()

MANIFEST = "MANIFEST.json"
LOCK = "LOCK"


def journal_name(generation: int) -> str:
    return f"journal-{generation:08d}.jsonl"


class FaissNoteStore:
    """Notes in ``data_dir`` (created if missing). Thread-safe; see the module docstring."""

    def __init__(
        self,
        data_dir: Path,
        *,
        compact_after_records: int = 20_000,
        compact_after_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        faiss.omp_set_num_threads(1)
        self._root = Path(data_dir)
        self._manifest_path = self._root / MANIFEST
        self._compact_records = compact_after_records
        self._compact_bytes = compact_after_bytes
        self._mutex = threading.RLock()
        self._state = StoreState()
        self._journal: Journal | None = None
        self._generation = -1
        self._manifest_seen: tuple[int, int, int] | None = None
        with self._io("open"):
            self._root.mkdir(parents=True, exist_ok=True)
            self._lock = FileLock(self._root / LOCK)
            if not self._manifest_path.exists():
                with self._lock:
                    if not self._manifest_path.exists():
                        self._initialize()
            self._sync()

    # -- reading and following other processes ----------------------------------------

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

    def _initialize(self) -> None:
        Journal.create(self._root / journal_name(0), 0).close()
        manifest = Manifest(format=FORMAT, generation=0, snapshot=None, journal=journal_name(0))
        replace_atomically(self._manifest_path, encode(manifest))
        log.info("store.created", path=str(self._root))

    def _read_manifest(self) -> Manifest:
        return decode_manifest(self._manifest_path.read_bytes(), str(self._manifest_path))

    def _sync(self) -> None:
        """Catch up with every write any process acknowledged so far."""
        stat = os.stat(self._manifest_path)
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._manifest_seen or (self._journal is not None and self._journal.unlinked()):
            manifest = self._read_manifest()
            if manifest.generation != self._generation:
                self._switch(manifest)
            self._manifest_seen = seen
        assert self._journal is not None
        for record in self._journal.read_new():
            self._state.apply(record)

    def _switch(self, manifest: Manifest) -> None:
        if self._journal is not None and manifest.generation == self._generation + 1:
            try:
                following = Journal.open(self._root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                following = None
            if following is not None:
                for record in self._journal.read_new():  # final: the manifest moved on
                    self._state.apply(record)
                self._journal.close()
                self._journal, self._generation = following, manifest.generation
                log.debug("store.generation_followed", generation=manifest.generation)
                return
        self._reload(manifest)

    def _reload(self, manifest: Manifest) -> None:
        started = time.perf_counter()
        for _attempt in range(10):
            try:
                journal = Journal.open(self._root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                manifest = self._read_manifest()
                continue
            try:
                state = load_snapshot(self._root, manifest.snapshot, manifest.generation)
            except FileNotFoundError:
                journal.close()
                manifest = self._read_manifest()
                continue
            break
        else:
            raise StoreError("the store kept compacting while it was being loaded; retry", str(self._root))
        if self._journal is not None:
            self._journal.close()
        self._state, self._journal, self._generation = state, journal, manifest.generation
        log.info(
            "store.loaded",
            path=str(self._root),
            generation=manifest.generation,
            notes=len(state.entries),
            seconds=round(time.perf_counter() - started, 3),
        )

    # -- writing ----------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._io("write"), self._lock:
            self._sync()
            assert self._journal is not None
            self._journal.cut_torn_tail()
            yield
            journal = self._journal
            if journal.records >= self._compact_records or journal.offset >= self._compact_bytes:
                self._compact()

    def _commit(self, record: Record) -> None:
        assert self._journal is not None
        try:
            self._journal.append(record)
        except (msgspec.EncodeError, TypeError, ValueError) as exc:
            raise StoreError(f"the note cannot be stored as JSON: {exc}") from exc
        self._state.apply(record)

    def put(self, note: Note, namespace: Namespace, vector: Vector | None) -> None:
        """See ``NoteStore.put``. ``StoreError`` for a vector of the wrong length."""
        data = None if vector is None else vector_bytes(vector, namespace.dim)
        record = Put(note=fields_of(note), namespace=str(namespace), vector=data)
        with self._writing():
            if data is None:
                self._state.require_vector(note.id.value, record.namespace)
            self._commit(record)

    def rehome(self, namespace: Namespace, vectors: Mapping[NoteId, Vector]) -> None:
        rows = {note_id.value: vector_bytes(v, namespace.dim) for note_id, v in vectors.items()}
        with self._writing():
            ids = tuple(i for i in rows if i in self._state.entries)
            if ids:
                data = b"".join(rows[i] for i in ids)
                self._commit(Rehome(namespace=str(namespace), ids=ids, vectors=data))

    def delete(self, note_id: NoteId) -> bool:
        with self._writing():
            if note_id.value not in self._state.entries:
                return False
            self._commit(Delete(id=note_id.value))
            return True

    def drop_namespace(self, namespace: Namespace) -> int:
        with self._writing():
            count = len(self._state.droppable(str(namespace)))
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
            self._compact()

    def _compact(self) -> None:
        assert self._journal is not None
        started = time.perf_counter()
        generation = self._generation + 1
        snapshot = write_snapshot(self._root, generation, self._state)
        journal = Journal.create(self._root / journal_name(generation), generation)
        manifest = Manifest(format=FORMAT, generation=generation, snapshot=snapshot, journal=journal.path.name)
        replace_atomically(self._manifest_path, encode(manifest))
        self._journal.close()
        self._journal, self._generation = journal, generation
        self._manifest_seen = None
        self._remove_stale(keep={snapshot, journal.path.name, MANIFEST, LOCK})
        log.info(
            "store.compacted",
            path=str(self._root),
            generation=generation,
            notes=len(self._state.entries),
            seconds=round(time.perf_counter() - started, 3),
        )

    def _remove_stale(self, keep: set[str]) -> None:
        """Older generations and leftovers of crashed writers. Called with the lock held:
        a process still reading an older journal holds it open, unaffected by unlinking."""
        for path in self._root.iterdir():
            name = path.name
            if name not in keep and (name.startswith(("snapshot-", "journal-")) or TMP_MARK in name):
                remove_path(path)

    # -- reading ----------------------------------------------------------------------

    def get(self, note_id: NoteId) -> StoredNote | None:
        with self._reading():
            self._sync()
            entry = self._state.entries.get(note_id.value)
            return None if entry is None else self._state.stored(entry)

    def search(self, namespace: Namespace, query: Vector, where: NoteFilter, top_k: int) -> list[Hit]:
        """See ``NoteStore.search``; ``StoreError`` for a query of the wrong length."""
        with self._reading():
            self._sync()
            return self._state.search(namespace, query, where, top_k)

    def keyword_search(self, query: str, where: NoteFilter, top_k: int) -> list[Hit]:
        with self._reading():
            self._sync()
            return self._state.keyword_search(query, where, top_k)

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        with self._reading():
            self._sync()
            return self._state.list_recent(where, limit)

    def iter_notes(self, project_id: CanonicalProjectId | None = None) -> Iterator[StoredNote]:
        with self._reading():
            self._sync()
            return self._state.iter_notes(None if project_id is None else project_id.value)

    def vector(self, note_id: NoteId, namespace: Namespace) -> Vector | None:
        with self._reading():
            self._sync()
            space = self._state.spaces.get(str(namespace))
            return None if space is None else space.vector(note_id.value)

    def namespaces(self) -> dict[Namespace, int]:
        with self._reading():
            self._sync()
            return {self._state.namespace(ns): len(s) for ns, s in self._state.spaces.items() if len(s)}

    def disk_bytes(self) -> int:
        return tree_bytes(self._root)

    def get_global(self, project_id: CanonicalProjectId, key: GlobalKey) -> GlobalEntry | None:
        with self._reading():
            self._sync()
            record = self._state.globals.get((project_id.value, key.value))
            return None if record is None else _entry_of(record)

    def iter_globals(self, project_id: CanonicalProjectId | None = None) -> Iterable[GlobalEntry]:
        with self._reading():
            self._sync()
            records = list(self._state.globals.values())
        return [_entry_of(r) for r in records if project_id is None or r.project == project_id.value]

    def close(self) -> None:
        """Release files; the store must not be used afterwards. Idempotent."""
        with self._mutex:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
                self._lock.close()


def _entry_of(record: PutGlobal) -> GlobalEntry:
    return GlobalEntry(
        CanonicalProjectId(record.project), GlobalKey(record.key), record.value, parse_instant(record.updated)
    )
