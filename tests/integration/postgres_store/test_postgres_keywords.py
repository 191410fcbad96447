"""Keyword search on PostgreSQL: the local store's BM25 (``adapters.keyword_index``) held in
each server process and kept current by the database's change feed
(``adapters.postgres_store.keywords``).

Generated corpora, queries, filters and depths get the same keyword candidates from the
PostgreSQL store as from the in-memory one: the same ids in the one tie order of every store
(``rank`` of the score from the highest, then the newer note, then the smaller id), scores
equal within 1e-9; the corpora are built to tie (duplicated texts, shared instants, terms
held by most notes beside rare ones). Two store objects on one database (two servers of a
team) each answer exactly as a store opened afterwards, whatever the other wrote, updated,
deleted, superseded, let expire or purged since their index was built.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_mcp_memory.adapters.keyword_index import rank
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import Candidate, CandidateQuery, NoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter, Tags
from tests.fakes.memory_store import InMemoryNoteStore
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401  (fixtures)

NS = Namespace("local", "test-model", 4)
T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
COMMON = ["alpha", "beta"]  # in most notes
MIDDLING = ["gamma", "delta", "epsilon"]
RARE = [f"rare{i}" for i in range(12)]
FILLER = ["filler", "padding"]
_projects = itertools.count()


@pytest.fixture(scope="module")
def database(postgres: EmbeddedPostgres) -> Iterator[PostgresNoteStore]:  # noqa: F811
    """One database for the module; every example writes into a project of its own."""
    name = postgres.new_database()
    store = PostgresNoteStore(postgres.url(name))
    yield store
    store.close()
    postgres.drop_database(name)


words = st.lists(
    st.one_of(
        st.sampled_from(COMMON), st.sampled_from(MIDDLING), st.sampled_from(RARE), st.sampled_from(FILLER)
    ),
    min_size=1,
    max_size=12,
)
note_specs = st.tuples(words, st.integers(0, 5), st.integers(0, 2), st.booleans(), st.integers(1, 3))
"""(words, minute, group, tagged, copies): copies > 1 stores the same text that many times."""
questions = st.tuples(
    st.lists(st.sampled_from(COMMON + MIDDLING + RARE + ["absent"]), min_size=1, max_size=5),
    st.sampled_from(["project", "group", "tag"]),
    st.integers(1, 25),
)


def keyword(store: NoteStore, text: str, where: NoteFilter, depth: int) -> list[Candidate]:
    return list(store.candidates(CandidateQuery(where, depth, text=text)).keyword)


def tie_order(found: list[Candidate]) -> list[Candidate]:
    """``found`` in the one tie order of every store."""
    return sorted(found, key=lambda c: (-rank(c.score), -c.created_at.timestamp(), c.id))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(corpus=st.lists(note_specs, min_size=1, max_size=40), asked=st.lists(questions, min_size=1, max_size=6))
def test_postgres_gives_the_keyword_candidates_of_the_in_memory_store_in_the_same_tie_order(
    database: PostgresNoteStore, corpus: list, asked: list
) -> None:
    project = CanonicalProjectId(f"/dialects/{next(_projects)}")
    reference = InMemoryNoteStore()
    serial = itertools.count()
    for spec_words, minute, group, tagged, copies in corpus:
        for _ in range(copies):
            i = next(serial)
            note = Note(NoteId.new(), project, GroupId(f"g{group}"), " ".join(spec_words),
                        T0 + timedelta(minutes=minute), tags=Tags(("t",) if tagged else ()))
            vector = np.eye(NS.dim, dtype=np.float32)[i % NS.dim]
            database.put(note, NS, vector)
            reference.put(note, NS, vector)
    for terms, scope, depth in asked:
        where = {"project": NoteFilter(project), "group": NoteFilter(project, GroupId("g1")),
                 "tag": NoteFilter(project, tags=Tags(("t",)))}[scope]
        text = " ".join(terms)
        got, want = keyword(database, text, where, depth), keyword(reference, text, where, depth)
        assert [c.id for c in got] == [c.id for c in want], (text, scope, depth)
        assert [c.score for c in got] == pytest.approx([c.score for c in want], abs=1e-9)
        assert got == tie_order(got) and want == tie_order(want)


WORDS = "paint wall ladder brush roller primer ceiling window door floor".split()


def a_note(project: CanonicalProjectId, rng: np.random.Generator, minute: int, **fields: object) -> Note:
    text = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 7))))
    tags = Tags(("t",) if minute % 3 == 0 else ())
    return Note(NoteId.new(), project, GroupId(f"g{minute % 2}"), text, T0 + timedelta(minutes=minute), tags=tags, **fields)


def answers(store: PostgresNoteStore, where: NoteFilter) -> dict[str, list[tuple[str, float]]]:
    return {text: [(c.id, c.score) for c in keyword(store, text, where, 10)]
            for text in ("paint", "wall ladder", "primer ceiling door", "brush roller window floor")}


def assert_exact(store: PostgresNoteStore, url: str, where: NoteFilter) -> None:
    """``store``'s answers equal those of a store opened now (its index built from scratch)."""
    fresh = PostgresNoteStore(url)
    try:
        got, want = answers(store, where), answers(fresh, where)
    finally:
        fresh.close()
    assert sum(map(len, want.values())) > 0
    for text in want:
        assert [i for i, _ in got[text]] == [i for i, _ in want[text]], text
        assert [s for _, s in got[text]] == pytest.approx([s for _, s in want[text]], abs=1e-12), text


def test_two_servers_on_one_database_each_stay_exact_through_every_kind_of_write(postgres_url: str) -> None:  # noqa: F811
    reader, writer = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url, purge_every=0)
    rng, project = np.random.default_rng(7), CanonicalProjectId("/team/feed")
    now = datetime.now(timezone.utc)
    where = NoteFilter(project, now=now)
    try:
        notes = [a_note(project, rng, i) for i in range(40)]
        writer.put_many([(n, np.eye(NS.dim, dtype=np.float32)[0]) for n in notes], NS)
        assert_exact(reader, postgres_url, where)  # built from the database
        writer.add([(a_note(project, rng, 50 + i), np.eye(NS.dim, dtype=np.float32)[1]) for i in range(5)], NS, now)
        assert_exact(reader, postgres_url, where)  # added by the other server
        writer.update(notes[0].id, lambda n: attrs.evolve(n, text="paint paint paint primer"))
        writer.put(attrs.evolve(notes[1], text="ladder wall wall", tags=Tags(("t",))), NS, None)
        assert_exact(reader, postgres_url, where)  # changed
        assert writer.delete(notes[2].id) and writer.delete(notes[3].id)
        assert_exact(reader, postgres_url, where)  # deleted
        writer.link(Link(LinkKey(notes[4].id, notes[5].id, Relation("supersedes")), now))
        assert_exact(reader, postgres_url, where)  # superseded (left out by the filter)
        assert_exact(reader, postgres_url, NoteFilter(project, include_superseded=True))
        soon = a_note(project, rng, 60, expires_at=now + timedelta(seconds=1))
        writer.put(soon, NS, np.eye(NS.dim, dtype=np.float32)[2])
        assert_exact(reader, postgres_url, NoteFilter(project, now=now + timedelta(seconds=2)))  # expired
        time.sleep(1.2)
        writer.put(a_note(project, rng, 61), NS, np.eye(NS.dim, dtype=np.float32)[3])  # its write purges
        assert writer.get(soon.id) is None
        assert_exact(reader, postgres_url, where)  # purged
        for scope in (NoteFilter(project, GroupId("g1"), now=now), NoteFilter(project, tags=Tags(("t",)), now=now)):
            assert_exact(reader, postgres_url, scope)
    finally:
        reader.close()
        writer.close()


def test_a_server_holding_fewer_notes_than_its_projects_reloads_them_and_stays_exact(postgres_url: str) -> None:  # noqa: F811
    small, writer = PostgresNoteStore(postgres_url, keyword_notes=30), PostgresNoteStore(postgres_url)
    rng = np.random.default_rng(11)
    projects = [CanonicalProjectId(f"/team/lru-{i}") for i in range(3)]
    try:
        for round_ in range(3):
            for project in projects:
                writer.put_many([(a_note(project, rng, round_ * 20 + i), np.eye(NS.dim, dtype=np.float32)[0])
                                 for i in range(20)], NS)
                assert_exact(small, postgres_url, NoteFilter(project))
            writer.delete(next(iter(writer.list_recent(NoteFilter(projects[0]), 1))).note.id)
    finally:
        small.close()
        writer.close()


def test_indexes_held_stay_within_the_budget_and_a_search_that_adds_nothing_drops_none(postgres_url: str) -> None:  # noqa: F811
    small, writer = PostgresNoteStore(postgres_url, keyword_notes=25), PostgresNoteStore(postgres_url)
    rng = np.random.default_rng(12)
    p0, p1, p2 = (CanonicalProjectId(f"/team/budget-{i}") for i in range(3))
    held = small._keywords

    def fill(project: CanonicalProjectId, count: int, start: int) -> None:
        writer.put_many([(a_note(project, rng, start + i), np.eye(NS.dim, dtype=np.float32)[0]) for i in range(count)], NS)

    def holding() -> set[CanonicalProjectId]:
        return {p for p in (p0, p1, p2) if held.seen(p.value) is not None}

    try:
        for project in (p0, p1, p2):
            fill(project, 10, 0)
        answers(small, NoteFilter(p0))
        answers(small, NoteFilter(p1))
        assert holding() == {p0, p1} and held.room() == 5
        answers(small, NoteFilter(p2))  # 30 notes: the least recently searched goes
        assert holding() == {p1, p2} and held.room() == 5
        answers(small, NoteFilter(p1))  # nothing added: nothing dropped
        assert holding() == {p1, p2}
        fill(p1, 10, 10)
        answers(small, NoteFilter(p1))  # p1 grew to 20: p2, searched least recently now, goes
        assert holding() == {p1} and held.room() == 5
        assert_exact(small, postgres_url, NoteFilter(p1))
    finally:
        small.close()
        writer.close()


def test_searches_of_many_threads_while_another_server_writes_end_exact(postgres_url: str) -> None:  # noqa: F811
    import threading

    reader, writer = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url)
    projects = [CanonicalProjectId(f"/team/threads-{i}") for i in range(3)]
    failures: list[BaseException] = []

    def search(project: CanonicalProjectId) -> None:
        try:
            for _ in range(15):
                answers(reader, NoteFilter(project))
        except BaseException as exc:  # noqa: BLE001  (reported by the test below)
            failures.append(exc)

    try:
        rng = np.random.default_rng(5)
        for project in projects:
            writer.put_many([(a_note(project, rng, i), np.eye(NS.dim, dtype=np.float32)[0]) for i in range(20)], NS)
        threads = [threading.Thread(target=search, args=(projects[i % 3],)) for i in range(6)]
        for thread in threads:
            thread.start()
        for i in range(10):  # meanwhile the other server writes into every project
            project = projects[i % 3]
            writer.put(a_note(project, rng, 30 + i), NS, np.eye(NS.dim, dtype=np.float32)[1])
            writer.delete(next(iter(writer.list_recent(NoteFilter(project), 1))).note.id)
        for thread in threads:
            thread.join()
        assert not failures, failures
        for project in projects:
            assert_exact(reader, postgres_url, NoteFilter(project))
    finally:
        reader.close()
        writer.close()
