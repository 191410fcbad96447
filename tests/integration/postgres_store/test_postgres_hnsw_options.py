"""Schema version 8 on PostgreSQL: each namespace's HNSW graph built with ``HNSW_OPTIONS``
(version 7 built pgvector's defaults), rebuilt beside the old one after the migration.

A version 7 database is built by writing through the real store, then taking its index back
to what a version 7 server built (the same expression, no build options) and version 8
unrecorded. Two projects: one small enough for the exact scan, one of more than
``EXACT_SCAN_MAX`` notes that the index serves."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import psycopg

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.schema import BUILD_LOCK_KEY, HNSW_OPTIONS, LATEST, build_hnsw
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[3]
NS = Namespace("local", "graph-model", 16)
SMALL = CanonicalProjectId("/team/small")
LARGE = CanonicalProjectId("/team/large")
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
DEPTH = 10
RECALL_BOUND = 0.9
"""Recall@10 of the index against an exact scan that the large project's searches keep, on
both graphs (clustered 16-dimension vectors; 0.94 measured at 100k 384-dimension notes)."""


def vectors(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 20 random centres: clustered, as text vectors are."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, NS.dim))
    x = centres[rng.integers(0, 20, count)] + 0.6 * rng.standard_normal((count, NS.dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def queries() -> list[list[float]]:
    return vectors(12, 99).tolist()


def literal(query: list[float]) -> str:
    return "[" + ",".join(map(str, query)) + "]"


def write(url: str) -> None:
    store = PostgresNoteStore(url)
    try:
        for project, count, seed in ((SMALL, 300, 1), (LARGE, EXACT_SCAN_MAX + 1_500, 2)):
            rows = vectors(count, seed)
            notes = [(Note(NoteId.new(), project, GroupId(f"g{i % 7}"), f"note {i}", T0 + timedelta(minutes=i)), rows[i])
                     for i in range(count)]
            for start in range(0, count, 1_000):
                store.put_many(notes[start : start + 1_000], NS)
    finally:
        store.close()


def space_of(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT id FROM namespaces WHERE name = %s", (str(NS),)).fetchone()[0]


def graph_search(url: str, query: list[float], *, explain: bool = False) -> list[str]:
    """The large project's ``DEPTH`` nearest notes as the namespace's HNSW index finds them
    (``ef_search`` 200, as version 7 searched), or the plan of that search."""
    space = space_of(url)
    with psycopg.connect(url) as conn:
        conn.execute("SET hnsw.ef_search = 200")
        rows = conn.execute(
            f"""{"EXPLAIN " if explain else ""}SELECT note FROM vectors WHERE space = {space} AND project = %s
                ORDER BY embedding::vector({NS.dim}) <=> %s::vector({NS.dim}) LIMIT {DEPTH}""",
            (LARGE.value, literal(query)),
        ).fetchall()
    return [r[0] for r in rows]


def as_version_7(url: str) -> str:
    """The namespace's index rebuilt as version 7 built it, version 8 unrecorded; its name."""
    space = space_of(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX vectors_hnsw_{space}")
        conn.execute(f"""CREATE INDEX vectors_hnsw_{space} ON vectors
                         USING hnsw ((embedding::vector({NS.dim})) vector_cosine_ops) WHERE space = {space}""")
        conn.execute("DELETE FROM mcp_memory_schema WHERE version >= 8")
    return f"vectors_hnsw_{space}"


def index_rows(url: str) -> list[tuple[str, bool, list[str] | None]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            """SELECT c.relname, i.indisvalid, c.reloptions FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE c.relname LIKE 'vectors_hnsw_%' ORDER BY c.relname"""
        ).fetchall()


def exact(url: str, project: CanonicalProjectId, query: list[float]) -> list[str]:
    """The ``DEPTH`` nearest notes by an exact scan (no index: an expression it does not serve)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """SELECT note FROM vectors WHERE project = %s ORDER BY embedding <=> %s::vector, note LIMIT %s""",
            (project.value, literal(query), DEPTH),
        ).fetchall()
    return [r[0] for r in rows]


SEARCH = """
import json, sys, time
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.note import NoteFilter
from tests.integration.postgres_store.test_postgres_hnsw_options import DEPTH, LARGE, NS, SMALL, queries
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
store = PostgresNoteStore(sys.argv[1], timeout=60, rebuild_graphs=True)
found = {p.value: [[c.id for c in store.candidates(CandidateQuery(NoteFilter(p), DEPTH, NS, q)).semantic]
                   for q in queries()] for p in (SMALL, LARGE)}
assert store.graphs_rebuilt(timeout=240)
print(json.dumps(found))
store.close()
"""


def search(url: str, at: float | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SEARCH, url, str(at or 0.0)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def answers(process: subprocess.Popen) -> tuple[dict[str, list[list[str]]], bytes]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()[-2000:]
    return json.loads(out.splitlines()[-1]), out + err


def recall(found: list[list[str]], truth: list[list[str]]) -> float:
    return sum(len(set(f) & set(t)) for f, t in zip(found, truth)) / sum(len(t) for t in truth)


def test_a_version_7_database_opened_by_two_servers_at_once_gets_the_new_graph_once_with_the_same_answers(
    postgres_url: str,  # noqa: F811
) -> None:
    write(postgres_url)
    truth = {p.value: [exact(postgres_url, p, q) for q in queries()] for p in (SMALL, LARGE)}
    old = as_version_7(postgres_url)
    assert index_rows(postgres_url) == [(old, True, None)]
    assert old in "\n".join(graph_search(postgres_url, queries()[0], explain=True))  # the version 7 graph serves
    before = [graph_search(postgres_url, q) for q in queries()]
    assert recall(before, truth[LARGE.value]) >= RECALL_BOUND
    at = time.time() + 3.0  # both processes past their imports, then opening in the same instant
    outputs = [answers(p) for p in [search(postgres_url, at) for _ in range(2)]]
    for found, _ in outputs:
        assert found[SMALL.value] == truth[SMALL.value]  # the exact scan: the very same answers
        assert recall(found[LARGE.value], truth[LARGE.value]) >= RECALL_BOUND
    assert sum(logs.count(b"postgres_store.hnsw_built") for _, logs in outputs) == 1  # rebuilt once
    [(name, valid, options)] = index_rows(postgres_url)
    assert (name, valid) == (old, True) and set(HNSW_OPTIONS) <= set(options)
    with psycopg.connect(postgres_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version")]
    assert versions == list(range(1, LATEST + 1)) and LATEST >= 8
    assert old in "\n".join(graph_search(postgres_url, queries()[0], explain=True))  # the new graph serves
    again, logs = answers(search(postgres_url))  # a later server finds it current and builds nothing
    assert b"hnsw_built" not in logs and again[SMALL.value] == truth[SMALL.value]


def test_a_build_killed_before_the_swap_is_finished_by_the_next_server_without_building_again(
    postgres_url: str,  # noqa: F811
) -> None:
    write(postgres_url)
    old = as_version_7(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # the new graph complete, the swap not done
        (space,) = conn.execute("SELECT id FROM namespaces WHERE name = %s", (str(NS),)).fetchone()
        conn.execute("INSERT INTO mcp_memory_schema (version) VALUES (8)")
        conn.execute(f"""CREATE INDEX {old}_next ON vectors USING hnsw ((embedding::vector({NS.dim})) vector_cosine_ops)
                         WITH ({", ".join(HNSW_OPTIONS)}) WHERE space = {space}""")
        built = conn.execute("SELECT %s::regclass::oid", (f"{old}_next",)).fetchone()[0]
    opened = PostgresNoteStore(postgres_url, rebuild_graphs=True)
    assert opened.graphs_rebuilt(timeout=120)
    opened.close()
    [(name, valid, options)] = index_rows(postgres_url)
    assert (name, valid) == (old, True) and set(HNSW_OPTIONS) <= set(options)
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT %s::regclass::oid", (old,)).fetchone()[0] == built  # taken, not built again
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # a ``_next`` not of the current options: built again
        conn.execute(f"""CREATE INDEX {old}_next ON vectors USING hnsw ((embedding::vector({NS.dim})) vector_cosine_ops)
                         WITH (m = 4) WHERE space = {space}""")
        stale = conn.execute("SELECT %s::regclass::oid", (f"{old}_next",)).fetchone()[0]
        conn.execute(f"ALTER INDEX {old} SET (ef_construction = 10)")  # and the serving one stale too
        build_hnsw(conn, space, NS.dim)
        now = conn.execute("SELECT %s::regclass::oid", (old,)).fetchone()[0]
    assert now not in (built, stale)
    [(name, valid, options)] = index_rows(postgres_url)
    assert (name, valid) == (old, True) and set(HNSW_OPTIONS) <= set(options)
    store = PostgresNoteStore(postgres_url)
    try:
        q = queries()[0]
        found = [c.id for c in store.candidates(CandidateQuery(NoteFilter(SMALL), DEPTH, NS, q)).semantic]
        assert found == exact(postgres_url, SMALL, q)
    finally:
        store.close()


def test_a_server_opening_while_another_rebuilds_a_serving_graph_does_not_wait_for_it(
    postgres_url: str,  # noqa: F811
) -> None:
    write(postgres_url)
    old = as_version_7(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as builder:  # another server, in the middle of its build
        builder.execute("SELECT pg_advisory_lock(%s)", (BUILD_LOCK_KEY,))
        opened = search(postgres_url)
        found, logs = answers(opened)  # would never end if opening waited for the lock
        assert b"hnsw_built" not in logs
        assert recall(found[LARGE.value], [exact(postgres_url, LARGE, q) for q in queries()]) >= RECALL_BOUND
        [(name, valid, options)] = index_rows(postgres_url)
        assert (name, valid, options) == (old, True, None)  # the old graph still serves; nothing built
    found, logs = answers(search(postgres_url))  # the lock free: the next server to open rebuilds it
    assert logs.count(b"postgres_store.hnsw_built") == 1
    [(name, valid, options)] = index_rows(postgres_url)
    assert (name, valid) == (old, True) and set(HNSW_OPTIONS) <= set(options)


def semantic(store: PostgresNoteStore, project: CanonicalProjectId) -> list[list[str]]:
    return [[c.id for c in store.candidates(CandidateQuery(NoteFilter(project), DEPTH, NS, q)).semantic] for q in queries()]


def test_opening_never_waits_for_a_rebuild_which_only_a_server_does_and_closing_cancels(
    postgres_url: str,  # noqa: F811
) -> None:
    write(postgres_url)
    truth = [exact(postgres_url, LARGE, q) for q in queries()]
    old = as_version_7(postgres_url)
    command = PostgresNoteStore(postgres_url)  # a short-lived command's store: leaves the graph to a server
    try:
        assert command.graphs_rebuilt(timeout=0) and recall(semantic(command, LARGE), truth) >= RECALL_BOUND
    finally:
        command.close()
    assert index_rows(postgres_url) == [(old, True, None)]
    with psycopg.connect(postgres_url) as writer:  # a write in progress: a concurrent build waits for it to end
        writer.execute("LOCK TABLE vectors IN ROW EXCLUSIVE MODE")
        server = PostgresNoteStore(postgres_url, rebuild_graphs=True)  # opens at once all the same
        try:
            assert not server.graphs_rebuilt(timeout=1.0)  # the build is under way, waiting
            assert recall(semantic(server, LARGE), truth) >= RECALL_BOUND  # the old graph serves meanwhile
        finally:
            server.close()  # cancels the build
        rows = index_rows(postgres_url)
        assert rows[0] == (old, True, None) and all(not valid for _, valid, _ in rows[1:])  # at most a dead half-build
        writer.rollback()
    server = PostgresNoteStore(postgres_url, rebuild_graphs=True)  # the next server drops the half-build and builds
    try:
        assert server.graphs_rebuilt(timeout=120)
        [(name, valid, options)] = index_rows(postgres_url)
        assert (name, valid) == (old, True) and set(HNSW_OPTIONS) <= set(options)
        assert recall(semantic(server, LARGE), truth) >= RECALL_BOUND
    finally:
        server.close()
