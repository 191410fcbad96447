"""A project larger than an exact scan is held whole by a server with a graph of its own
(``vector_graph``), built on a thread after its first search: until then PostgreSQL's walk
answers, then the graph; either way the same candidates as the exact scan on a set this
small, the same spread, keyword candidates and neighbours as the statement, and it follows
another server's writes (new, replaced, deleted, superseded, expired notes) until enough has
changed to build the graph again. Closing the store stops a build."""

from __future__ import annotations

from collections.abc import Iterator
import time
from datetime import timedelta

import numpy as np
import psycopg
import pytest

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store import vector_graph
from local_mcp_memory.adapters.postgres_store.vector_graph import STALE_SHARE, ProjectGraph
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import GroupId, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.integration.postgres_store.test_postgres_vector_cache import NOW, NS, PROJECT, T0, ask, notes, same, unit
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401  (fixtures)


@pytest.fixture()
def servers(postgres_url: str) -> Iterator[tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore]]:  # noqa: F811
    """A server holding graphs, another server writing, and one answering in SQL alone."""
    held = PostgresNoteStore(postgres_url, vector_graphs=True)
    writer, plain = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url, cached_vectors=0)
    yield held, writer, plain
    for store in (held, writer, plain):
        store.close()


class Project:
    """What the test wrote: every live note's vector, createdAt, and whether it is hidden."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        self.created: dict[str, float] = {}
        self.hidden: set[str] = set()

    def wrote(self, batch: list[tuple[Note, np.ndarray]]) -> None:
        for note, vector in batch:
            self.vectors[note.id.value] = vector
            self.created[note.id.value] = note.created_at.timestamp()

    def exact(self, q: np.ndarray, depth: int) -> list[str]:
        keys = [key for key in self.vectors if key not in self.hidden]
        cosine = {key: float(np.dot(self.vectors[key], q)) for key in keys}
        return sorted(keys, key=lambda key: (-round(cosine[key], 6), -self.created[key], key))[:depth]


def large_project(writer: PostgresNoteStore, seed: int, questions: int) -> tuple[np.random.Generator, Project, list, list[np.ndarray]]:
    """A project larger than an exact scan, written by ``writer`` and recorded, and ``questions`` query vectors."""
    rng = np.random.default_rng(seed)
    project = Project()
    first = notes(EXACT_SCAN_MAX + 60, rng)
    writer.put_many(first, NS)
    project.wrote(first)
    return rng, project, first, [unit(rng) for _ in range(questions)]


def graph_of(store: PostgresNoteStore) -> ProjectGraph:
    (held,) = store._vectors._held.values()
    assert isinstance(held, ProjectGraph)
    return held


def test_a_large_project_is_searched_on_a_graph_held_in_the_server_that_follows_another_servers_writes(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng, project, first, queries = large_project(writer, 21, 4)

    def check() -> None:
        for q in queries:
            found = ask(held, q, depth=30)
            same(found, ask(plain, q, depth=30))
            assert [c.id for c in found.semantic] == project.exact(q, 30)
            alone = ask(held, q, None, depth=30)  # semantic: no keyword step, the graph follows the feed itself
            same(alone, ask(plain, q, None, depth=30))
            assert [c.id for c in alone.semantic] == project.exact(q, 30)
            window = [NoteId(key) for key in found.notes]  # newer-first's cosines: from the graph's rows, equal
            assert held.cosines(window, NS) == plain.cosines(window, NS)
        suggestions = [CandidateQuery(NoteFilter(PROJECT, now=NOW), 5, NS, q, spread_sample=25) for q in queries]
        for together, alone in zip(held.candidates_each(suggestions), [plain.candidates(q) for q in suggestions]):
            same(together, alone)  # an add_notes's suggestions: the questions answered together from the graph

    check()  # the walk in PostgreSQL answers while the graph is built
    assert held.vector_graphs_built(60)
    check()
    graph = graph_of(held)
    assert len(graph.base) == EXACT_SCAN_MAX + 60 and not len(graph.tail)
    added = notes(10, rng, start=EXACT_SCAN_MAX + 60)
    writer.put_many(added, NS)
    project.wrote(added)
    moved, _old = first[3]
    writer.put(moved, NS, queries[0])  # a vector replaced: now the best for queries[0]
    project.wrote([(moved, queries[0])])
    check()
    assert ask(held, queries[0]).semantic[0].id == moved.id.value
    assert graph_of(held).base is graph.base and len(graph_of(held).tail) == 11  # laid over the same graph
    writer.delete(first[5][0].id)
    del project.vectors[first[5][0].id.value]
    writer.link(Link(LinkKey(first[7][0].id, first[6][0].id, Relation("supersedes")), T0))
    project.hidden.add(first[6][0].id.value)
    expiring = Note(NoteId.new(), PROJECT, GroupId("g0"), "paint wall", T0, expires_at=NOW - timedelta(hours=1))
    writer.put(expiring, NS, queries[1])  # expired at the question's now: never found
    check()
    assert expiring.id.value not in {c.id for c in ask(held, queries[1]).semantic}
    writer.rehome(NS, {first[9][0].id: queries[2]})  # a vector rewritten in place by a re-embedding
    project.wrote([(first[9][0], queries[2])])
    check()
    assert ask(held, queries[2]).semantic[0].id == first[9][0].id.value
    many = notes(int(STALE_SHARE * len(graph.base)) + 1, rng, start=EXACT_SCAN_MAX + 70)
    writer.put_many(many, NS)
    project.wrote(many)
    check()  # enough changed: a new graph is built while this one serves
    assert held.vector_graphs_built(60)
    check()
    rebuilt = graph_of(held)
    assert rebuilt.base is not graph.base and len(rebuilt.tail) == 0 and rebuilt.count == len(project.vectors) + 1


def test_searches_by_vector_alone_build_the_graph_of_a_project_grown_large_and_build_it_again_once_stale(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    """What an add's suggestions and semantic searches ask (no keyword step) starts the
    builds too: a project held whole that grows past an exact scan gets its graph, and a
    graph gets its next one once enough has changed."""
    held, writer, plain = servers
    rng = np.random.default_rng(25)
    writer.put_many(notes(EXACT_SCAN_MAX - 10, rng), NS)
    q = unit(rng)
    same(ask(held, q, None), ask(plain, q, None))  # held whole
    writer.put_many(notes(60, rng, start=EXACT_SCAN_MAX - 10), NS)
    same(ask(held, q, None), ask(plain, q, None))  # now too large to hold whole: the walk in PostgreSQL answers
    assert held.vector_graphs_built(60)
    graph = graph_of(held)
    same(ask(held, q, None), ask(plain, q, None))
    writer.put_many(notes(int(STALE_SHARE * len(graph.base)) + 1, rng, start=EXACT_SCAN_MAX + 50), NS)
    same(ask(held, q, None), ask(plain, q, None))  # stale: the next graph is built while this one serves
    assert held.vector_graphs_built(60)
    same(ask(held, q, None), ask(plain, q, None))
    assert graph_of(held).base is not graph.base and not len(graph_of(held).tail)


def test_a_long_tail_is_added_to_a_copy_of_the_graph_that_answers_as_the_statement(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """New vectors past ``TAIL_MAX`` join a copy of the graph (no read of the project again);
    the replaced and deleted rows stay dead in it, and the sample the spread is measured on
    is still the first in hash order."""
    monkeypatch.setattr(vector_graph, "TAIL_MAX", 20)
    held, writer, plain = servers
    rng, project, first, queries = large_project(writer, 26, 3)

    def check() -> None:
        where = NoteFilter(PROJECT, now=NOW)
        wide = [CandidateQuery(where, 30, NS, q, spread_sample=EXACT_SCAN_MAX) for q in queries]  # the spread over most rows
        for q, together in zip(queries, held.candidates_each(wide)):
            same(together, plain.candidates(CandidateQuery(where, 30, NS, q, spread_sample=EXACT_SCAN_MAX)))
            assert [c.id for c in together.semantic] == project.exact(q, 30)
            same(ask(held, q), ask(plain, q))

    ask(held, queries[0])
    assert held.vector_graphs_built(60)
    graph = graph_of(held)
    added = notes(30, rng, start=EXACT_SCAN_MAX + 60)
    writer.put_many(added, NS)
    project.wrote(added)
    moved, _old = first[3]
    writer.put(moved, NS, queries[0])  # replaced: its row dead, its vector in the tail
    project.wrote([(moved, queries[0])])
    assert writer.delete(first[5][0].id)
    del project.vectors[first[5][0].id.value]
    check()  # 31 vectors in the tail: the copy is extended meanwhile
    assert held.vector_graphs_built(60)
    check()
    extended = graph_of(held)
    assert extended.index is not graph.index and extended.index.ntotal == len(extended.base) == len(graph.base) + 31
    assert not len(extended.tail) and extended.seen >= graph.seen
    rows = extended.base.row_of()
    assert extended.dead[rows[first[5][0].id.value]] and list(extended.dead).count(True) == 2
    assert [extended.base.ids[i] for i in extended.order] == sorted(extended.base.ids, key=lambda key: (int(extended.base.hashes[rows[key]]), key))
    more = notes(25, rng, start=EXACT_SCAN_MAX + 90)
    writer.put_many(more, NS)
    project.wrote(more)
    check()
    assert held.vector_graphs_built(60)
    check()
    assert len(graph_of(held).base) == len(graph.base) + 56


def test_a_tail_holding_a_vector_of_zero_length_is_not_added_to_the_graph(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vector_graph, "TAIL_MAX", 20)
    held, writer, plain = servers
    rng, _project, _first, queries = large_project(writer, 27, 2)
    ask(held, queries[0])
    assert held.vector_graphs_built(60)
    graph = graph_of(held)
    added = notes(25, rng, start=EXACT_SCAN_MAX + 60)
    added[7] = (added[7][0], np.zeros_like(added[7][1]))  # pgvector's cosine with it is NaN: searched in SQL
    writer.put_many(added, NS)
    for q in queries:
        same(ask(held, q, None), ask(plain, q, None))
    assert held.vector_graphs_built(60)
    assert graph_of(held).index is graph.index and len(graph_of(held).tail) == 25


def test_closing_the_store_stops_a_graph_build(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore], postgres_url: str,  # noqa: F811
) -> None:
    held, writer, _plain = servers
    rng = np.random.default_rng(22)
    writer.put_many(notes(EXACT_SCAN_MAX + 1, rng), NS)
    space = writer._spaces[str(NS)][0]
    with psycopg.connect(postgres_url, autocommit=True) as blocker:
        with blocker.transaction():
            blocker.execute("LOCK TABLE vectors IN ACCESS EXCLUSIVE MODE")  # the build's read waits for it
            held._vectors._build((PROJECT.value, space))
            deadline = time.monotonic() + 30
            while blocker.execute("SELECT pg_stat_clear_snapshot()") and not blocker.execute(  # a view read afresh
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s", ("%vector_send%",)
            ).fetchone():
                assert time.monotonic() < deadline, "the build never started its read"
                time.sleep(0.05)
            held.close()  # cancels the read and joins the thread
            assert held.vector_graphs_built(0) and not held._vectors._builds
    assert not held._vectors._held


def test_a_copy_behind_the_trimmed_feed_is_read_again_and_misses_no_removal(postgres_url: str) -> None:  # noqa: F811
    writer = PostgresNoteStore(postgres_url, purge_every=0.0)  # every write trims the feed
    held, plain = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url, cached_vectors=0)
    try:
        rng = np.random.default_rng(23)
        batch = notes(20, rng)
        writer.put_many(batch, NS)
        q = batch[0][1]
        same(ask(held, q, None), ask(plain, q, None))  # semantic: the copy, read at the feed's position
        for note, _vector in batch[:5]:  # removals, trimmed from the feed after a while
            assert writer.delete(note.id)
        writer.put_many(notes(3, rng, start=20), NS)
        writer.put_many(notes(3, rng, start=23), NS)
        with psycopg.connect(postgres_url) as conn:
            trimmed = conn.execute("SELECT trimmed FROM keyword_totals WHERE project = %s", (PROJECT.value,)).fetchone()[0]
        assert trimmed > held._vectors._held[(PROJECT.value, held._spaces[str(NS)][0])].seen
        found = ask(held, q, None)
        same(found, ask(plain, q, None))
        assert not {c.id for c in found.semantic} & {note.id.value for note, _ in batch[:5]}
    finally:
        for store in (writer, held, plain):
            store.close()


def test_a_graph_that_would_not_fit_the_budget_is_not_held(postgres_url: str) -> None:  # noqa: F811
    held = PostgresNoteStore(postgres_url, vector_graphs=True, cached_vectors=EXACT_SCAN_MAX + 100)  # a graph counts twice
    writer, plain = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url, cached_vectors=0)
    try:
        rng = np.random.default_rng(24)
        writer.put_many(notes(EXACT_SCAN_MAX + 20, rng), NS)
        q = unit(rng)
        same(ask(held, q, depth=30), ask(plain, q, depth=30))
        assert held.vector_graphs_built(60)
        same(ask(held, q, depth=30), ask(plain, q, depth=30))  # the walk in PostgreSQL, the prefix held
        assert not any(isinstance(entry, ProjectGraph) for entry in held._vectors._held.values())
        assert not held._vectors._builds  # refused: not tried again at once
    finally:
        for store in (held, writer, plain):
            store.close()
