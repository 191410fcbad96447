"""A search question (``NoteReader.candidates``) answered from a ``StoreState`` in one pass.

One mask of the rows in scope (``StoreState.selection``) and one keyword search, which need
no vector (``vectorless``: read while the query is being embedded), one vector scan
(``VectorSpace.search``) and the spread of the same query, the neighbours of every candidate
from the note columns (``NoteTable.neighbours``) and their cosines from the vectors held.
Nothing is decoded: candidates carry their id and createdAt from the columns, and the notes
of an answer (``AnswerNotes``) are decoded when the caller reads them, as they were when the
answer was given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager

import numpy as np

from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, CandidateQuery, Candidates, Neighbour, Spread, StoredNote
from local_mcp_memory.domain.time import TimeWindow


Vectorless = tuple[np.ndarray | None, list[Candidate]]


def vectorless(state: StoreState, query: CandidateQuery) -> Vectorless:
    """What needs no vector: the mask of the rows in scope and the keyword candidates
    (``candidates`` takes them while they are this state's); the caller holds the mutex."""
    if query.vector is not None:
        state.damage.check_space(str(query.namespace))
    mask = state.selection(query.where)
    keyword = [] if query.text is None or mask is None else _keyword(state, query, mask)
    return mask, keyword


def candidates(
    state: StoreState, query: CandidateQuery, guard: AbstractContextManager, first: Vectorless | None = None
) -> Candidates:
    """See ``NoteReader.candidates``, ``query`` resolved, ``first`` its ``vectorless`` part when
    read already; the caller holds ``guard`` (the store's mutex), and so does every later read
    of the answer's notes."""
    mask, keyword = vectorless(state, query) if first is None else first
    space = None if query.vector is None else state.spaces.get(str(query.namespace))
    notes = state.notes
    semantic, spread = [], NO_SPREAD
    if space is not None:
        scope = np.zeros(0, dtype=bool) if mask is None else mask  # still searched: a wrong length is an error
        found = space.search(query.vector, query.depth, scope, notes.order)
        semantic = _candidates(state, found)
        if query.spread_sample:
            spread = Spread(*space.spread(query.vector, scope, query.spread_sample))
    rows = {notes.row_of[c.id] for c in (*semantic, *keyword)}
    neighbours: dict[str, list[Neighbour]] = {}
    if query.neighbours and mask is not None and rows:
        neighbours, others = _neighbours(state, sorted(rows), mask, query)
        rows.update(others)
    return Candidates(semantic, keyword, spread, neighbours, AnswerNotes(state, rows, guard))


def neighbours(state: StoreState, note_ids: Sequence[str], query: CandidateQuery, guard: AbstractContextManager) -> Candidates:
    """See ``NoteReader.neighbours``: those of ``note_ids`` that ``query.where`` selects, their
    neighbours as ``candidates`` gives them, with their cosines with ``query.vector``
    (resolved); the caller holds ``guard``."""
    if query.vector is not None:
        state.damage.check_space(str(query.namespace))
    mask = state.selection(query.where)
    row_of = state.notes.row_of
    rows = [] if mask is None else sorted({row for key in note_ids if (row := row_of.get(key)) is not None and mask[row]})
    if not rows:
        return Candidates(notes=AnswerNotes(state, set(), guard))
    near, others = _neighbours(state, rows, mask, query)
    return Candidates(neighbours=near, notes=AnswerNotes(state, others, guard))


def _neighbours(
    state: StoreState, rows: list[int], mask: np.ndarray, query: CandidateQuery
) -> tuple[dict[str, list[Neighbour]], set[int]]:
    """The neighbours of ``rows`` (each selected by ``mask``) by id, with their cosines with
    ``query.vector``, and the rows of those neighbours."""
    notes = state.notes
    space = None if query.vector is None else state.spaces.get(str(query.namespace))
    near = notes.neighbours(rows, mask)
    others = sorted({r for line in near.values() for r in line})
    scores = space.cosines(query.vector, others) if space is not None else [None] * len(others)
    cosines = dict(zip(others, scores))
    instants = dict(zip(others, notes.instants(others)))
    ids = notes.ids
    found = {ids[row]: [Neighbour(ids[r], instants[r], cosines[r]) for r in line] for row, line in near.items()}
    return found, set(others)


def _keyword(state: StoreState, query: CandidateQuery, mask: np.ndarray) -> list[Candidate]:
    row_of, where = state.notes.row_of, query.where

    def accept(ids: list[str]) -> np.ndarray:
        return mask[np.fromiter((row_of[i] for i in ids), dtype=np.int64, count=len(ids))]

    # a project's keyword index holds its live notes only: a filter of the project alone
    # accepts them all, unless it leaves out notes that have expired
    whole = where.group_id is None and not where.tags.values and where.window == TimeWindow() and state.untrimmed(mask)
    found = state.keywords.search(where.project_id.value, query.text, query.depth, None if whole else accept)
    return _candidates(state, [(row_of[i], score) for i, score in found])


def _candidates(state: StoreState, found: list[tuple[int, float]]) -> list[Candidate]:
    """A candidate per (row, score) of ``found``."""
    ids = state.notes.ids
    instants = state.notes.instants([row for row, _ in found])
    return [Candidate(ids[row], at, score) for (row, score), at in zip(found, instants)]




class AnswerNotes(Mapping[str, StoredNote]):
    """The notes named in one answer, by id, decoded on first read, as they were when the
    answer was given (fields and home namespace captured then), under ``guard``."""

    def __init__(self, state: StoreState, rows: set[int], guard: AbstractContextManager) -> None:
        notes = state.notes
        held = np.fromiter(rows, dtype=np.int64, count=len(rows))
        homes = notes.home.values[held].tolist()
        self._state, self._guard = state, guard
        self._rows = {notes.ids[row]: (row, home, notes.captured(row)) for row, home in zip(held.tolist(), homes)}
        self._read: dict[str, StoredNote] = {}  # ranking reads a note several times (importance, text, the hit)

    def __getitem__(self, note_id: str) -> StoredNote:
        stored = self._read.get(note_id)
        if stored is None:
            row, home, fields = self._rows[note_id]
            state = self._state
            with self._guard:
                stored = StoredNote(state.notes.note(row, fields), state.namespace(state.notes.names.names[home]))
            self._read[note_id] = stored
        return stored

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
