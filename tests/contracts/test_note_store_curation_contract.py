"""The store contract for curation (SPEC §11) — expiry, dedup on write, links and sync
origins — passed by every adapter: the in-memory fake, the FAISS store and the PostgreSQL
store. Fixtures and helpers are the store contract's own."""

from __future__ import annotations

import threading
from datetime import timedelta

import attrs
import numpy as np
import pytest

from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.application.ports import CandidateQuery, NoteStore
from local_mcp_memory.domain.identifiers import GroupId, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import NoteFilter, SyncOrigin, Tags
from local_mcp_memory.domain.time import TimeWindow
from tests.contracts.test_note_store_contract import (
    ELSEWHERE,
    NS,
    OTHER,
    PROJECT,
    T0,
    Reopen,
    axis,
    everything,
    ids,
    keyword,
    make_note,
    semantic,
    unit,
)

LATER = T0 + timedelta(days=30)


def expiring(text: str, at, **fields):
    return attrs.evolve(make_note(text, **fields), expires_at=at)


def link(a, b, relation: str = "relates_to", minutes: int = 0) -> Link:
    return Link(LinkKey(a.id, b.id, Relation(relation)), T0 + timedelta(minutes=minutes))


# -- expiry ---------------------------------------------------------------------------------


def test_expiry_and_origin_read_back_after_a_restart(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    origin = SyncOrigin("/home/me/kb", "guide/setup.md#install", "a" * 64)
    note = attrs.evolve(make_note("synced"), expires_at=LATER, origin=origin)
    store.put(note, NS, unit(1))
    assert reopen().get(note.id).note == note


def test_a_filter_with_now_leaves_out_expired_notes_everywhere(store: NoteStore) -> None:
    gone = expiring("the deploy window is friday", T0 + timedelta(hours=1), minutes=1)
    alive = expiring("the deploy window is monday", LATER, minutes=2)
    plain = make_note("the deploy freeze is in december", minutes=3)
    for i, note in enumerate((gone, alive, plain)):
        store.put(note, NS, axis(i))
    before, after = NoteFilter(PROJECT, now=T0), NoteFilter(PROJECT, now=T0 + timedelta(hours=1))
    assert set(ids(store.list_recent(before, 10))) == {gone.id.value, alive.id.value, plain.id.value}
    assert ids(store.list_recent(after, 10)) == [plain.id.value, alive.id.value]
    assert gone.id.value not in ids(semantic(store, NS, axis(0), after, 10))
    assert gone.id.value not in ids(keyword(store, "deploy window friday", after, 10))
    found = everything(store, axis(0), after, text="deploy window")
    assert gone.id.value not in {c.id for c in (*found.semantic, *found.keyword)}
    assert gone.id.value not in {n.id for near in found.neighbours.values() for n in near}
    assert found.spread.count == 2
    assert store.get(gone.id).note == gone  # get answers it: the use case decides


def test_expired_notes_do_not_shorten_a_filtered_answer(store: NoteStore) -> None:
    for i in range(30):
        store.put(expiring(f"short lived {i}", T0 + timedelta(minutes=5), minutes=i), NS, unit(i))
    keep = [make_note(f"long lived {i}", minutes=100 + i) for i in range(5)]
    for i, note in enumerate(keep):
        store.put(note, NS, unit(100 + i))
    now = NoteFilter(PROJECT, now=T0 + timedelta(hours=1))
    assert len(semantic(store, NS, unit(3), now, 5)) == 5
    assert set(ids(semantic(store, NS, unit(3), now, 5))) == {n.id.value for n in keep}
    assert len(store.list_recent(now, 5)) == 5


# -- dedup on write ---------------------------------------------------------------------------


def test_add_writes_new_notes_and_answers_their_ids(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}", minutes=i) for i in range(3)]
    assert store.add([(n, axis(i)) for i, n in enumerate(notes)], NS, T0) == [n.id for n in notes]
    again = reopen()
    assert all(again.get(n.id).note == n for n in notes)


def test_add_of_a_stored_text_answers_the_stored_id_and_writes_nothing(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    first = make_note("Use  PostgreSQL\tfor the team store ")
    store.add([(first, axis(0))], NS, T0)
    copy = attrs.evolve(make_note(" Use PostgreSQL for\nthe team store", title="other", tags=("x",)), metadata=None)
    assert store.add([(copy, axis(1))], NS, T0) == [first.id]
    again = reopen()
    assert again.get(copy.id) is None
    assert again.get(first.id).note == first  # left exactly as it was
    assert np.allclose(again.vector(first.id, NS), axis(0))
    assert len(again.list_recent(NoteFilter(PROJECT), 10)) == 1


def test_dedup_compares_project_group_and_case_and_nfc(store: NoteStore) -> None:
    base = make_note("Café rules")
    store.add([(base, axis(0))], NS, T0)
    decomposed = make_note("Cafe\u0301 rules")  # the same text once NFC-normalized
    other_case = make_note("café rules")
    other_group = make_note("Café rules", group="feature-2")
    other_project = make_note("Café rules", project=ELSEWHERE)
    got = store.add([(n, axis(i)) for i, n in enumerate((decomposed, other_case, other_group, other_project))], NS, T0)
    assert got == [base.id, other_case.id, other_group.id, other_project.id]


def test_two_equal_entries_of_one_batch_store_one_note(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, b, c = make_note("same"), make_note("other"), make_note("  same ")
    assert store.add([(a, axis(0)), (b, axis(1)), (c, axis(2))], NS, T0) == [a.id, b.id, a.id]
    again = reopen()
    assert again.get(c.id) is None and len(again.list_recent(NoteFilter(PROJECT), 10)) == 2


def test_an_expired_note_does_not_count_for_dedup(store: NoteStore) -> None:
    old = expiring("rotate the keys", T0 + timedelta(minutes=1))
    store.add([(old, axis(0))], NS, T0)
    new = make_note("rotate the keys")
    assert store.add([(new, axis(1))], NS, T0 + timedelta(minutes=1)) == [new.id]
    assert store.get(new.id) is not None


def test_put_many_never_dedups(store: NoteStore) -> None:
    a, b = make_note("same"), make_note("same")
    store.put_many([(a, axis(0)), (b, axis(1))], NS)
    assert store.add([(make_note("same"), axis(2))], NS, T0)[0] in (a.id, b.id)
    assert len(store.list_recent(NoteFilter(PROJECT), 10)) == 2


def test_add_with_one_vector_of_the_wrong_length_writes_none(store: NoteStore) -> None:
    notes = [make_note("one"), make_note("two")]
    with pytest.raises(StoreError):
        store.add([(notes[0], axis(0)), (notes[1], np.ones(NS.dim + 1, dtype=np.float32))], NS, T0)
    assert all(store.get(n.id) is None for n in notes)


def test_concurrent_adds_of_one_text_store_it_once(store: NoteStore) -> None:
    answers: list[NoteId] = []
    barrier = threading.Barrier(4)

    def add(i: int) -> None:
        barrier.wait()
        answers.extend(store.add([(make_note("raced text"), axis(i))], NS, T0))

    threads = [threading.Thread(target=add, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(answers)) == 1
    assert ids(store.list_recent(NoteFilter(PROJECT), 10)) == [answers[0].value]


# -- links ----------------------------------------------------------------------------------------


def test_links_survive_a_restart_newest_first_in_both_directions(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, b, c = (make_note(t, minutes=i) for i, t in enumerate("abc"))
    for i, note in enumerate((a, b, c)):
        store.put(note, NS, axis(i))
    assert store.link(link(a, b, "supersedes", minutes=1))
    assert store.link(link(c, a, "relates_to", minutes=2))
    assert store.link(link(a, c, "relates_to", minutes=2))  # same instant: last written first
    again = reopen()
    assert again.links(a.id) == [link(a, c, "relates_to", 2), link(c, a, "relates_to", 2), link(a, b, "supersedes", 1)]
    assert again.links(b.id) == [link(a, b, "supersedes", 1)]
    assert list(again.iter_links()) == [link(a, b, "supersedes", 1), link(c, a, "relates_to", 2), link(a, c, "relates_to", 2)]


def test_linking_twice_is_one_link_with_the_first_instant(store: NoteStore) -> None:
    a, b = make_note("a"), make_note("b")
    store.put(a, NS, axis(0))
    store.put(b, NS, axis(1))
    assert store.link(link(a, b, minutes=1))
    assert store.link(link(a, b, minutes=5))
    assert store.links(a.id) == [link(a, b, minutes=1)]
    assert store.link(link(a, b, "supersedes", minutes=5))  # another relation is another link
    assert len(store.links(b.id)) == 2


def test_a_link_to_a_missing_note_is_refused_and_writes_nothing(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, ghost = make_note("a"), make_note("never stored")
    store.put(a, NS, axis(0))
    assert store.link(link(a, ghost)) is False
    assert store.link(link(ghost, a)) is False
    assert reopen().links(a.id) == []


def test_unlink_removes_one_link_and_says_whether_there_was_one(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, b = make_note("a"), make_note("b")
    store.put(a, NS, axis(0))
    store.put(b, NS, axis(1))
    store.link(link(a, b, "supersedes"))
    store.link(link(a, b, "relates_to"))
    assert store.unlink(LinkKey(a.id, b.id, Relation("supersedes"))) is True
    assert store.unlink(LinkKey(a.id, b.id, Relation("supersedes"))) is False
    assert store.unlink(LinkKey(b.id, a.id, Relation("relates_to"))) is False  # direction matters
    assert reopen().links(a.id) == [link(a, b, "relates_to")]


def test_deleting_a_note_removes_its_links_both_ways(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, b, c = make_note("a"), make_note("b"), make_note("c")
    for i, note in enumerate((a, b, c)):
        store.put(note, NS, axis(i))
    store.link(link(a, b))
    store.link(link(b, c))
    store.link(link(a, c))
    assert store.delete(b.id)
    again = reopen()
    assert again.links(a.id) == [link(a, c)] and again.links(c.id) == [link(a, c)]
    assert list(again.iter_links()) == [link(a, c)]


def test_links_outlive_updates_and_rehoming(store: NoteStore) -> None:
    a, b = make_note("a"), make_note("b")
    store.put(a, NS, axis(0))
    store.put(b, NS, axis(1))
    store.link(link(a, b))
    store.put(attrs.evolve(a, group_id=GroupId("task-2"), text="a, changed"), NS, axis(2))
    store.rehome(NS, {b.id: axis(3)})
    assert store.links(a.id) == [link(a, b)] == store.links(b.id)


def test_iter_links_of_a_project_holds_only_its_links(store: NoteStore) -> None:
    a, b = make_note("a"), make_note("b")
    x, y = make_note("x", project=ELSEWHERE), make_note("y", project=ELSEWHERE)
    for i, note in enumerate((a, b, x, y)):
        store.put(note, NS, axis(i))
    store.link(link(a, b))
    store.link(link(x, y, minutes=1))
    assert list(store.iter_links(PROJECT)) == [link(a, b)]
    assert list(store.iter_links(ELSEWHERE)) == [link(x, y, minutes=1)]



# -- the neighbours of chosen notes ----------------------------------------------------------


def neighbour_scene(store: NoteStore) -> list:
    """Two groups of notes a minute apart, some tagged, one expiring at T0 + 10 min, one
    superseded, one with its vector in another namespace only."""
    notes = [
        make_note(f"note {i}", minutes=i, group="feature-1" if i % 3 else "feature-2", tags=("t",) if i % 2 else ())
        for i in range(14)
    ]
    notes[5] = attrs.evolve(notes[5], expires_at=T0 + timedelta(minutes=10))
    for i, note in enumerate(notes):
        if i == 8:
            store.put(note, OTHER, unit(i, OTHER.dim))
        else:
            store.put(note, NS, unit(i))
    store.link(link(notes[12], notes[7], "supersedes"))
    return notes


NEIGHBOUR_FILTERS = {
    "whole project": NoteFilter(PROJECT, now=T0),
    "after the expiry": NoteFilter(PROJECT, now=T0 + timedelta(minutes=20)),
    "with the superseded": NoteFilter(PROJECT, now=T0, include_superseded=True),
    "group": NoteFilter(PROJECT, GroupId("feature-1"), now=T0),
    "tags": NoteFilter(PROJECT, tags=Tags(("t",)), now=T0),
    "window": NoteFilter(PROJECT, window=TimeWindow(T0 + timedelta(minutes=2), T0 + timedelta(minutes=11)), now=T0),
}


@pytest.mark.parametrize("name", NEIGHBOUR_FILTERS)
def test_neighbours_of_chosen_notes_are_those_the_candidates_question_gives(store: NoteStore, name: str) -> None:
    notes = neighbour_scene(store)
    where = NEIGHBOUR_FILTERS[name]
    found = everything(store, unit(3), where, k=100, text="note")
    assert found.neighbours, "the scene gives candidates with neighbours"
    chosen = [note.id.value for note in notes[::2]] + [NoteId.new().value]  # some out of the filter, one unknown
    asked = store.neighbours(chosen, where, NS, unit(3))
    expected = {key: list(near) for key, near in found.neighbours.items() if key in chosen and near}
    assert {key: list(near) for key, near in asked.neighbours.items() if near} == expected
    # a note outside the filter has none: it is no candidate of the question
    assert all(key in found.neighbours for key in asked.neighbours)
    named = {n.id for near in expected.values() for n in near}
    assert set(asked.notes) == named
    assert all(asked.notes[key] == found.notes[key] for key in named)
    assert not asked.semantic and not asked.keyword


def test_neighbours_without_a_vector_carry_no_cosine_and_those_of_nothing_are_none(store: NoteStore) -> None:
    notes = neighbour_scene(store)
    where = NoteFilter(PROJECT, now=T0)
    found = store.candidates(CandidateQuery(where, 100, text="note", neighbours=True))
    asked = store.neighbours([notes[4].id.value], where)
    assert list(asked.neighbours[notes[4].id.value]) == list(found.neighbours[notes[4].id.value])
    assert all(n.cosine is None for n in asked.neighbours[notes[4].id.value])
    assert not store.neighbours([], where, NS, unit(1)).neighbours
    assert not store.neighbours([notes[0].id.value], NoteFilter(ELSEWHERE, now=T0), NS, unit(1)).neighbours
