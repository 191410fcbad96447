"""``InMemoryNoteStore``: the store ports (``NoteStore``) in plain Python, for tests.

It honours the whole contract (exact filters, tie order, namespaces, global KV, keyword
search through the shared ``KeywordIndex``) with the simplest code that can: a brute-force
scan per question. Nothing is persisted; ``disk_bytes`` is 0. Thread-safe.
"""

from __future__ import annotations

import operator
import threading
from contextlib import AbstractContextManager, nullcontext
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from itertools import count

import numpy as np

from local_mcp_memory.adapters.keyword_index import KeywordIndex
from local_mcp_memory.adapters.text_analysis import document_tokens
from local_mcp_memory.application.errors import StoreError, SupersessionCycle
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, CandidateQuery, Candidates, Neighbour, Spread, StoredNote, Vector
from local_mcp_memory.application.supersession import reaches
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey
from local_mcp_memory.domain.note import DedupKey, GlobalEntry, Note, NoteFilter


class InMemoryNoteStore:
    def __init__(self) -> None:
        self._notes: dict[str, StoredNote] = {}  # write order: a put moves a note last
        self._written: dict[str, int] = {}
        self._clock = count()
        self._vectors: dict[Namespace, dict[str, np.ndarray]] = {}
        self._globals: dict[tuple[str, str], GlobalEntry] = {}
        self._links: dict[LinkKey, tuple[Link, int]] = {}  # each with its write order
        self._keywords = KeywordIndex(self._documents)
        self._lock = threading.RLock()

    def put_many(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> None:
        with self._lock:
            for _note, vector in notes:
                _row(vector, namespace.dim)  # every length checked before anything is stored
            for note, vector in notes:
                self.put(note, namespace, vector)

    def put_batches(self, batches: Iterable[tuple[Sequence[tuple[Note, Vector]], Namespace]]) -> Iterator[int]:
        for notes, namespace in batches:
            self.put_many(notes, namespace)
            yield len(notes)

    def add(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace, now: datetime) -> list[NoteId]:
        with self._lock:
            for _note, vector in notes:
                _row(vector, namespace.dim)
            held: dict[DedupKey, NoteId] = {}
            for stored in self._notes.values():  # the first written holder of a key answers
                if not stored.note.expired(now) and stored.note.origin is None and not self._superseded(stored.note.id, now):
                    held.setdefault(stored.note.dedup_key, stored.note.id)
            ids, new = [], []
            for note, vector in notes:
                holder = held.setdefault(note.dedup_key, note.id)
                ids.append(holder)
                if holder == note.id:
                    new.append((note, vector))
            for note, vector in new:
                self.put(note, namespace, vector)
            return ids

    def put(self, note: Note, namespace: Namespace, vector: Vector | None) -> None:
        key = note.id.value
        with self._lock:
            if vector is None:
                if key not in self._vectors.get(namespace, {}):
                    raise StoreError(f"note {key} has no vector in namespace {namespace}; pass one")
            else:
                row = _row(vector, namespace.dim)
                self._vectors.setdefault(namespace, {})[key] = row
            old = self._notes.pop(key, None)
            if old is not None:
                self._keywords.remove(old.note.project_id.value, key)
            self._notes[key] = StoredNote(note, namespace)
            self._written[key] = next(self._clock)
            created = _micros(note.created_at)
            self._keywords.add(note.project_id.value, key, created, note.title, note.text, note.tags.values)

    def update(
        self, note_id: NoteId, change: Callable[[Note], Note], namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Note | None:
        with self._lock:
            stored = self._notes.get(note_id.value)
            if stored is None:
                return None
            note = change(stored.note)
            self.put(note, stored.namespace if vector is None else namespace, vector)
            return note

    def rehome(self, namespace: Namespace, vectors: Mapping[NoteId, Vector]) -> None:
        rows = {note_id.value: _row(v, namespace.dim) for note_id, v in vectors.items()}
        with self._lock:
            for key, row in rows.items():
                stored = self._notes.get(key)
                if stored is not None:
                    self._vectors.setdefault(namespace, {})[key] = row
                    self._notes[key] = StoredNote(stored.note, namespace)

    def bulk(self, namespace: Namespace, count: int) -> AbstractContextManager[None]:
        return nullcontext()  # nothing to put off: every write keeps the store's indexes

    def delete(self, note_id: NoteId) -> bool:
        with self._lock:
            stored = self._notes.pop(note_id.value, None)
            if stored is None:
                return False
            self._keywords.remove(stored.note.project_id.value, note_id.value)
            for rows in self._vectors.values():
                rows.pop(note_id.value, None)
            for key in [k for k, (link, _) in self._links.items() if link.touches(note_id)]:
                del self._links[key]
            return True

    def prolong(self, note_ids: Sequence[NoteId], now: datetime) -> int:
        with self._lock:
            count = 0
            for note_id in dict.fromkeys(note_ids):
                stored = self._notes.get(note_id.value)
                later = None if stored is None else stored.note.prolonged(now)
                if later is not None:
                    self._notes[note_id.value] = StoredNote(later, stored.namespace)  # fields only: write order kept
                    count += 1
            return count

    def _visible(self, where: NoteFilter, stored: StoredNote) -> bool:
        """``where.matches``, and not superseded unless ``where.include_superseded``."""
        if not where.matches(stored.note):
            return False
        return where.include_superseded or not self._superseded(stored.note.id, where.now)

    def _superseded(self, note_id: NoteId, now: datetime | None) -> bool:
        """Whether a ``supersedes`` link points to the note from a note not expired at ``now``."""
        for link, _order in self._links.values():
            key = link.key
            if key.relation == SUPERSEDES and key.to_id == note_id:
                source = self._notes.get(key.from_id.value)
                if source is not None and (now is None or not source.note.expired(now)):
                    return True
        return False

    def link(self, link: Link) -> bool:
        with self._lock:
            key = link.key
            if key.from_id.value not in self._notes or key.to_id.value not in self._notes:
                return False
            if key.relation == SUPERSEDES and self._closes_cycle(key.from_id, key.to_id):
                raise SupersessionCycle(key.from_id.value, key.to_id.value)
            if key not in self._links:
                self._links[key] = (link, next(self._clock))
            return True

    def _closes_cycle(self, source: NoteId, target: NoteId) -> bool:
        """Whether ``target`` is ``source`` or reaches it along ``supersedes`` links."""

        def superseded(note_id: NoteId) -> list[NoteId]:
            return [link.key.to_id for link, _ in self._links.values() if link.key.relation == SUPERSEDES and link.key.from_id == note_id]

        return reaches(target, source, superseded, "supersedes")

    def unlink(self, key: LinkKey) -> bool:
        with self._lock:
            return self._links.pop(key, None) is not None

    def links(self, note_id: NoteId) -> list[Link]:
        with self._lock:
            found = [(link, order) for link, order in self._links.values() if link.touches(note_id)]
        found.sort(key=lambda item: (item[0].created_at, item[1]), reverse=True)
        return [link for link, _ in found]

    def iter_links(self, project_id: CanonicalProjectId | None = None) -> Iterable[Link]:
        with self._lock:
            found = sorted(self._links.values(), key=lambda item: (item[0].created_at, item[1]))
            return [
                link
                for link, _ in found
                if project_id is None or self._notes[link.key.from_id.value].note.project_id == project_id
            ]

    def drop_namespace(self, namespace: Namespace) -> int:
        with self._lock:
            rows = self._vectors.get(namespace, {})
            doomed = [key for key in rows if self._notes[key].namespace != namespace]
            for key in doomed:
                del rows[key]
            return len(doomed)

    def get(self, note_id: NoteId) -> StoredNote | None:
        with self._lock:
            return self._notes.get(note_id.value)

    def get_many(self, note_ids: Sequence[NoteId]) -> dict[NoteId, StoredNote]:
        with self._lock:
            found = {note_id: self._notes.get(note_id.value) for note_id in note_ids}
        return {note_id: stored for note_id, stored in found.items() if stored is not None}

    def candidates(self, query: CandidateQuery) -> Candidates:
        """A pending vector is waited for under the lock, after the keyword candidates: one moment."""
        where = query.where
        with self._lock:
            keyword = [] if query.text is None else self._keyword(query.text, where, query.depth)
            query = query.resolved()
            q = None if query.vector is None else _row(query.vector, query.namespace.dim)
            matching = [key for key, s in self._notes.items() if self._visible(where, s)]
            vectors = {} if q is None else self._vectors.get(query.namespace, {})
            scored = [(key, float(np.dot(vectors[key], q))) for key in matching if key in vectors]
            semantic = self._ranked(scored)[: query.depth]
            spread = _spread([vectors[key] for key, _ in scored], q, query.spread_sample)
            neighbours = {}
            if query.neighbours:
                scope = set(matching)
                for c in (*semantic, *keyword):
                    near = self._adjacent(c.id, scope)
                    neighbours[c.id] = [Neighbour(n, self._created(n), _cosine(vectors.get(n), q)) for n in near]
            named = {c.id for c in (*semantic, *keyword)} | {n.id for near in neighbours.values() for n in near}
            return Candidates(semantic, keyword, spread, neighbours, {key: self._notes[key] for key in named})

    def candidates_each(self, queries: Sequence[CandidateQuery]) -> list[Candidates]:
        with self._lock:
            return [self.candidates(query) for query in queries]

    def neighbours(
        self, note_ids: Sequence[str], where: NoteFilter, namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Candidates:
        with self._lock:
            q = None if vector is None else _row(vector, namespace.dim)
            vectors = {} if q is None else self._vectors.get(namespace, {})
            scope = {key for key, s in self._notes.items() if self._visible(where, s)}
            neighbours = {
                key: [Neighbour(n, self._created(n), _cosine(vectors.get(n), q)) for n in self._adjacent(key, scope)]
                for key in dict.fromkeys(note_ids) if key in scope
            }
            named = {n.id for near in neighbours.values() for n in near}
            return Candidates(neighbours=neighbours, notes={key: self._notes[key] for key in named})

    def _keyword(self, text: str, where: NoteFilter, depth: int) -> list[Candidate]:
        found = self._keywords.search(
            where.project_id.value,
            text,
            depth,
            lambda keys: np.array([self._visible(where, self._notes[key]) for key in keys], dtype=bool),
        )
        return [Candidate(key, self._created(key), score) for key, score in found]

    def _ranked(self, scored: list[tuple[str, float]]) -> list[Candidate]:
        """Highest score first; ties by newer createdAt, then id."""
        found = [Candidate(key, self._created(key), score) for key, score in scored]
        found.sort(key=lambda c: c.id)
        found.sort(key=lambda c: c.created_at, reverse=True)
        found.sort(key=lambda c: c.score, reverse=True)
        return found

    def _created(self, key: str) -> datetime:
        return self._notes[key].note.created_at

    def _adjacent(self, key: str, matching: set[str]) -> list[str]:
        """The matching notes of the note's group written just before and after it, in the
        order of createdAt then write order."""
        group = self._notes[key].note.group_id
        line = [k for k in self._notes if k in matching and self._notes[k].note.group_id == group]
        line.sort(key=lambda k: (self._notes[k].note.created_at, self._written[k]))
        at = line.index(key)
        return line[max(0, at - 1) : at] + line[at + 1 : at + 2]

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        with self._lock:
            matching = [s for s in self._notes.values() if self._visible(where, s)]
            matching.sort(key=lambda s: (s.note.created_at, self._written[s.note.id.value]), reverse=True)
            return matching[:limit]

    def iter_notes(self, project_id: CanonicalProjectId | None = None) -> Iterator[StoredNote]:
        with self._lock:
            notes = list(self._notes.values())
        return (s for s in notes if project_id is None or s.note.project_id == project_id)

    def vector(self, note_id: NoteId, namespace: Namespace) -> Vector | None:
        with self._lock:
            row = self._vectors.get(namespace, {}).get(note_id.value)
            return None if row is None else row.copy()

    def cosines(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[str, dict[str, float]]:
        found = self.vectors(note_ids, namespace)
        return {a.value: {b.value: float(sum(map(operator.mul, u, v))) for b, v in found.items() if b != a}
                for a, u in found.items()}

    def vectors(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[NoteId, Vector]:
        with self._lock:
            rows = self._vectors.get(namespace, {})
            return {n: rows[n.value].copy() for n in note_ids if n.value in rows}

    def namespaces(self) -> dict[Namespace, int]:
        with self._lock:
            return {ns: len(rows) for ns, rows in self._vectors.items() if rows}

    def disk_bytes(self) -> int:
        return 0

    def put_global(self, entry: GlobalEntry) -> None:
        with self._lock:
            key = (entry.project_id.value, entry.key.value)
            self._globals.pop(key, None)
            self._globals[key] = entry

    def get_global(self, project_id: CanonicalProjectId, key: GlobalKey) -> GlobalEntry | None:
        with self._lock:
            return self._globals.get((project_id.value, key.value))

    def iter_globals(self, project_id: CanonicalProjectId | None = None) -> Iterable[GlobalEntry]:
        with self._lock:
            return [e for e in self._globals.values() if project_id is None or e.project_id == project_id]

    def close(self) -> None:
        pass

    def _documents(self, project: str) -> Iterator[tuple[str, int, list[str]]]:
        for key, stored in self._notes.items():
            note = stored.note
            if note.project_id.value == project:
                yield key, _micros(note.created_at), document_tokens(note.title, note.text, note.tags.values)


def _row(vector: Vector, dim: int) -> np.ndarray:
    row = np.asarray(vector, dtype=np.float32).reshape(-1)
    if row.shape[0] != dim:
        raise StoreError(f"a vector of namespace dimension {dim} was expected, got {row.shape[0]} floats")
    return row.copy()


def _spread(rows: list[np.ndarray], q: np.ndarray | None, sample: int) -> Spread:
    """Of the cosines of ``q`` with ``rows``: all of them up to ``sample``, else ``sample``
    evenly spaced (0: not measured)."""
    if not sample or q is None:
        return NO_SPREAD
    if len(rows) > sample:
        rows = [rows[i] for i in np.linspace(0, len(rows) - 1, sample).astype(np.int64)]
    if not rows:
        return NO_SPREAD
    scores = np.stack(rows) @ q.astype(np.float64)
    return Spread(len(rows), float(scores.mean()), float(scores.std()))


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _cosine(row: np.ndarray | None, q: np.ndarray | None) -> float | None:
    return None if row is None or q is None else float(np.dot(row, q))
