"""The FAISS store waits for a pending query vector without its mutex, after the part of the
question that needs none: what another thread writes meanwhile is not mixed into the answer."""

from __future__ import annotations

import threading
from pathlib import Path

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.note import NoteFilter
from tests.unit.adapters.faiss_store.stores import NS, PROJECT, note, vector


class WritingMeanwhile:
    """A pending vector whose computing takes as long as ``write`` takes on another thread,
    after the store's work beside it."""

    def __init__(self, vector, write) -> None:
        self.vector, self.write = vector, write

    def result(self):
        writer = threading.Thread(target=self.write)
        writer.start()
        writer.join(timeout=10)
        assert not writer.is_alive(), "the write waited for the search: the store held its mutex"
        return self.vector

    def alongside(self, work):
        done = work()
        return done, self.result()


def question(pending) -> CandidateQuery:
    return CandidateQuery(NoteFilter(PROJECT), 5, NS, pending, "release", spread_sample=100, neighbours=True)


def test_a_note_deleted_while_the_vector_is_pending_is_in_no_part_of_the_answer(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path)
    kept, deleted = note(1), note(2)
    store.put(kept, NS, vector(1))
    store.put(deleted, NS, vector(2))
    found = store.candidates(question(WritingMeanwhile(vector(2), lambda: store.delete(deleted.id))))
    assert [c.id for c in found.keyword] == [c.id for c in found.semantic] == [kept.id.value]
    assert set(found.notes) == {kept.id.value}


def test_a_note_written_while_the_vector_is_pending_is_in_every_part_of_the_answer(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path)
    first, later = note(1), note(2)
    store.put(first, NS, vector(1))
    found = store.candidates(question(WritingMeanwhile(vector(2), lambda: store.put(later, NS, vector(2)))))
    assert {c.id for c in found.keyword} == {c.id for c in found.semantic} == {first.id.value, later.id.value}
    assert [n.id for n in found.neighbours[first.id.value]] == [later.id.value]
