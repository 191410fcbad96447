"""The store contract for ``update``: a change applied to the note as stored when it is
written, so that writes never undo each other; passed by every adapter: the in-memory fake, the FAISS store and the PostgreSQL
store. Fixtures and helpers are the store contract's own."""

from __future__ import annotations

import threading

import attrs
import numpy as np
import pytest

from local_mcp_memory.application.ports import NoteStore
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter, Tags
from tests.contracts.test_note_store_contract import (
    NS,
    OTHER,
    PROJECT,
    T0,
    Reopen,
    axis,
    make_note,
    semantic,
    unit,
)


def retitled(title: str):
    return lambda note: attrs.evolve(note, title=title)


def test_update_applies_the_change_to_the_stored_note_and_keeps_its_vector(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    note = make_note("kept text", tags=("a",))
    store.put(note, NS, axis(1))
    written = store.update(note.id, retitled("new title"))
    assert written == attrs.evolve(note, title="new title")
    again = reopen()
    assert again.get(note.id).note == written and again.get(note.id).namespace == NS
    assert np.allclose(again.vector(note.id, NS), axis(1))


def test_update_sees_the_fields_another_write_changed_since_the_caller_read(store: NoteStore) -> None:
    note = make_note("first text")
    store.put(note, NS, axis(1))
    read_before = store.get(note.id).note
    store.put(attrs.evolve(read_before, tags=Tags(("set", "meanwhile"))), NS, None)
    store.update(note.id, lambda current: attrs.evolve(current, text="second text"), NS, axis(2))
    stored = store.get(note.id).note
    assert (stored.text, stored.tags.values) == ("second text", ("set", "meanwhile"))
    assert [c.id for c in semantic(store, NS, axis(2), NoteFilter(PROJECT), 1)] == [note.id.value]


def test_update_with_a_vector_of_another_namespace_makes_it_the_home(store: NoteStore) -> None:
    note = make_note("moving")
    store.put(note, NS, axis(1))
    store.update(note.id, lambda current: attrs.evolve(current, text="moved"), OTHER, unit(3, OTHER.dim))
    assert store.get(note.id).namespace == OTHER and store.get(note.id).note.text == "moved"
    assert np.allclose(store.vector(note.id, NS), axis(1))  # the old vector stays until dropped


def test_update_of_a_missing_note_is_none_and_writes_nothing(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    note = make_note("to be deleted")
    store.put(note, NS, axis(1))
    store.delete(note.id)
    assert store.update(note.id, retitled("back?")) is None
    assert store.update(note.id, lambda current: current, NS, axis(2)) is None
    assert store.update(NoteId.new(), retitled("never")) is None
    again = reopen()
    assert again.get(note.id) is None and again.list_recent(NoteFilter(PROJECT), 10) == []


def test_update_whose_change_raises_writes_nothing(store: NoteStore) -> None:
    note = make_note("stays")
    store.put(note, NS, axis(1))

    def refuse(current: Note) -> Note:
        raise InvalidValue("Note", "refused", "x", "title")

    with pytest.raises(InvalidValue):
        store.update(note.id, refuse, NS, axis(2))
    assert store.get(note.id).note == note and np.allclose(store.vector(note.id, NS), axis(1))


def test_update_keeps_the_notes_links(store: NoteStore) -> None:
    a, b = make_note("a"), make_note("b")
    store.put_many([(a, axis(0)), (b, axis(1))], NS)
    store.link(Link(LinkKey(a.id, b.id, Relation("relates_to")), T0))
    store.update(a.id, lambda current: attrs.evolve(current, text="a again"), NS, axis(2))
    assert [link.key.to_id for link in store.links(a.id)] == [b.id]


def test_concurrent_updates_of_different_fields_keep_both(store: NoteStore) -> None:
    note = make_note("shared")
    store.put(note, NS, axis(1))
    barrier = threading.Barrier(2)

    def change(field: str, count: int) -> None:
        barrier.wait()
        for i in range(count):
            store.update(note.id, lambda current: attrs.evolve(current, **{field: f"{field} {i}"}))

    threads = [threading.Thread(target=change, args=(field, 20)) for field in ("title", "source")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = store.get(note.id).note
    assert (stored.title, stored.source) == ("title 19", "source 19")

