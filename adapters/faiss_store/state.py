"""The store's contents in memory: what replaying the snapshot and journal produces.

``StoreState`` applies records (``records.Record``) and answers queries. It knows nothing
of files or processes; ``FaissNoteStore`` feeds it, in journal order, every record any
process wrote, so every process holds the same state. Notes are kept in write order (a
put moves a note to the end); ``Note`` objects are built lazily, on first read, which
keeps opening a large store fast.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence

from adapters.faiss_store.records import (
    FORMAT,
    Delete,
    NoteFields,
    Drop,
    Put,
    PutGlobal,
    Record,
    Rehome,
    Sidecar,
    SidecarNote,
    SpaceFile,
    instant_micros,
    micros,
    namespace_dim,
    note_of,
    vector_rows,
)
from adapters.faiss_store.space import VectorSpace
from adapters.keyword_index import KeywordIndex, document_tokens
from application.errors import StoreError
from application.ports import Hit, StoredNote
from domain.identifiers import Namespace
from domain.note import Note, NoteFilter


class Entry:
    """One note: stored fields, home namespace, write sequence, and its filter labels
    (project code, group code, createdAt in µs) as the vector spaces index them."""

    __slots__ = ("fields", "home", "seq", "labels", "note")

    def __init__(self, fields: NoteFields, home: str, seq: int, labels: tuple[int, int, int]) -> None:
        self.fields = fields
        self.home = home
        self.seq = seq
        self.labels = labels
        self.note: Note | None = None

    @property
    def created(self) -> int:
        return self.labels[2]


class StoreState:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.spaces: dict[str, VectorSpace] = {}
        self.globals: dict[tuple[str, str], PutGlobal] = {}
        self._by_project: dict[str, dict[str, Entry]] = {}
        self._codes: dict[str, int] = {}
        self._namespaces: dict[str, Namespace] = {}
        self._seq = 0
        self.keywords = KeywordIndex(self._documents)

    # -- applying records -------------------------------------------------------------

    def apply(self, record: Record) -> None:
        if isinstance(record, Put):
            self._put(record)
        elif isinstance(record, Rehome):
            self._rehome(record)
        elif isinstance(record, Delete):
            self._delete(record.id)
        elif isinstance(record, Drop):
            self._drop(record.namespace)
        else:
            self.globals.pop((record.project, record.key), None)
            self.globals[(record.project, record.key)] = record

    def add_entry(self, fields: NoteFields, home: str) -> Entry:
        note_id = fields.id
        old = self.entries.pop(note_id, None)
        if old is not None:
            del self._by_project[old.fields.project][note_id]
            self.keywords.remove(old.fields.project, note_id)
        self._seq += 1
        labels = (self._code(fields.project), self._code(fields.group), micros(fields.created))
        entry = self.entries[note_id] = Entry(fields, home, self._seq, labels)
        self._by_project.setdefault(fields.project, {})[note_id] = entry
        self.keywords.add(fields.project, note_id, fields.title, fields.text, fields.tags)
        return entry

    def load_entries(self, items: Iterable[SidecarNote]) -> None:
        """``add_entry`` for every note of a snapshot, into an empty state, fast."""
        code, entries, by_project = self._code, self.entries, self._by_project
        seq = self._seq
        for item in items:
            seq += 1
            fields = item.note
            entry = Entry(fields, item.home, seq, (code(fields.project), code(fields.group), micros(fields.created)))
            entries[fields.id] = entry
            project = by_project.get(fields.project)
            if project is None:
                project = by_project[fields.project] = {}
            project[fields.id] = entry
        self._seq = seq

    def _put(self, record: Put) -> None:
        entry = self.add_entry(record.note, record.namespace)
        labels = self.labels(entry.fields.id)
        for space in self.spaces.values():
            space.relabel(entry.fields.id, labels)
        if record.vector is not None:
            self.space(record.namespace).put(entry.fields.id, vector_rows(record.vector, namespace_dim(record.namespace))[0], labels)

    def _rehome(self, record: Rehome) -> None:
        rows = vector_rows(record.vectors, namespace_dim(record.namespace))
        space = self.space(record.namespace)
        for note_id, row in zip(record.ids, rows):
            entry = self.entries.get(note_id)
            if entry is not None:
                space.put(note_id, row, self.labels(note_id))
                entry.home = record.namespace

    def _delete(self, note_id: str) -> None:
        entry = self.entries.pop(note_id, None)
        if entry is None:
            return
        del self._by_project[entry.fields.project][note_id]
        self.keywords.remove(entry.fields.project, note_id)
        for space in self.spaces.values():
            space.remove(note_id)

    def _drop(self, namespace: str) -> None:
        space = self.spaces.get(namespace)
        if space is None:
            return
        for note_id in self.droppable(namespace):
            space.remove(note_id)

    def droppable(self, namespace: str) -> list[str]:
        space = self.spaces.get(namespace)
        if space is None:
            return []
        return [i for i in space.slot_of if self.entries[i].home != namespace]

    def space(self, namespace: str) -> VectorSpace:
        space = self.spaces.get(namespace)
        if space is None:
            space = self.spaces[namespace] = VectorSpace(namespace_dim(namespace))
        return space

    def labels(self, note_id: str) -> tuple[int, int, int]:
        return self.entries[note_id].labels

    def _code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self._codes)
        return code

    # -- queries ----------------------------------------------------------------------

    def namespace(self, text: str) -> Namespace:
        namespace = self._namespaces.get(text)
        if namespace is None:
            namespace = self._namespaces[text] = Namespace.parse(text)
        return namespace

    def stored(self, entry: Entry) -> StoredNote:
        if entry.note is None:
            entry.note = note_of(entry.fields)
        return StoredNote(entry.note, self.namespace(entry.home))

    def order(self, note_id: str) -> tuple:
        """Tie order: newer createdAt first, then id."""
        return -self.entries[note_id].created, note_id

    def search(self, namespace: Namespace, query: Sequence[float], where: NoteFilter, top_k: int) -> list[Hit]:
        space = self.spaces.get(str(namespace))
        project = self._codes.get(where.project_id.value)
        group = None if where.group_id is None else self._codes.get(where.group_id.value, -2)
        if space is None or project is None:
            return []
        window = where.window
        since = None if window.since is None else instant_micros(window.since)
        until = None if window.until is None else instant_micros(window.until)
        required = set(where.tags.values)
        accept = (lambda i: required <= set(self.entries[i].fields.tags)) if required else None
        found = space.search(query, top_k, (project, group, since, until), accept, self.order)
        return [Hit(self.stored(self.entries[i]), score) for i, score in found]

    def keyword_search(self, query: str, where: NoteFilter, top_k: int) -> list[Hit]:
        accept = self._matcher(where)
        found = self.keywords.search(
            where.project_id.value, query, top_k, lambda i: accept(self.entries[i]), self.order
        )
        return [Hit(self.stored(self.entries[i]), score) for i, score in found]

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        accept = self._matcher(where)
        candidates = self._by_project.get(where.project_id.value, {}).values()
        newest = heapq.nlargest(limit, filter(accept, candidates), key=lambda e: (e.created, e.seq))
        return [self.stored(entry) for entry in newest]

    def iter_notes(self, project: str | None) -> Iterator[StoredNote]:
        source = self.entries if project is None else self._by_project.get(project, {})
        return (self.stored(entry) for entry in list(source.values()))

    def _matcher(self, where: NoteFilter):
        group = None if where.group_id is None else where.group_id.value
        required = set(where.tags.values)
        window = where.window
        since = None if window.since is None else instant_micros(window.since)
        until = None if window.until is None else instant_micros(window.until)

        def accept(entry: Entry) -> bool:
            return (
                (group is None or entry.fields.group == group)
                and (not required or required <= set(entry.fields.tags))
                and (since is None or entry.created >= since)
                and (until is None or entry.created < until)
            )

        return accept

    def _documents(self, project: str):
        for note_id, entry in self._by_project.get(project, {}).items():
            fields = entry.fields
            yield note_id, document_tokens(fields.title, fields.text, fields.tags)

    def require_vector(self, note_id: str, namespace: str) -> None:
        space = self.spaces.get(namespace)
        if space is None or note_id not in space:
            raise StoreError(f"note {note_id} has no vector in namespace {namespace}; pass one")

    def to_sidecar(self, generation: int, space_files: dict[str, str]) -> Sidecar:
        return Sidecar(
            format=FORMAT,
            generation=generation,
            notes=[SidecarNote(note=e.fields, home=e.home) for e in self.entries.values()],
            spaces=[SpaceFile(namespace=ns, file=space_files[ns], ids=list(s.ids)) for ns, s in self.spaces.items()],
            globals=list(self.globals.values()),
        )
