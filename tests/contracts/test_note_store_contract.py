"""The store contract — ``NoteWriter``, ``NoteReader`` and ``StoreMaintenance``, every method
of each — passed by every adapter (the in-memory fake, the FAISS store and the PostgreSQL store)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs
import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.keyword_index import rank
from tests.fakes.memory_store import InMemoryNoteStore
from local_mcp_memory.application.errors import EmbedderUnavailable, StoreError
from local_mcp_memory.application.ports import Candidate, CandidateQuery, Candidates, Neighbour, NoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import GlobalEntry, Note, NoteFilter, Tags
from local_mcp_memory.domain.time import TimeWindow
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

NS = Namespace("local", "test-model", 8)
OTHER = Namespace("openai", "text-embedding-3-small", 4)
PROJECT = CanonicalProjectId("/work/app")
ELSEWHERE = CanonicalProjectId("other-project")
T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def unit(seed: int, dim: int = NS.dim) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def axis(i: int, dim: int = NS.dim) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def make_note(
    text: str = "a note",
    *,
    project: CanonicalProjectId = PROJECT,
    group: str = "feature-1",
    minutes: int = 0,
    tags: tuple[str, ...] = (),
    title: str | None = None,
    note_id: str | None = None,
) -> Note:
    return Note(
        id=NoteId(note_id) if note_id else NoteId.new(),
        project_id=project,
        group_id=GroupId(group),
        text=text,
        created_at=T0 + timedelta(minutes=minutes),
        title=title,
        tags=Tags(tags),
        source="test",
        metadata={"conversationId": "c-1", "messageRange": "12-20", "nested": {"n": [1, 2.5, None]}},
    )


Reopen = Callable[[], NoteStore]


@pytest.fixture(params=["memory", "faiss", "postgresql"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[NoteStore, Reopen]]:
    """A store, and a function giving the same store as a fresh process would see it."""
    if request.param == "memory":
        store = InMemoryNoteStore()
        yield store, lambda: store
        return
    if request.param == "postgresql":  # a fresh database on the session's PostgreSQL (tests/postgres_server.py)
        from local_mcp_memory.adapters.postgres_store import PostgresNoteStore

        url = request.getfixturevalue("postgres_url")
        open_store: Callable[[], NoteStore] = lambda: PostgresNoteStore(url)  # noqa: E731
    else:
        open_store = lambda: FaissNoteStore(tmp_path / "data")  # noqa: E731
    stores = [open_store()]

    def reopen() -> NoteStore:
        stores[-1].close()
        stores.append(open_store())
        return stores[-1]

    yield stores[0], reopen
    stores[-1].close()


@pytest.fixture
def store(opened: tuple[NoteStore, Reopen]) -> NoteStore:
    return opened[0]


def ids(items) -> list[str]:
    return [i.id if isinstance(i, (Candidate, Neighbour)) else i.note.id.value for i in items]


def semantic(store: NoteStore, namespace: Namespace, vector, where: NoteFilter, k: int) -> list[Candidate]:
    """The semantic candidates of a question with a vector only."""
    return list(store.candidates(CandidateQuery(where, k, namespace, vector)).semantic)


def keyword(store: NoteStore, text: str, where: NoteFilter, k: int) -> list[Candidate]:
    """The keyword candidates of a question with words only."""
    return list(store.candidates(CandidateQuery(where, k, text=text)).keyword)


def everything(store: NoteStore, vector, where: NoteFilter, k: int = 100, text: str | None = None) -> Candidates:
    """A hybrid question: both rankings, the spread and the neighbours."""
    return store.candidates(CandidateQuery(where, k, NS, vector, text, spread_sample=100, neighbours=True))


# -- put / get ------------------------------------------------------------------------


def test_a_put_note_comes_back_by_get_with_its_namespace(store: NoteStore) -> None:
    note = make_note("decided to use FAISS", title="Storage", tags=("db", "Decision"))
    store.put(note, NS, unit(1))
    stored = store.get(note.id)
    assert stored is not None and stored.note == note and stored.namespace == NS


def test_get_of_an_unknown_id_is_none(store: NoteStore) -> None:
    assert store.get(NoteId.new()) is None


def test_get_many_answers_the_stored_notes_and_leaves_out_unknown_ids(store: NoteStore) -> None:
    notes = [make_note(f"note {i}", minutes=i) for i in range(3)]
    store.put_many([(n, axis(i)) for i, n in enumerate(notes)], NS)
    unknown = NoteId.new()
    found = store.get_many([notes[2].id, unknown, notes[0].id])
    assert found.keys() == {notes[2].id, notes[0].id}
    assert found[notes[2].id] == store.get(notes[2].id) and found[notes[0].id].namespace == NS


def test_put_without_vector_changes_fields_and_keeps_the_vector(store: NoteStore) -> None:
    note = make_note("original")
    store.put(note, NS, unit(1))
    changed = Note(note.id, note.project_id, GroupId("task-9"), "original", note.created_at, title="t")
    store.put(changed, NS, None)
    assert store.get(note.id).note == changed
    assert np.allclose(store.vector(note.id, NS), unit(1))
    assert ids(semantic(store, NS, unit(1), NoteFilter(PROJECT, GroupId("task-9")), 5)) == [note.id.value]
    assert semantic(store, NS, unit(1), NoteFilter(PROJECT, GroupId("feature-1")), 5) == []


def test_put_without_vector_for_a_note_without_one_there_is_a_store_error(store: NoteStore) -> None:
    with pytest.raises(StoreError):
        store.put(make_note(), NS, None)
    note = make_note()
    store.put(note, NS, unit(1))
    with pytest.raises(StoreError):
        store.put(note, OTHER, None)


def test_a_vector_of_the_wrong_length_is_a_store_error_and_writes_nothing(store: NoteStore) -> None:
    note = make_note()
    with pytest.raises(StoreError):
        store.put(note, NS, np.ones(NS.dim + 1, dtype=np.float32))
    assert store.get(note.id) is None


def test_put_with_a_new_vector_replaces_the_old_one(store: NoteStore) -> None:
    note = make_note()
    store.put(note, NS, axis(0))
    store.put(note, NS, axis(1))
    assert np.allclose(store.vector(note.id, NS), axis(1))
    assert store.namespaces() == {NS: 1}


def test_put_many_stores_every_note_durably_in_one_write(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}", minutes=i) for i in range(5)]
    store.put_many([(n, axis(i)) for i, n in enumerate(notes)], NS)
    again = reopen()
    for i, note in enumerate(notes):
        stored = again.get(note.id)
        assert stored is not None and stored.note == note and stored.namespace == NS
        assert np.allclose(again.vector(note.id, NS), axis(i))
    assert ids(semantic(again, NS, axis(3), NoteFilter(PROJECT), 1)) == [notes[3].id.value]


def test_put_many_with_one_vector_of_the_wrong_length_writes_none(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}") for i in range(3)]
    vectors = [axis(0), np.ones(NS.dim + 1, dtype=np.float32), axis(2)]
    with pytest.raises(StoreError):
        store.put_many(list(zip(notes, vectors)), NS)
    again = reopen()
    assert all(again.get(n.id) is None for n in notes) and again.namespaces() == {}


def test_put_batches_writes_each_batch_in_order_as_it_is_iterated(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    first = [make_note(f"first {i}", minutes=0) for i in range(250)]  # large enough for the PostgreSQL COPY path
    changed = [attrs.evolve(n, text=f"changed walls {i}") for i, n in enumerate(first[:100])]
    later = [make_note(f"later {i}", minutes=0) for i in range(150)]
    batches = [[(n, axis(i % NS.dim)) for i, n in enumerate(first)], [(n, axis(0)) for n in later[:3]], [],
               [(n, axis(1)) for n in (*changed, *later[3:])]]
    written = store.put_batches((batch, NS) for batch in batches)
    assert next(written) == 250 and store.get(first[249].id) is not None and store.get(later[0].id) is None
    assert list(written) == [3, 0, 247]
    again = reopen()
    assert again.namespaces() == {NS: 400}
    for note in (*changed, *first[100:], *later):
        stored = again.get(note.id)
        assert stored is not None and stored.note == note and stored.namespace == NS
    assert np.allclose(again.vector(changed[0].id, NS), axis(1))
    assert set(ids(keyword(again, "walls", NoteFilter(PROJECT), 200))) == {n.id.value for n in changed}
    recent = ids(again.list_recent(NoteFilter(PROJECT), 400))  # one createdAt: last written first
    assert recent == [n.id.value for n in reversed((*first[100:], *later[:3], *changed, *later[3:]))]
    assert no_read_ahead_left()


def test_put_batches_stops_where_taking_a_batch_fails_and_leaves_no_thread(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}") for i in range(4)]

    def batches() -> Iterator[tuple[list[tuple[Note, np.ndarray]], Namespace]]:
        yield [(notes[0], axis(0)), (notes[1], axis(1))], NS
        raise RuntimeError("the third line of the file is broken")
        yield [(notes[2], axis(2))], NS

    written = store.put_batches(batches())
    assert next(written) == 2
    with pytest.raises(RuntimeError, match="third line"):
        next(written)
    again = reopen()
    assert [again.get(n.id) is not None for n in notes] == [True, True, False, False]
    assert no_read_ahead_left()


def test_put_batches_with_a_vector_of_the_wrong_length_writes_the_batches_before_it_only(
    opened: tuple[NoteStore, Reopen],
) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}") for i in range(3)]
    batches = [([(notes[0], axis(0))], NS), ([(notes[1], np.ones(NS.dim + 1, dtype=np.float32))], NS),
               ([(notes[2], axis(2))], NS)]
    with pytest.raises(StoreError):
        list(store.put_batches(iter(batches)))
    again = reopen()
    assert [again.get(n.id) is not None for n in notes] == [True, False, False]
    assert no_read_ahead_left()


def test_put_batches_closed_early_writes_no_further_batch(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = [make_note(f"note {i}") for i in range(4)]
    written = store.put_batches(([(note, axis(i))], NS) for i, note in enumerate(notes))
    assert next(written) == 1
    written.close()
    assert [reopen().get(n.id) is not None for n in notes] == [True, False, False, False]
    assert no_read_ahead_left()


def no_read_ahead_left() -> bool:
    return not any(thread.name == "read-ahead" for thread in threading.enumerate())


# -- candidates: semantic ---------------------------------------------------------------------------


def test_semantic_candidates_ranks_by_cosine_similarity_highest_first(store: NoteStore) -> None:
    notes = [make_note(f"n{i}", minutes=i) for i in range(20)]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i))
    query = unit(7)
    hits = semantic(store, NS, query, NoteFilter(PROJECT), 5)
    expected = sorted(range(20), key=lambda i: -float(unit(i) @ query))[:5]
    assert ids(hits) == [notes[i].id.value for i in expected]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_semantic_candidates_ties_go_to_the_newer_note_then_the_smaller_id(store: NoteStore) -> None:
    older = make_note("older", minutes=0)
    newer = make_note("newer", minutes=5)
    twins = [make_note("twin", minutes=3, note_id=f"00000000-0000-4000-8000-00000000000{i}") for i in (2, 1)]
    for note in (older, *twins, newer):
        store.put(note, NS, axis(0))
    hits = semantic(store, NS, axis(0), NoteFilter(PROJECT), 3)
    assert ids(hits) == [newer.id.value, twins[1].id.value, twins[0].id.value]


def test_semantic_candidates_returns_top_k_matching_notes_however_selective_the_filter(store: NoteStore) -> None:
    query = axis(0)
    for i in range(150):  # many close neighbours outside the filter
        store.put(make_note(f"crowd {i}", group="crowd", minutes=i), NS, query)
    wanted = [make_note(f"wanted {i}", group="rare", minutes=i, tags=("x", "y")) for i in range(7)]
    for i, note in enumerate(wanted):
        store.put(note, NS, unit(100 + i))
    hits = semantic(store, NS, query, NoteFilter(PROJECT, GroupId("rare"), Tags(("x",))), 5)
    assert len(hits) == 5
    assert set(ids(hits)) <= {n.id.value for n in wanted}


def test_semantic_candidates_filters_by_project_group_tags_and_window_exactly(store: NoteStore) -> None:
    base = make_note("base", minutes=10, tags=("db", "Decision"))
    cases = {
        "other project": make_note("p", project=ELSEWHERE, minutes=10, tags=("db", "Decision")),
        "other group": make_note("g", group="task-1", minutes=10, tags=("db", "Decision")),
        "tag case": make_note("t", minutes=10, tags=("db", "decision")),
        "one tag only": make_note("o", minutes=10, tags=("db",)),
        "at until": make_note("u", minutes=20, tags=("db", "Decision")),
        "before since": make_note("s", minutes=4, tags=("db", "Decision")),
    }
    at_since = make_note("at since", minutes=5, tags=("Decision", "db", "extra"))
    for note in (base, at_since, *cases.values()):
        store.put(note, NS, unit(3))
    where = NoteFilter(
        PROJECT,
        GroupId("feature-1"),
        Tags(("Decision", "db")),
        TimeWindow(T0 + timedelta(minutes=5), T0 + timedelta(minutes=20)),
    )
    assert set(ids(semantic(store, NS, unit(3), where, 10))) == {base.id.value, at_since.id.value}
    assert set(ids(store.list_recent(where, 10))) == {base.id.value, at_since.id.value}
    assert len(semantic(store, NS, unit(3), NoteFilter(PROJECT), 10)) == 7


def test_semantic_candidates_sees_only_vectors_of_its_namespace(store: NoteStore) -> None:
    a, b = make_note("a"), make_note("b")
    store.put(a, NS, unit(1))
    store.put(b, OTHER, unit(1, OTHER.dim))
    assert ids(semantic(store, NS, unit(1), NoteFilter(PROJECT), 5)) == [a.id.value]
    assert ids(semantic(store, OTHER, unit(1, OTHER.dim), NoteFilter(PROJECT), 5)) == [b.id.value]
    assert semantic(store, Namespace("ollama", "none", 3), unit(1, 3), NoteFilter(PROJECT), 5) == []
    assert set(ids(store.list_recent(NoteFilter(PROJECT), 5))) == {a.id.value, b.id.value}


def test_semantic_candidates_with_a_query_of_the_wrong_length_is_a_store_error(store: NoteStore) -> None:
    store.put(make_note(), NS, unit(1))
    with pytest.raises(StoreError):
        semantic(store, NS, unit(1, NS.dim - 1), NoteFilter(PROJECT), 5)


# -- namespaces -----------------------------------------------------------------------


def test_rehome_adds_a_vector_makes_it_home_and_keeps_the_old_one(store: NoteStore) -> None:
    note, gone = make_note("kept"), NoteId.new()
    store.put(note, NS, unit(1))
    store.rehome(OTHER, {note.id: unit(2, OTHER.dim), gone: unit(3, OTHER.dim)})
    assert store.get(note.id).namespace == OTHER
    assert store.get(gone) is None
    assert np.allclose(store.vector(note.id, OTHER), unit(2, OTHER.dim))
    assert np.allclose(store.vector(note.id, NS), unit(1))
    assert store.namespaces() == {NS: 1, OTHER: 1}
    assert ids(semantic(store, NS, unit(1), NoteFilter(PROJECT), 5)) == [note.id.value]


def test_drop_namespace_removes_only_vectors_that_are_not_home(store: NoteStore) -> None:
    moved, stays = make_note("moved"), make_note("stays")
    store.put(moved, NS, unit(1))
    store.put(stays, NS, unit(2))
    store.rehome(OTHER, {moved.id: unit(1, OTHER.dim)})
    assert store.drop_namespace(NS) == 1
    assert store.drop_namespace(NS) == 0
    assert store.vector(moved.id, NS) is None
    assert store.namespaces() == {NS: 1, OTHER: 1}
    assert store.get(moved.id).namespace == OTHER


def test_delete_removes_the_note_everywhere(store: NoteStore) -> None:
    note = make_note("forget me please", tags=("t",))
    store.put(note, NS, unit(1))
    store.rehome(OTHER, {note.id: unit(1, OTHER.dim)})
    assert store.delete(note.id) is True
    assert store.delete(note.id) is False
    assert store.get(note.id) is None
    assert store.vector(note.id, NS) is None and store.vector(note.id, OTHER) is None
    assert semantic(store, NS, unit(1), NoteFilter(PROJECT), 5) == []
    assert keyword(store, "forget", NoteFilter(PROJECT), 5) == []
    assert store.list_recent(NoteFilter(PROJECT), 5) == []
    assert store.namespaces() == {}


# -- listing --------------------------------------------------------------------------


def test_list_recent_is_newest_first_then_last_written_first(store: NoteStore) -> None:
    first, second = make_note("first", minutes=5), make_note("second", minutes=5)
    old, new = make_note("old", minutes=1), make_note("new", minutes=9)
    for note in (old, first, second, new):
        store.put(note, NS, unit(1))
    assert ids(store.list_recent(NoteFilter(PROJECT), 10)) == [n.id.value for n in (new, second, first, old)]
    assert ids(store.list_recent(NoteFilter(PROJECT), 2)) == [new.id.value, second.id.value]
    store.put(first, NS, None)  # rewritten: now the last written of its instant
    assert ids(store.list_recent(NoteFilter(PROJECT), 3))[1] == first.id.value


# -- candidates: spread, neighbours, notes ------------------------------------------------


def spread_of(store: NoteStore, vector, where: NoteFilter, sample: int):
    return store.candidates(CandidateQuery(where, 1, NS, vector, spread_sample=sample)).spread


def test_the_spread_is_the_mean_and_deviation_of_cosines_over_the_scope(store: NoteStore) -> None:
    inside = [make_note(str(i), minutes=i) for i in range(4)]
    for i, note in enumerate(inside):
        store.put(note, NS, axis(0) if i < 2 else axis(1))
    store.put(make_note("other group", group="task-9"), NS, axis(0))
    store.put(make_note("other namespace"), OTHER, unit(3, OTHER.dim))

    spread = spread_of(store, axis(0), NoteFilter(PROJECT, GroupId("feature-1")), sample=100)
    sampled = spread_of(store, axis(0), NoteFilter(PROJECT, GroupId("feature-1")), sample=2)

    assert (spread.count, spread.mean, spread.std) == (4, 0.5, 0.5)
    assert sampled.count == 2
    assert spread_of(store, axis(0), NoteFilter(ELSEWHERE), sample=100).count == 0
    assert spread_of(store, axis(0), NoteFilter(PROJECT), sample=0).count == 0
    with pytest.raises(StoreError):
        spread_of(store, axis(0, 5), NoteFilter(PROJECT), sample=100)


def test_candidates_each_answers_every_question_as_candidates_does(store: NoteStore) -> None:
    notes = [make_note(f"note {i} about the deploy", minutes=i, group=f"g{i % 2}") for i in range(12)]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i))
    store.put(make_note("elsewhere", project=ELSEWHERE), NS, unit(3))
    store.link(Link(LinkKey(notes[1].id, notes[0].id, Relation("supersedes")), T0))  # notes[0] hidden from now on
    expired = attrs.evolve(make_note("expired", minutes=30), expires_at=T0 + timedelta(minutes=40))
    store.put(expired, NS, unit(5))
    now = T0 + timedelta(hours=1)
    whole = NoteFilter(PROJECT, now=now)
    queries = [
        *(CandidateQuery(whole, 3, NS, unit(seed), spread_sample=100) for seed in (0, 5, 9, 40)),
        CandidateQuery(whole, 3, NS, unit(2), spread_sample=4),
        CandidateQuery(NoteFilter(ELSEWHERE, now=now), 3, NS, unit(3), spread_sample=100),
        CandidateQuery(NoteFilter(PROJECT, GroupId("g1"), now=now), 3, NS, unit(7), spread_sample=100),
        CandidateQuery(whole, 3, NS, unit(8), text="deploy", spread_sample=100),
        CandidateQuery(whole, 3, OTHER, unit(8, OTHER.dim), spread_sample=100),
        CandidateQuery(whole, 2, NS, unit(6), neighbours=True),
    ]
    for together, alone in zip(store.candidates_each(queries), [store.candidates(q) for q in queries], strict=True):
        for kind in ("semantic", "keyword"):
            assert ids(getattr(together, kind)) == ids(getattr(alone, kind))
            assert [c.score for c in getattr(together, kind)] == pytest.approx([c.score for c in getattr(alone, kind)], abs=1e-6)
        assert together.spread.count == alone.spread.count
        assert (together.spread.mean, together.spread.std) == pytest.approx((alone.spread.mean, alone.spread.std), abs=1e-6)
        assert together.neighbours == alone.neighbours
        assert {key: note.note.text for key, note in together.notes.items()} == {key: note.note.text for key, note in alone.notes.items()}
    first = store.candidates_each(queries[:2])[0]  # notes[0]'s own vector: it would come first
    assert len(first.semantic) == 3 and notes[0].id.value not in ids(first.semantic)
    assert expired.id.value not in ids(store.candidates_each(queries[1:2])[0].semantic)
    assert store.candidates_each([]) == []
    with pytest.raises(StoreError):
        store.candidates_each([queries[0], CandidateQuery(whole, 3, NS, unit(1, NS.dim - 1))])


def test_a_question_without_a_vector_has_no_semantic_candidates_and_no_spread(store: NoteStore) -> None:
    note = make_note("release checklist")
    store.put(note, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, text="checklist", spread_sample=100))
    assert list(found.semantic) == [] and found.spread.count == 0
    assert ids(found.keyword) == [note.id.value]


def test_a_question_without_words_has_no_keyword_candidates(store: NoteStore) -> None:
    note = make_note("release checklist")
    store.put(note, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, NS, unit(1)))
    assert list(found.keyword) == [] and ids(found.semantic) == [note.id.value]


def test_candidates_carry_their_created_at(store: NoteStore) -> None:
    note = make_note("release checklist", minutes=42)
    store.put(note, NS, unit(1))
    found = everything(store, unit(1), NoteFilter(PROJECT), text="checklist")
    assert [c.created_at for c in (*found.semantic, *found.keyword)] == [note.created_at] * 2


def test_neighbours_are_the_notes_before_and_after_in_created_at_then_write_order(store: NoteStore) -> None:
    late, first, second, early = (make_note(t, minutes=m) for t, m in (("late", 9), ("first", 5), ("second", 5), ("early", 1)))
    for note in (late, first, second, early):
        store.put(note, NS, unit(1))
    found = everything(store, unit(1), NoteFilter(PROJECT))
    assert {k: ids(v) for k, v in found.neighbours.items()} == {
        first.id.value: [early.id.value, second.id.value],
        early.id.value: [first.id.value],
        late.id.value: [second.id.value],
        second.id.value: [first.id.value, late.id.value],
    }


def test_neighbours_stay_in_the_group_and_the_filter(store: NoteStore) -> None:
    a, other_group, tagged_out, b = (
        make_note("a", minutes=1, tags=("x",)),
        make_note("g", minutes=2, group="task-2", tags=("x",)),
        make_note("t", minutes=3),
        make_note("b", minutes=4, tags=("x",)),
    )
    elsewhere = make_note("e", minutes=3, project=ELSEWHERE, tags=("x",))
    for note in (a, other_group, tagged_out, b, elsewhere):
        store.put(note, NS, unit(1))
    found = everything(store, unit(1), NoteFilter(PROJECT, tags=Tags(("x",))))
    assert {k: ids(v) for k, v in found.neighbours.items()} == {
        a.id.value: [b.id.value],
        b.id.value: [a.id.value],
        other_group.id.value: [],
    }
    store.delete(b.id)
    after = everything(store, unit(1), NoteFilter(PROJECT))
    assert ids(after.neighbours[a.id.value]) == [tagged_out.id.value]
    assert after.notes[tagged_out.id.value] == store.get(tagged_out.id)


class Pending:
    """A ``PendingVector``: ``vector``, or ``error`` raised, when asked (``asked`` counts it);
    work beside it runs on a thread of its own."""

    def __init__(self, vector=None, error: Exception | None = None) -> None:
        self.vector, self.error, self.asked = vector, error, 0

    def result(self):
        self.asked += 1
        if self.error is not None:
            raise self.error
        return self.vector

    def alongside(self, work):
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["done"] = work()
            except Exception as exc:
                outcome["failed"] = exc

        side = threading.Thread(target=run)
        side.start()
        try:
            vector = self.result()
        finally:
            side.join(timeout=10)
            assert not side.is_alive(), "the store's work beside the vector waits for the thread that computes it"
        if "failed" in outcome:
            raise outcome["failed"]
        return outcome["done"], vector


def test_a_question_with_a_pending_vector_is_answered_as_with_the_vector_once_computed(store: NoteStore) -> None:
    notes = [make_note(f"deploy step {i}" if i % 2 else f"lunch {i}", minutes=i) for i in range(8)]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i))
    where, pending = NoteFilter(PROJECT), Pending(unit(3))
    question = CandidateQuery(where, 3, NS, unit(3), "deploy", spread_sample=100, neighbours=True)
    given = store.candidates(question)
    found = store.candidates(attrs.evolve(question, vector=pending))
    assert pending.asked == 1
    assert (found.semantic, found.keyword, found.spread) == (given.semantic, given.keyword, given.spread)
    assert dict(found.neighbours) == dict(given.neighbours)
    assert dict(found.notes) == dict(given.notes)


def test_what_a_pending_vector_raises_is_raised_unchanged(store: NoteStore) -> None:
    store.put(make_note("deploy"), NS, unit(1))
    error = EmbedderUnavailable("local", None, "the local model failed to run")
    for question in (
        CandidateQuery(NoteFilter(PROJECT), 5, NS, Pending(error=error), "deploy", spread_sample=100, neighbours=True),
        CandidateQuery(NoteFilter(PROJECT), 5, NS, Pending(error=error)),
    ):
        with pytest.raises(EmbedderUnavailable) as raised:
            store.candidates(question)
        assert raised.value is error


def test_neighbours_of_keyword_candidates_are_given_too(store: NoteStore) -> None:
    before, found_by_words, after = make_note("lunch", minutes=1), make_note("kubernetes", minutes=2), make_note("noon", minutes=3)
    for note in (before, found_by_words, after):
        store.put(note, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, text="kubernetes", neighbours=True))
    assert ids(found.neighbours[found_by_words.id.value]) == [before.id.value, after.id.value]
    assert all(n.cosine is None for n in found.neighbours[found_by_words.id.value])  # no vector asked with


def test_a_neighbour_carries_its_cosine_or_none_without_a_vector_in_the_namespace(store: NoteStore) -> None:
    seed, near, foreign = make_note("seed", minutes=1), make_note("near", minutes=2), make_note("foreign", minutes=3)
    store.put(seed, NS, axis(0))
    store.put(near, NS, unit(5))
    store.put(foreign, OTHER, unit(5, OTHER.dim))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 1, NS, axis(0), neighbours=True))
    assert ids(found.semantic) == [seed.id.value]
    (neighbour,) = found.neighbours[seed.id.value]
    assert neighbour.id == near.id.value and neighbour.created_at == near.created_at
    assert neighbour.cosine == pytest.approx(float(unit(5) @ axis(0)), abs=1e-6)
    beyond = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, NS, unit(5), neighbours=True))
    assert [n.cosine for n in beyond.neighbours[near.id.value] if n.id == foreign.id.value] == [None]


def test_the_notes_of_an_answer_are_every_candidate_and_neighbour_as_stored(store: NoteStore) -> None:
    notes = [make_note(f"note {i}", minutes=i, tags=("t",)) for i in range(6)]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 2, NS, unit(3), "note 0", neighbours=True))
    named = {*ids(found.semantic), *ids(found.keyword), *(n.id for v in found.neighbours.values() for n in v)}
    assert set(found.notes) == named
    assert all(found.notes[key] == store.get(NoteId(key)) for key in named)


def test_the_notes_of_an_answer_are_as_they_were_when_it_was_given(store: NoteStore) -> None:
    note = make_note("the first text")
    store.put(note, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, NS, unit(1)))
    store.put(Note(note.id, PROJECT, note.group_id, "a later text", note.created_at), NS, None)
    store.rehome(OTHER, {note.id: unit(1, OTHER.dim)})
    assert found.notes[note.id.value].note == note and found.notes[note.id.value].namespace == NS


def test_iter_notes_yields_every_note_in_write_order_per_project(store: NoteStore) -> None:
    a, b, c = make_note("a"), make_note("b", project=ELSEWHERE), make_note("c")
    for note in (a, b, c):
        store.put(note, NS, unit(1))
    store.put(a, NS, None)
    assert ids(store.iter_notes()) == [b.id.value, c.id.value, a.id.value]
    assert ids(store.iter_notes(PROJECT)) == [c.id.value, a.id.value]


def test_vector_is_the_stored_vector_or_none(store: NoteStore) -> None:
    note = make_note()
    store.put(note, NS, unit(4))
    assert np.allclose(store.vector(note.id, NS), unit(4), atol=1e-7)
    assert store.vector(note.id, OTHER) is None
    assert store.vector(NoteId.new(), NS) is None


def test_vectors_reads_many_notes_at_once_and_leaves_out_those_without_one(store: NoteStore) -> None:
    first, second, elsewhere = make_note("first"), make_note("second"), make_note("other")
    store.put(first, NS, unit(1))
    store.put(second, NS, unit(2))
    store.put(elsewhere, OTHER, unit(3, OTHER.dim))
    found = store.vectors([first.id, second.id, elsewhere.id, NoteId.new()], NS)
    assert set(found) == {first.id, second.id}
    assert np.allclose(found[first.id], unit(1), atol=1e-7) and np.allclose(found[second.id], unit(2), atol=1e-7)
    assert store.vectors([], NS) == {}
    store.delete(second.id)
    assert set(store.vectors([first.id, second.id], NS)) == {first.id}


def test_cosines_are_the_dot_products_of_every_two_notes_with_a_vector(store: NoteStore) -> None:
    notes = [make_note(f"n{i}") for i in range(3)]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i + 1))
    without = make_note("elsewhere")
    store.put(without, OTHER, unit(5, OTHER.dim))
    found = store.cosines([n.id for n in notes] + [without.id], NS)
    assert set(found) == {n.id.value for n in notes}
    for i, a in enumerate(notes):
        assert set(found[a.id.value]) == {n.id.value for n in notes} - {a.id.value}
        for j, b in enumerate(notes):
            if i != j:
                assert found[a.id.value][b.id.value] == pytest.approx(float(unit(i + 1) @ unit(j + 1)), abs=1e-5)
    assert store.cosines([notes[0].id], NS) == {notes[0].id.value: {}}


def test_disk_bytes_is_a_non_negative_count(store: NoteStore) -> None:
    store.put(make_note(), NS, unit(1))
    assert store.disk_bytes() >= 0


# -- candidates: keyword -------------------------------------------------------------------


def test_keyword_candidates_ranks_notes_sharing_query_terms_and_leaves_out_the_rest(store: NoteStore) -> None:
    strong = make_note("database migration: run the database migration script", title="Database")
    weak = make_note("the migration of birds in spring")
    unrelated = make_note("nothing in common here")
    for note in (strong, weak, unrelated):
        store.put(note, NS, unit(1))
    hits = keyword(store, "Database migration", NoteFilter(PROJECT), 10)
    assert ids(hits) == [strong.id.value, weak.id.value]
    assert hits[0].score > hits[1].score > 0


def test_keyword_candidates_covers_title_and_tags_and_honours_filters(store: NoteStore) -> None:
    titled = make_note("body text", title="Kubernetes rollout")
    tagged = make_note("another body", tags=("kubernetes",), group="task-1")
    foreign = make_note("kubernetes elsewhere", project=ELSEWHERE)
    for note in (titled, tagged, foreign):
        store.put(note, NS, unit(1))
    assert set(ids(keyword(store, "kubernetes", NoteFilter(PROJECT), 10))) == {
        titled.id.value,
        tagged.id.value,
    }
    assert ids(keyword(store, "kubernetes", NoteFilter(PROJECT, GroupId("task-1")), 10)) == [tagged.id.value]


def test_keyword_candidates_finds_japanese_chinese_and_korean_without_spaces(store: NoteStore) -> None:
    japanese = make_note("東京都の天気予報を毎朝確認する")
    chinese = make_note("我们决定使用向量数据库存储笔记")
    korean = make_note("데이터베이스 서버를 재시작했습니다")
    for note in (japanese, chinese, korean):
        store.put(note, NS, unit(1))
    assert ids(keyword(store, "天気予報", NoteFilter(PROJECT), 5)) == [japanese.id.value]
    assert ids(keyword(store, "向量数据库", NoteFilter(PROJECT), 5)) == [chinese.id.value]
    assert ids(keyword(store, "서버", NoteFilter(PROJECT), 5)) == [korean.id.value]


def test_keyword_candidates_stays_current_after_updates_and_deletes(store: NoteStore) -> None:
    note = make_note("alpha topic")
    store.put(note, NS, unit(1))
    assert ids(keyword(store, "alpha", NoteFilter(PROJECT), 5)) == [note.id.value]
    changed = Note(note.id, PROJECT, note.group_id, "beta topic", note.created_at)
    store.put(changed, NS, None)
    assert keyword(store, "alpha", NoteFilter(PROJECT), 5) == []
    assert ids(keyword(store, "beta", NoteFilter(PROJECT), 5)) == [note.id.value]
    later = make_note("beta again")
    store.put(later, NS, unit(2))
    assert len(keyword(store, "beta", NoteFilter(PROJECT), 5)) == 2
    store.delete(later.id)
    assert ids(keyword(store, "beta", NoteFilter(PROJECT), 5)) == [note.id.value]


def test_keyword_candidates_returns_top_k(store: NoteStore) -> None:
    for i in range(30):
        store.put(make_note(f"release checklist item {i}", minutes=i), NS, unit(i))
    assert len(keyword(store, "checklist", NoteFilter(PROJECT), 7)) == 7


def test_keyword_candidates_with_common_and_rare_terms_are_the_full_bm25_ranking(store: NoteStore) -> None:
    """Terms held by most notes beside rare ones, at every depth and with filters: the same
    ids and scores as the in-memory store, which sums every posting of every term (a store
    may skip postings only where they cannot change the answer), in the one tie order: equal
    sums added in another order (PostgreSQL adds in its plan's order, which the planner may
    change on a busy machine) still order alike."""
    rng = np.random.default_rng(7)
    reference = InMemoryNoteStore()
    for i in range(240):
        words = ["alpha"] * int(rng.integers(1, 3))  # every note
        words += [w for w, share in (("beta", 0.5), ("gamma", 0.2), ("delta", 0.1)) if rng.random() < share]
        words += [f"rare{int(r)}" for r in rng.integers(0, 40, size=int(rng.integers(0, 3)))]
        words += ["filler"] * int(rng.integers(0, 6))  # lengths differ
        rng.shuffle(words)
        note = make_note(" ".join(words), minutes=i, group=f"g{i % 3}")
        store.put(note, NS, unit(i))
        reference.put(note, NS, unit(i))
    queries = ["alpha rare3", "beta gamma rare5 rare7", "alpha beta", "rare1", "delta rare2 alpha", "alpha",
               "alpha beta gamma delta rare11", "rare0 rare1 rare2 rare3 alpha"]
    for text in queries:
        for where in (NoteFilter(PROJECT), NoteFilter(PROJECT, GroupId("g1"))):
            for k in (1, 3, 10, 40):
                got, want = keyword(store, text, where, k), keyword(reference, text, where, k)
                assert ids(got) == ids(want), (text, where.group_id, k)
                assert [c.score for c in got] == pytest.approx([c.score for c in want], abs=1e-9)
                assert got == sorted(got, key=tie_order), (text, where.group_id, k)


def tie_order(c: Candidate) -> tuple:
    """The one order of keyword candidates in every store: ``rank`` of the score (scores
    equal but for the last bits of their sums are a tie), then newer, then smaller id."""
    return -rank(c.score), -c.created_at.timestamp(), c.id


# -- global settings ------------------------------------------------------------------


def entry(key: str, value, project: CanonicalProjectId = PROJECT, minutes: int = 0) -> GlobalEntry:
    return GlobalEntry(project, GlobalKey(key), value, T0 + timedelta(minutes=minutes))


def test_a_global_entry_comes_back_and_is_replaced_by_a_later_put(store: NoteStore) -> None:
    store.put_global(entry("global.memory.embedder.provider", "openai"))
    store.put_global(entry("global.memory.groupDefaults", {"featurePrefix": "feature-", "taskPrefix": "task-"}))
    store.put_global(entry("global.memory.embedder.provider", "ollama", minutes=3))
    got = store.get_global(PROJECT, GlobalKey("global.memory.embedder.provider"))
    assert got == entry("global.memory.embedder.provider", "ollama", minutes=3)
    defaults = store.get_global(PROJECT, GlobalKey("global.memory.groupDefaults"))
    assert defaults.value == {"featurePrefix": "feature-", "taskPrefix": "task-"}
    assert store.get_global(ELSEWHERE, GlobalKey("global.memory.embedder.provider")) is None


def test_iter_globals_lists_entries_of_every_or_one_project(store: NoteStore) -> None:
    store.put_global(entry("global.a", 1))
    store.put_global(entry("global.b", [1, "two"], project=ELSEWHERE))
    assert {e.key.value for e in store.iter_globals()} == {"global.a", "global.b"}
    assert [e.key.value for e in store.iter_globals(ELSEWHERE)] == ["global.b"]


# -- durability across reopening -----------------------------------------------------


def fill(store: NoteStore) -> list[Note]:
    notes = [
        make_note(f"note {i} 東京 migration", minutes=i % 7, group=f"g{i % 3}", tags=("t",) if i % 2 else ())
        for i in range(40)
    ]
    for i, note in enumerate(notes):
        store.put(note, NS, unit(i))
    store.rehome(OTHER, {notes[0].id: unit(0, OTHER.dim), notes[1].id: unit(1, OTHER.dim)})
    store.delete(notes[2].id)
    store.put(notes[3], NS, None)
    store.put_global(entry("global.project.conventions", "Use type hints."))
    return notes


def observe(store: NoteStore) -> tuple:
    where = NoteFilter(PROJECT, GroupId("g1"), Tags(("t",)))
    hybrid = everything(store, unit(5), NoteFilter(PROJECT), k=10, text="東京 migration 1")
    return (
        [(s.note, s.namespace) for s in store.iter_notes()],
        store.namespaces(),
        ids(semantic(store, NS, unit(5), NoteFilter(PROJECT), 10)),
        ids(semantic(store, NS, unit(5), where, 10)),
        ids(keyword(store, "東京 migration 1", NoteFilter(PROJECT), 10)),
        {key: [(n.id, n.created_at, n.cosine) for n in near] for key, near in hybrid.neighbours.items()},
        (hybrid.spread.count, round(hybrid.spread.mean, 9), round(hybrid.spread.std, 9)),
        ids(store.list_recent(NoteFilter(PROJECT), 50)),
        list(store.iter_globals()),
        [None if (v := store.vector(n.note.id, OTHER)) is None else list(v) for n in store.iter_notes()],
    )


def test_reopening_gives_the_same_state(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    fill(store)
    before = observe(store)
    assert observe(reopen()) == before


def test_reopening_after_compaction_gives_the_same_state(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    notes = fill(store)
    if isinstance(store, FaissNoteStore):
        store.compact()
        store.put(notes[5], NS, unit(99))  # a journal tail on top of the snapshot
        store.compact()
        store.delete(notes[6].id)
    else:
        store.put(notes[5], NS, unit(99))
        store.delete(notes[6].id)
    before = observe(store)
    assert observe(reopen()) == before
