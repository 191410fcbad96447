"""The store contract for knowledge that changes (SPEC §13) — supersession hiding older notes,
importance, and reads moving an expiry out — passed by every adapter: the in-memory fake, the
FAISS store and the PostgreSQL store. Fixtures and helpers are the store contract's own."""

from __future__ import annotations

import threading
from datetime import timedelta

import attrs
import pytest

from local_mcp_memory.application.errors import SupersessionCycle
from local_mcp_memory.application.ports import NoteStore
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey
from local_mcp_memory.domain.note import LATEST, NoteFilter
from tests.contracts.test_note_store_contract import (
    NS,
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

DAY = timedelta(days=1)


def supersedes(newer, older, minutes: int = 0) -> Link:
    return Link(LinkKey(newer.id, older.id, SUPERSEDES), T0 + timedelta(minutes=minutes))


def fading(text: str, days: int = 10, **fields):
    note = make_note(text, **fields)
    return note.with_expiry(note.created_at + days * DAY)


# -- supersession -----------------------------------------------------------------------------


def test_a_superseded_note_leaves_every_default_answer_and_returns_when_asked(store: NoteStore) -> None:
    old = make_note("the rate limit is 100 requests per minute", minutes=1)
    new = make_note("the rate limit is 500 requests per minute", minutes=2)
    other = make_note("deploys run on friday", minutes=3)
    for i, note in enumerate((old, new, other)):
        store.put(note, NS, axis(i))
    assert store.link(supersedes(new, old))
    default, wide = NoteFilter(PROJECT, now=T0), NoteFilter(PROJECT, now=T0, include_superseded=True)
    assert ids(store.list_recent(default, 10)) == [other.id.value, new.id.value]
    assert old.id.value not in ids(semantic(store, NS, axis(0), default, 10))
    assert old.id.value not in ids(keyword(store, "rate limit requests", default, 10))
    found = everything(store, axis(0), default, text="rate limit")
    assert old.id.value not in {c.id for c in (*found.semantic, *found.keyword)}
    assert old.id.value not in {n.id for near in found.neighbours.values() for n in near}
    assert found.spread.count == 2
    assert ids(store.list_recent(wide, 10)) == [other.id.value, new.id.value, old.id.value]
    assert ids(semantic(store, NS, axis(0), wide, 1)) == [old.id.value]
    assert old.id.value in ids(keyword(store, "rate limit requests", wide, 10))
    assert store.get(old.id).note == old  # get answers it: the use case names who supersedes it


def test_superseded_notes_do_not_shorten_a_filtered_answer(store: NoteStore) -> None:
    newest = make_note("the newest word on it", minutes=100)
    store.put(newest, NS, unit(100))
    for i in range(30):
        note = make_note(f"an older word {i}", minutes=i)
        store.put(note, NS, unit(i))
        if i < 25:
            store.link(supersedes(newest, note, minutes=i))
    where = NoteFilter(PROJECT, now=T0)
    assert len(store.list_recent(where, 6)) == 6
    assert len(semantic(store, NS, unit(3), where, 6)) == 6
    assert len(keyword(store, "older word", where, 5)) == 5


def test_deleting_the_newer_note_restores_the_older_one(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    old, new = make_note("CI runs on Jenkins", minutes=1), make_note("CI runs on GitHub Actions", minutes=2)
    store.put(old, NS, axis(0))
    store.put(new, NS, axis(1))
    store.link(supersedes(new, old))
    store = reopen()
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [new.id.value]
    assert store.delete(new.id)
    store = reopen()
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [old.id.value]
    assert store.links(old.id) == []


def test_an_expired_newer_note_supersedes_nothing(store: NoteStore) -> None:
    old = make_note("the freeze ends in june", minutes=1)
    new = attrs.evolve(make_note("the freeze ends in july", minutes=2), expires_at=T0 + DAY)
    store.put(old, NS, axis(0))
    store.put(new, NS, axis(1))
    store.link(supersedes(new, old))
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [new.id.value]
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0 + DAY), 10)) == [old.id.value]
    assert ids(semantic(store, NS, axis(0), NoteFilter(PROJECT, now=T0 + DAY), 1)) == [old.id.value]


def test_a_link_of_another_relation_hides_nothing(store: NoteStore) -> None:
    a, b = make_note("one", minutes=1), make_note("two", minutes=2)
    store.put(a, NS, axis(0))
    store.put(b, NS, axis(1))
    store.link(Link(LinkKey(b.id, a.id, attrs.evolve(SUPERSEDES, value="relates_to")), T0))
    assert len(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == 2


def test_unlinking_restores_the_superseded_note(store: NoteStore) -> None:
    old, new = make_note("old", minutes=1), make_note("new", minutes=2)
    store.put(old, NS, axis(0))
    store.put(new, NS, axis(1))
    store.link(supersedes(new, old))
    assert store.unlink(LinkKey(new.id, old.id, SUPERSEDES))
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [new.id.value, old.id.value]


def test_a_supersedes_link_that_would_close_a_cycle_is_refused_and_writes_nothing(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    a, b, c = (make_note(text, minutes=i) for i, text in enumerate(("logs go to Loki", "logs go to Datadog", "logs go to Grafana")))
    for i, note in enumerate((a, b, c)):
        store.put(note, NS, axis(i))
    assert store.link(supersedes(b, a)) and store.link(supersedes(c, b))
    for newer, older in ((a, b), (a, c), (b, c), (a, a)):
        with pytest.raises(SupersessionCycle) as refused:
            store.link(supersedes(newer, older))
        assert (refused.value.from_id, refused.value.to_id) == (newer.id.value, older.id.value)
    assert store.link(Link(LinkKey(a.id, c.id, attrs.evolve(SUPERSEDES, value="relates_to")), T0))  # another relation: no chain
    store = reopen()
    assert {(link.key.from_id, link.key.to_id) for link in store.links(a.id) if link.key.relation == SUPERSEDES} == {(b.id, a.id)}
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [c.id.value]
    store.delete(b.id)  # the chain is broken: a may supersede c now
    assert store.link(supersedes(a, c))


def test_links_written_at_once_from_two_threads_never_close_a_cycle(store: NoteStore) -> None:
    pairs = [(make_note(f"fact {i} is so", minutes=2 * i), make_note(f"fact {i} is otherwise", minutes=2 * i + 1)) for i in range(12)]
    for i, (x, y) in enumerate(pairs):
        store.put(x, NS, unit(2 * i))
        store.put(y, NS, unit(2 * i + 1))
    outcomes: list[bool] = []

    def write(newer, older, start: threading.Barrier) -> None:
        start.wait()
        try:
            outcomes.append(store.link(supersedes(newer, older)))
        except SupersessionCycle:
            outcomes.append(False)

    for x, y in pairs:
        start = threading.Barrier(2)
        threads = [threading.Thread(target=write, args=args) for args in ((x, y, start), (y, x, start))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert outcomes.count(True) == len(pairs)  # one of each two, the other refused
    assert len(store.list_recent(NoteFilter(PROJECT, now=T0), 100)) == len(pairs)


def test_dedup_on_write_passes_over_a_superseded_note(store: NoteStore) -> None:
    old, new = make_note("deploys go through ansible", minutes=1), make_note("deploys go through argo", minutes=2)
    store.add([(old, axis(0)), (new, axis(1))], NS, T0)
    store.link(supersedes(new, old))
    restated = make_note("deploys go through  ansible", minutes=3)  # the same text, as dedup reads it
    assert store.add([(restated, axis(2))], NS, T0) == [restated.id]  # stored anew, the newest
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [restated.id.value, new.id.value]
    assert store.add([(make_note("deploys go through ansible", minutes=4), axis(3))], NS, T0) == [restated.id]


def test_dedup_answers_a_note_again_once_its_newer_note_expires(store: NoteStore) -> None:
    old = make_note("the freeze ends in june", minutes=1)
    new = attrs.evolve(make_note("the freeze ends in july", minutes=2), expires_at=T0 + DAY)
    store.add([(old, axis(0)), (new, axis(1))], NS, T0)
    store.link(supersedes(new, old))
    copy = make_note("the freeze ends in june", minutes=3)
    assert store.add([(copy, axis(2))], NS, T0 + 2 * DAY) == [old.id]


# -- importance -------------------------------------------------------------------------------


def test_importance_and_the_expiry_span_read_back_after_a_restart(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    weighty = attrs.evolve(make_note("never forget the backups"), importance=0.9)
    spanned = attrs.evolve(fading("a passing fact", days=7), importance=0.25)
    store.put(weighty, NS, axis(0))
    store.add([(spanned, axis(1))], NS, T0)
    store = reopen()
    assert store.get(weighty.id).note == weighty
    assert store.get(spanned.id).note == spanned
    assert store.get(spanned.id).note.expiry_span == 7 * DAY
    found = everything(store, axis(0), NoteFilter(PROJECT, now=T0), text="backups")
    assert found.notes[weighty.id.value].note.importance == 0.9


# -- fading -----------------------------------------------------------------------------------


def test_prolong_moves_the_expiry_out_by_half_the_original_span(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    note = fading("a session digest", days=10)
    plain = make_note("no expiry here", minutes=1)
    store.put(note, NS, axis(0))
    store.put(plain, NS, axis(1))
    assert store.prolong([note.id, plain.id], T0 + DAY) == 1
    assert store.prolong([note.id], T0 + 2 * DAY) == 1
    store = reopen()
    read = store.get(note.id).note
    assert read.expires_at == T0 + 20 * DAY  # 10 days, then 5 and 5 more
    assert read.expiry_span == 10 * DAY
    assert attrs.evolve(read, expires_at=note.expires_at) == note  # nothing else changed
    assert store.get(plain.id).note == plain
    assert ids(store.list_recent(NoteFilter(PROJECT, now=T0), 10)) == [plain.id.value, note.id.value]


def test_prolong_derives_the_span_of_a_note_that_has_none_recorded(store: NoteStore) -> None:
    note = attrs.evolve(make_note("written by an older version"), expires_at=T0 + 4 * DAY)
    store.put(note, NS, axis(0))
    store.prolong([note.id], T0)
    assert store.get(note.id).note.expires_at == T0 + 6 * DAY


def test_prolong_never_brings_back_a_deleted_or_expired_note(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    gone, lapsed = fading("deleted meanwhile"), fading("expired meanwhile", days=1)
    store.put(gone, NS, axis(0))
    store.put(lapsed, NS, axis(1))
    store.delete(gone.id)
    assert store.prolong([gone.id, lapsed.id], T0 + 2 * DAY) == 0
    store = reopen()
    assert store.get(gone.id) is None
    assert store.get(lapsed.id).note == lapsed


def test_prolong_stops_at_the_latest_instant(store: NoteStore) -> None:
    note = make_note("far future")
    note = note.with_expiry(LATEST - DAY)
    store.put(note, NS, axis(0))
    store.prolong([note.id], T0)
    assert store.get(note.id).note.expires_at == LATEST
    assert store.prolong([note.id], T0) == 0


def test_prolong_racing_a_delete_never_resurrects_the_note(store: NoteStore) -> None:
    notes = [fading(f"note {i}", minutes=i) for i in range(20)]
    store.put_many([(n, unit(i)) for i, n in enumerate(notes)], NS)
    done = threading.Event()

    def prolong_forever() -> None:
        while not done.is_set():
            store.prolong([n.id for n in notes], T0)

    worker = threading.Thread(target=prolong_forever)
    worker.start()
    try:
        for note in notes:
            store.delete(note.id)
    finally:
        done.set()
        worker.join()
    store.prolong([n.id for n in notes], T0)
    assert all(store.get(n.id) is None for n in notes)
    assert store.list_recent(NoteFilter(PROJECT, now=T0), 50) == []


@pytest.mark.parametrize("days", [1, 3650])
def test_a_prolonged_note_is_found_until_its_new_expiry(store: NoteStore, days: int) -> None:
    note = fading("a digest", days=days)
    store.put(note, NS, axis(0))
    store.prolong([note.id], T0)
    later = NoteFilter(PROJECT, now=note.expires_at + timedelta(seconds=1))
    assert ids(store.list_recent(later, 10)) == [note.id.value]
    assert ids(semantic(store, NS, axis(0), later, 1)) == [note.id.value]


def test_a_newer_note_of_another_group_stops_hiding_when_it_expires(store: NoteStore) -> None:
    old = make_note("the freeze ends in june", group="g1", minutes=1)
    new = attrs.evolve(make_note("the freeze ends in july", group="g2", minutes=2), expires_at=T0 + DAY)
    store.put(old, NS, axis(0))
    store.put(new, NS, axis(1))
    store.link(supersedes(new, old))
    group = attrs.evolve(NoteFilter(PROJECT), group_id=old.group_id)
    for moment, shown in ((T0, []), (T0 + DAY, [old.id.value]), (T0, [])):
        where = attrs.evolve(group, now=moment)
        assert ids(store.list_recent(where, 10)) == shown
        assert ids(semantic(store, NS, axis(0), where, 1)) == shown
