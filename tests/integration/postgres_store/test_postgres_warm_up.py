"""A server's store warms up its large projects as soon as it opens (``warm_up``): the keyword
index and the graph of a project above ``EXACT_SCAN_MAX`` notes are built before any search,
a small project's are left to its first search, the searches after answer as a store without
them does, a project over the budget is not warmed, and closing the store meanwhile stops it."""

from __future__ import annotations

import gc
import time
from datetime import timedelta

import numpy as np
import psycopg
import pytest

from local_mcp_memory.adapters import long_lived
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.vector_graph import ProjectGraph
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
from local_mcp_memory.domain.note import Note
from tests.integration.postgres_store.test_postgres_vector_cache import NS, PROJECT, T0, ask, notes, same, unit
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401  (fixtures)

SMALL = CanonicalProjectId("/cache/small")


def write_projects(url: str, rng: np.random.Generator) -> int:
    """A large project (``PROJECT``) and a small one (``SMALL``); the namespace's number."""
    writer = PostgresNoteStore(url)
    try:
        writer.put_many(notes(EXACT_SCAN_MAX + 40, rng), NS)
        small = [(Note(NoteId.new(), SMALL, GroupId("g"), "paint wall", T0 + timedelta(minutes=i)), unit(rng)) for i in range(20)]
        writer.put_many(small, NS)
        return writer._spaces[str(NS)][0]
    finally:
        writer.close()


def test_a_server_store_builds_its_large_projects_index_and_graph_before_any_search(postgres_url: str) -> None:  # noqa: F811
    rng = np.random.default_rng(31)
    space = write_projects(postgres_url, rng)
    long_lived.built(long_lived.FREEZE_AFTER)  # whatever was counted before: frozen, the count from 0
    long_lived.built(long_lived.FREEZE_AFTER - 1)  # so that this project's index is the one that freezes
    frozen = gc.get_freeze_count()
    held = PostgresNoteStore(postgres_url, vector_graphs=True, warm_up=True)
    plain = PostgresNoteStore(postgres_url, cached_vectors=0)
    try:
        assert held.warmed_up(120)
        # what it built is out of the collector's full passes (``long_lived``)
        assert gc.get_freeze_count() > frozen
        postings = held._keywords._held[PROJECT.value].index._projects[PROJECT.value].postings
        assert gc.is_tracked(postings) and not any(o is postings for o in gc.get_objects())
        assert held._keywords.seen(PROJECT.value) is not None and held._keywords.notes(PROJECT.value) == EXACT_SCAN_MAX + 40
        assert held._keywords.seen(SMALL.value) is None  # a small project: its first search loads it
        graph = held._vectors._held[(PROJECT.value, space)]
        assert isinstance(graph, ProjectGraph) and len(graph.base) == EXACT_SCAN_MAX + 40
        assert list(held._vectors._held) == [(PROJECT.value, space)]
        for q in (unit(rng) for _ in range(3)):
            same(ask(held, q, depth=30), ask(plain, q, depth=30))  # on the graph at once, as the statement answers
        assert not held._vectors._builds and held._vectors._held[(PROJECT.value, space)].base is graph.base
    finally:
        held.close()
        plain.close()


def test_a_store_that_does_not_warm_up_builds_nothing_before_a_search(postgres_url: str) -> None:  # noqa: F811
    write_projects(postgres_url, np.random.default_rng(32))
    store = PostgresNoteStore(postgres_url, vector_graphs=True)
    try:
        assert store.warmed_up(0) and store.vector_graphs_built(0)
        assert store._keywords.seen(PROJECT.value) is None and not store._vectors._held
    finally:
        store.close()


def test_a_project_over_the_budget_is_not_warmed(postgres_url: str) -> None:  # noqa: F811
    write_projects(postgres_url, np.random.default_rng(33))
    frozen = gc.get_freeze_count()
    held = PostgresNoteStore(postgres_url, vector_graphs=True, warm_up=True, cached_vectors=EXACT_SCAN_MAX + 100)
    try:
        assert held.warmed_up(60)  # a graph counts twice: it would not fit
        assert gc.get_freeze_count() == frozen  # nothing built, nothing frozen
        assert held._keywords.seen(PROJECT.value) is None and not held._vectors._held and not held._vectors._builds
    finally:
        held.close()


@pytest.mark.parametrize("table", ["vectors", "note_terms"])
def test_closing_the_store_during_its_warm_up_stops_it(postgres_url: str, table: str) -> None:  # noqa: F811
    write_projects(postgres_url, np.random.default_rng(34))
    with psycopg.connect(postgres_url, autocommit=True) as blocker:
        with blocker.transaction():
            blocker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")  # the warm-up's read waits for it
            held = PostgresNoteStore(postgres_url, vector_graphs=True, warm_up=True)
            deadline = time.monotonic() + 30
            while blocker.execute("SELECT pg_stat_clear_snapshot()") and not blocker.execute(  # a view read afresh
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND backend_type = 'client backend'"
            ).fetchone():
                assert time.monotonic() < deadline, "the warm-up never started its read"
                time.sleep(0.05)
            started = time.monotonic()
            held.close()  # cancels the read and joins the thread
            assert time.monotonic() - started < 10
            assert held.warmed_up(0) and held.vector_graphs_built(0)
    assert held._keywords.seen(PROJECT.value) is None and not held._vectors._held and not held._vectors._builds
