"""The store's contents in memory: what replaying the snapshot and journal produces.

``StoreState`` applies records (``records.Record``) and answers queries. It knows nothing
of files or processes; ``FaissNoteStore`` feeds it, in journal order, every record any
process wrote, so every process holds the same state. Notes live in a ``NoteTable`` (one
append-only row per written version, numpy columns for the filters, fields decoded on
demand) and vectors in one ``VectorSpace`` per namespace, keyed by note row; nothing is
built per note when a snapshot is opened but the id strings.

A search is one question, answered from this state by ``answers.candidates``.

Damage found in the files (``damage``) is applied like a record: what it was about is
taken out of the state (a note as if deleted, a global as if never set) and every answer
that would depend on it raises ``StoreCorrupt``; a later record about the same thing heals it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import numpy as np

from mcp_memory.adapters.faiss_store.damage import Damage, Damaged
from mcp_memory.adapters.faiss_store.notes import NoteTable
from mcp_memory.adapters.faiss_store.records import (
    Delete,
    Drop,
    NoteFields,
    Put,
    PutGlobal,
    Record,
    Rehome,
    instant_micros,
    micros,
    namespace_dim,
    note_of,
    vector_rows,
)
from mcp_memory.adapters.faiss_store.space import VectorSpace
from mcp_memory.adapters.keyword_index import KeywordIndex
from mcp_memory.adapters.text_analysis import document_tokens
from mcp_memory.application.errors import StoreError
from mcp_memory.application.ports import StoredNote
from mcp_memory.domain.identifiers import Namespace
from mcp_memory.domain.note import NoteFilter


class StoreState:
    def __init__(self, notes: NoteTable | None = None) -> None:
        self.notes = notes if notes is not None else NoteTable()
        self.spaces: dict[str, VectorSpace] = {}
        self.globals: dict[tuple[str, str], PutGlobal] = {}
        self.damage = Damage()
        self._namespaces: dict[str, Namespace] = {}
        self._selection: tuple[NoteFilter, np.ndarray | None] | None = None  # until the next record (``selection``)
        documents = weakref.WeakMethod(self._documents)  # no cycle: a replaced state, and
        self.keywords = KeywordIndex(lambda project: documents()(project))  # its mapped files, go at once

    def __len__(self) -> int:
        return len(self.notes)

    def __contains__(self, note_id: str) -> bool:
        """Whether the note is here, or damaged (then deleting or replacing it heals it)."""
        return note_id in self.notes.row_of or note_id in self.damage.notes

    # -- applying records -------------------------------------------------------------

    def apply(self, record: Record | Damaged) -> None:
        """Apply one record. ``ValueError``/``InvalidValue`` before any change when a
        record cannot apply (the caller reports it as damage)."""
        self._selection = None
        if isinstance(record, Put):
            self._put(record)
        elif isinstance(record, Rehome):
            self._rehome(record)
        elif isinstance(record, Delete):
            self._delete(record.id)
            self.damage.notes.pop(record.id, None)
        elif isinstance(record, Drop):
            self._drop(record.namespace)
        elif isinstance(record, PutGlobal):
            self.globals.pop((record.project, record.key), None)
            self.globals[(record.project, record.key)] = record
            self.damage.globals.pop((record.project, record.key), None)
        else:
            self._damaged(record)

    def _damaged(self, found: Damaged) -> None:
        self.damage.record(found)
        if found.about is not None:
            for note_id in found.about.notes:
                self._delete(note_id)
            for key in found.about.globals:
                self.globals.pop(key, None)

    def lose_note(self, row: int, path: str) -> None:
        """A note whose stored fields fail their checksum: out of every answer."""
        note_id = self.notes.ids[row]
        self._delete(note_id)
        self.damage.notes[note_id] = path

    def _put(self, record: Put) -> None:
        fields = record.note
        created = micros(fields.created)  # what may fail, before anything changes
        namespace_dim(record.namespace)
        vector = None if record.vector is None else _one_vector(record.vector, record.namespace)
        old = self.notes.row_of.get(fields.id)
        if old is not None:
            self.keywords.remove(self.notes.names.names[self.notes.project[old]], fields.id)
            self.notes.kill(old)
        row = self.notes.append(fields, record.namespace, created)
        if old is not None:
            for space in self.spaces.values():
                space.move(old, row)
        self.keywords.add(fields.project, fields.id, created, fields.title, fields.text, fields.tags)
        if vector is not None:
            self.space(record.namespace).put(row, vector)
            self.damage.notes.pop(fields.id, None)
        elif fields.id in self.damage.notes:  # its vector may be the damaged record's
            self._delete(fields.id)

    def _rehome(self, record: Rehome) -> None:
        rows = vector_rows(record.vectors, namespace_dim(record.namespace))
        if rows.shape[0] != len(record.ids):
            raise ValueError(f"a rehome record holds {rows.shape[0]} vectors for {len(record.ids)} notes")
        space = self.space(record.namespace)
        home = self.notes.names.code(record.namespace)
        for note_id, vector in zip(record.ids, rows):
            row = self.notes.row_of.get(note_id)
            if row is not None:
                space.put(row, vector)
                self.notes.home[row] = home

    def _delete(self, note_id: str) -> None:
        row = self.notes.row_of.get(note_id)
        if row is None:
            return
        self.keywords.remove(self.notes.names.names[self.notes.project[row]], note_id)
        self.notes.kill(row)
        for space in self.spaces.values():
            space.remove(row)

    def _drop(self, namespace: str) -> None:
        space = self.spaces.get(namespace)
        if space is not None:
            for row in self._droppable_rows(namespace):
                space.remove(int(row))

    def _droppable_rows(self, namespace: str) -> np.ndarray:
        space = self.spaces.get(namespace)
        if space is None:
            return np.empty(0, dtype=np.int64)
        rows = space.rows()
        return rows[self.notes.home.values[rows] != self.notes.names.find(namespace)]

    def droppable(self, namespace: str) -> list[str]:
        """Ids of the notes holding a vector in ``namespace`` that is not their home."""
        return [self.notes.ids[row] for row in self._droppable_rows(namespace).tolist()]

    def repartition(self) -> None:
        """Partition the spaces grown large enough since (``VectorSpace.repartition``)."""
        for space in self.spaces.values():
            space.repartition()

    def space(self, namespace: str) -> VectorSpace:
        space = self.spaces.get(namespace)
        if space is None:
            space = self.spaces[namespace] = VectorSpace(namespace_dim(namespace))
        return space

    # -- queries ----------------------------------------------------------------------

    def namespace(self, text: str) -> Namespace:
        namespace = self._namespaces.get(text)
        if namespace is None:
            namespace = self._namespaces[text] = Namespace.parse(text)
        return namespace

    def stored(self, row: int) -> StoredNote:
        return StoredNote(self.notes.note(row), self.namespace(self.notes.home_name(row)))

    def get(self, note_id: str) -> StoredNote | None:
        self.damage.check_note(note_id)
        row = self.notes.row_of.get(note_id)
        return None if row is None else self.stored(row)

    def get_global(self, project: str, key: str) -> PutGlobal | None:
        record = self.globals.get((project, key))
        self.damage.check_global(project, key, record is not None)
        return record

    def all_globals(self) -> list[PutGlobal]:
        self.damage.check_globals()
        return list(self.globals.values())

    def vector(self, note_id: str, namespace: str) -> np.ndarray | None:
        self.damage.check_note(note_id)
        self.damage.check_space(namespace)
        row = self.notes.row_of.get(note_id)
        space = self.spaces.get(namespace)
        return None if row is None or space is None else space.vector(row)

    def selection(self, where: NoteFilter) -> np.ndarray | None:
        """The rows ``where`` selects. The last answer is kept until a record is applied: a
        session asks about one scope again and again, and a vector space keeps what it
        derives from the same array (its slots, by list) for as long. Callers must not change
        it. Every query starts here, so here too damage of unknown subject fails it."""
        self.damage.check()
        if self._selection is not None and self._selection[0] == where:
            return self._selection[1]
        window = where.window
        mask = self.notes.mask(
            where.project_id.value,
            None if where.group_id is None else where.group_id.value,
            None if window.since is None else instant_micros(window.since),
            None if window.until is None else instant_micros(window.until),
            where.tags.values,
        )
        self._selection = (where, mask)
        return mask

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        mask = self.selection(where)
        if mask is None or limit <= 0:
            return []
        rows = np.flatnonzero(mask)
        created = self.notes.created.values[rows]
        newest = rows[np.lexsort((-rows, -created))[:limit]]  # newest createdAt, then last written
        return [self.stored(row) for row in newest.tolist()]

    def iter_notes(self, project: str | None) -> Iterator[StoredNote]:
        """Live notes in write order, as of this call: what it yields, later and outside
        the store's lock, reads only immutable data (snapshot bytes, captured fields).
        ``StoreCorrupt`` if any note is damaged: an export must not quietly miss one."""
        self.damage.check_notes()
        notes = self.notes
        rows = notes.live_rows(project).tolist()
        items = [(row, self.namespace(notes.home_name(row)), notes.captured(row)) for row in rows]
        return (StoredNote(note_of(fields or notes.fields(row)), home) for row, home, fields in items)

    def _documents(self, project: str):
        notes = self.notes
        for row in notes.live_rows(project).tolist():
            fields: NoteFields = notes.fields(row)
            yield fields.id, int(notes.created[row]), document_tokens(fields.title, fields.text, fields.tags)

    def require_vector(self, note_id: str, namespace: str) -> None:
        row = self.notes.row_of.get(note_id)
        space = self.spaces.get(namespace)
        if row is None or space is None or not space.has(row):
            raise StoreError(f"note {note_id} has no vector in namespace {namespace}; pass one")


def _one_vector(data: bytes, namespace: str) -> np.ndarray:
    dim = namespace_dim(namespace)
    if len(data) != 4 * dim:
        raise ValueError(f"a put record holds {len(data)} vector bytes for namespace {namespace}")
    return vector_rows(data, dim)[0]

