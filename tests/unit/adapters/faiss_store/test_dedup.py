"""Dedup on write in the FAISS store: a hash column, persisted in the snapshot and kept for
journal rows, narrows the candidates; the notes' own keys decide."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import attrs
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.records import Put, dedup_hash, fields_of, instant_micros, vector_bytes
from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.note import NoteFilter
from tests.unit.adapters.faiss_store.stores import NS, PROJECT, T0, journal_of, note, vector


def test_a_text_in_the_snapshot_or_the_journal_is_found_after_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put(note(0, "the  cache\tlives at the edge"), NS, vector(0))
    store.compact()
    store.put(note(1, "retries back off exponentially"), NS, vector(1))
    store.close()
    store = FaissNoteStore(data)
    try:
        found = store.add(
            [(note(10, " the cache lives at the edge "), vector(10)), (note(11, "retries back off exponentially\n"), vector(11))],
            NS,
            T0,
        )
        assert found == [note(0).id, note(1).id]
        assert len(store.list_recent(NoteFilter(PROJECT), 10)) == 2
    finally:
        store.close()


def test_a_note_whose_text_changed_no_longer_holds_its_old_text(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path / "data")
    try:
        store.put(note(0, "first wording"), NS, vector(0))
        store.put(attrs.evolve(note(0), text="second wording"), NS, vector(0))
        assert store.add([(note(1, "first wording"), vector(1))], NS, T0) == [note(1).id]
        assert store.add([(note(2, "second wording"), vector(2))], NS, T0) == [note(0).id]
    finally:
        store.close()


def test_a_matching_hash_is_confirmed_by_the_key_itself() -> None:
    state = StoreState()
    stored = note(0, "a decision about caching")
    state.apply(Put(note=fields_of(stored), namespace=str(NS), vector=vector_bytes(vector(0), NS.dim)))
    other = note(1, "a different text")
    key = other.dedup_key
    state.notes.dedup[0] = dedup_hash(key.project_id, key.group_id, key.text)  # as if the two hashes collided
    assert state.duplicates([key], instant_micros(T0)) == [None]
    state.notes.dedup[0] = dedup_hash(*attrs.astuple(stored.dedup_key))
    assert state.duplicates([key, stored.dedup_key], instant_micros(T0)) == [None, stored.id.value]


def test_one_call_is_one_journal_write_of_the_new_entries_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    try:
        store.put(note(0, "kept once"), NS, vector(0))
        before = journal_of(data).read_bytes().count(b"\n")
        found = store.add([(note(1, "kept once"), vector(1)), (note(2, "new"), vector(2)), (note(3, "new"), vector(3))], NS, T0)
        assert found == [note(0).id, note(2).id, note(2).id]
        assert journal_of(data).read_bytes().count(b"\n") == before + 1
        assert store.add([(note(4, "kept once"), vector(4))], NS, T0) == [note(0).id]
        assert journal_of(data).read_bytes().count(b"\n") == before + 1  # nothing new: nothing written
    finally:
        store.close()


def test_a_stored_note_expired_at_now_does_not_hold_its_text(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path / "data")
    try:
        store.put(note(0, "temporary", expires=T0 + timedelta(hours=1)), NS, vector(0))
        assert store.add([(note(1, "temporary"), vector(1))], NS, T0) == [note(0).id]
        assert store.add([(note(2, "temporary"), vector(2))], NS, T0 + timedelta(hours=1)) == [note(2).id]
    finally:
        store.close()


def test_an_entry_that_would_not_read_back_is_refused_at_its_index_and_none_is_written(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    try:
        before = journal_of(data).read_bytes()
        bad = note(1, "a lone surrogate \ud800 is not UTF-8")
        with pytest.raises(InvalidValue) as raised:
            store.add([(note(0), vector(0)), (bad, vector(1))], NS, T0)
        assert raised.value.field == "[1].text"
        assert journal_of(data).read_bytes() == before
    finally:
        store.close()
