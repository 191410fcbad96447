"""Expiry in the FAISS store: decided at read time from a column, dropped by compaction,
read from stores of format 3 too."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.records import NEVER, Put, fields_of, instant_micros, vector_bytes
from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.adapters.faiss_store.persistence.snapshot import load_snapshot
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.note import NoteFilter
from tests.unit.adapters.faiss_store.stores import NS, PROJECT, T0, as_format_3, link, note, snapshot_of, vector

FAR = datetime(2999, 1, 1, tzinfo=timezone.utc)


def put(state: StoreState, *notes) -> None:
    for i, n in enumerate(notes):
        state.apply(Put(note=fields_of(n), namespace=str(NS), vector=vector_bytes(vector(i), NS.dim)))


def at(moment: datetime) -> NoteFilter:
    return NoteFilter(PROJECT, now=moment)


def listed(store: FaissNoteStore, where: NoteFilter) -> set[str]:
    return {s.note.id.value for s in store.list_recent(where, 100)}


def test_a_note_leaves_every_answer_when_its_instant_passes_with_no_write_between() -> None:
    state = StoreState()
    soon, later, plain = note(0, expires=T0 + timedelta(hours=1)), note(1, expires=T0 + timedelta(hours=2)), note(2)
    put(state, soon, later, plain)
    rows = lambda moment: set(np.flatnonzero(state.selection(at(moment))).tolist())  # noqa: E731
    assert rows(T0) == {0, 1, 2}
    assert rows(T0 + timedelta(hours=1)) == {1, 2}  # expired means now >= expiresAt
    assert rows(T0 + timedelta(hours=3)) == {2}
    assert rows(T0 + timedelta(minutes=59)) == {0, 1, 2}  # an earlier instant asked again


def test_the_rows_of_a_scope_are_derived_once_while_now_stays_between_two_expiry_instants() -> None:
    state = StoreState()
    put(state, note(0, expires=T0 + timedelta(hours=1)), note(1), note(2, expires=T0 + timedelta(hours=5)))
    first = state.selection(at(T0 + timedelta(hours=2)))
    assert state.selection(at(T0 + timedelta(hours=4))) is first
    assert state.selection(at(T0 + timedelta(hours=5))) is not first
    assert state.selection(NoteFilter(PROJECT)) is state.selection(at(T0))  # nothing expired: the scope's own rows


def test_rows_without_an_expiry_never_enter_the_expiring_column() -> None:
    state = StoreState()
    put(state, note(0), note(1, expires=FAR), note(2))
    assert state.notes.expiring_rows().tolist() == [1]
    assert state.notes.expires.values.tolist() == [NEVER, instant_micros(FAR), NEVER]


def test_leaving_out_expired_notes_decodes_no_note_of_a_snapshot(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path / "data")
    store.put_many([(note(i, expires=FAR + timedelta(hours=i)), vector(i)) for i in range(6)], NS)
    store.compact()
    store.close()
    store = FaissNoteStore(tmp_path / "data")
    try:
        found = store.candidates(CandidateQuery(at(FAR + timedelta(hours=3)), 10, NS, vector(0), spread_sample=10, neighbours=True))
        assert {c.id for c in found.semantic} == {note(i).id.value for i in (4, 5)}  # now >= expiresAt: expired
        assert found.spread.count == 2
        assert len(store._live.state.notes._notes) == 0  # no note decoded to answer
    finally:
        store.close()


def test_compaction_leaves_out_notes_expired_by_the_wall_clock_with_their_vectors_and_links(tmp_path: Path) -> None:
    data = tmp_path / "data"
    gone, kept, plain = note(0, expires=T0), note(1, expires=FAR), note(2)
    store = FaissNoteStore(data)
    try:
        store.put_many([(gone, vector(0)), (kept, vector(1)), (plain, vector(2))], NS)
        assert store.link(link(gone, kept)) and store.link(link(kept, plain))
        store.compact()
        assert store.get(gone.id) is None
        assert [l.key.to_id for l in store.links(kept.id)] == [plain.id]
        assert store.namespaces() == {NS: 2}
    finally:
        store.close()
    reopened = FaissNoteStore(data)
    try:
        assert [s.note for s in reopened.iter_notes()] == [kept, plain]
        assert [l.key for l in reopened.iter_links()] == [link(kept, plain).key]
    finally:
        reopened.close()
    assert (snapshot_of(data) / "links.jsonl").read_bytes().count(b"\n") == 1


def test_a_process_whose_keyword_index_held_a_note_dropped_by_compaction_still_answers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    writer, reader = FaissNoteStore(data), FaissNoteStore(data)
    try:
        writer.put_many([(note(0, "release train schedule", expires=T0), vector(0)), (note(1, "release train owners"), vector(1))], NS)
        for store in (writer, reader):  # both build the project's keyword index with the expiring note in it
            assert len(store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="release train")).keyword) == 2
        writer.compact()
        for store in (writer, reader):
            for where in (NoteFilter(PROJECT), at(datetime.now(timezone.utc))):
                found = store.candidates(CandidateQuery(where, 10, text="release train"))
                assert [c.id for c in found.keyword] == [note(1).id.value]
    finally:
        writer.close()
        reader.close()


def test_a_format_3_store_is_read_with_the_expiry_its_notes_hold_and_upgraded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put_many([(note(0, expires=FAR), vector(0)), (note(1), vector(1)), (note(2, expires=FAR + timedelta(days=1)), vector(2))], NS)
    store.compact()
    store.close()
    as_format_3(data)
    old = snapshot_of(data)
    state = load_snapshot(data, old.name, int(old.name.split("-")[1]), None)
    assert state.notes.expiring_rows().tolist() == [0, 2]
    assert state.duplicates([note(1).dedup_key], instant_micros(T0)) == [note(1).id.value]
    store = FaissNoteStore(data)  # a writer upgrades it
    try:
        assert snapshot_of(data) != old and (snapshot_of(data) / "links.jsonl").exists()
        assert listed(store, at(FAR)) == {note(1).id.value, note(2).id.value}
        assert store.add([(note(9, note(0).text), vector(9))], NS, T0) == [note(0).id]
    finally:
        store.close()
