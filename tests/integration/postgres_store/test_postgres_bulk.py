"""Bulk writes on PostgreSQL (``PostgresNoteStore.bulk``): an import large enough puts off the
HNSW index of its namespace until it ends; searches meanwhile stay exact, and an index left
missing (a server killed inside the block) is built by the next store that opens."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import psycopg

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.store import BULK_MIN
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

NS = Namespace("local", "bulk-model", 8)
PROJECT = CanonicalProjectId("/team/bulk")
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def hnsw_valid(url: str) -> bool | None:
    """Whether the namespace's HNSW index is there and valid (None: not there)."""
    with psycopg.connect(url) as conn:
        found = conn.execute(
            """SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               JOIN namespaces ns ON c.relname = 'vectors_hnsw_' || ns.id WHERE ns.name = %s""",
            (str(NS),),
        ).fetchone()
    return None if found is None else found[0]


def some_notes(count: int, seed: int) -> list[tuple[Note, np.ndarray]]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, NS.dim)).astype(np.float32)
    return [(Note(NoteId.new(), PROJECT, GroupId("g"), f"note {seed} {i}", T0), v / np.linalg.norm(v))
            for i, v in enumerate(vectors)]


def nearest(store: PostgresNoteStore, query: np.ndarray) -> list[str]:
    return [c.id for c in store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, NS, query)).semantic]


def test_a_large_import_builds_the_index_once_at_the_end_and_searches_stay_exact_meanwhile(postgres_url: str) -> None:  # noqa: F811
    store = PostgresNoteStore(postgres_url)
    try:
        first = some_notes(50, 1)
        store.put_many(first, NS)
        assert hnsw_valid(postgres_url) is True
        with store.bulk(NS, BULK_MIN):
            assert hnsw_valid(postgres_url) is None
            store.put_many(some_notes(50, 2), NS)
            query = first[0][1]
            assert nearest(store, query)[0] == first[0][0].id.value
        assert hnsw_valid(postgres_url) is True
        with store.bulk(NS, BULK_MIN - 1):  # too few to be worth a rebuild
            assert hnsw_valid(postgres_url) is True
    finally:
        store.close()


def test_an_index_left_missing_by_a_dead_import_is_built_when_a_store_opens(postgres_url: str) -> None:  # noqa: F811
    store = PostgresNoteStore(postgres_url)
    try:
        store.put_many(some_notes(20, 3), NS)
    finally:
        store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        (space,) = conn.execute("SELECT id FROM namespaces WHERE name = %s", (str(NS),)).fetchone()
        conn.execute(f"DROP INDEX vectors_hnsw_{space}")
    assert hnsw_valid(postgres_url) is None
    PostgresNoteStore(postgres_url).close()
    assert hnsw_valid(postgres_url) is True
