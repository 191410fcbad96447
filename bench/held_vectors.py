"""The PostgreSQL store's hybrid question with the project's vectors held in the server process
(``adapters/postgres_store/vector_cache.py``; a large project's with a graph of its own,
``vector_graph.py``, as a server holds them) against the same question scored in the
database (a store holding none, ``cached_vectors=0``): the same answers, and what each costs.

    .venv/bin/python -m bench.held_vectors --store postgresql://… [--project team-scale-000] [--searches 100]

Runs against a store already holding a data set (``bench.team_scale`` leaves one), in this
process, with the real local model embedding each question, asked as ``memory.search``
asks a hybrid search (depth 30, spread sample 1,024, neighbours), both stores in turn for
every question. Three paths: the graph (a server's store, its graph built before the first
question), the vectors held without a graph (a project over ``EXACT_SCAN_MAX`` notes: the
spread here, the HNSW walk in PostgreSQL), and the database alone. Reported: questions whose
semantic, keyword or neighbour candidates or notes differ (in ids or order) from the
database's, the largest difference of a cosine or of the spread's mean or deviation, and per
path the recall@10 and @30 of the semantic candidates against the exact scan (every vector
of the project scored in numpy as pgvector scores it), the wall time (median) and the CPU of
this process and of the database backends (mean; their clock counts in ticks of 10 ms).
Exit status 1 when the path without a graph differs from the database's, or the graph's
recall is below the walk's. Writes ``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, table, write_result
from bench.e2e import synthetic_query
from bench.team_scale import backend_pids, cpu_seconds

DEPTH = 30
SAMPLE = 1024
GRAPH = "graph held in the server"
HELD = "held, no graph"
DATABASE = "scored in the database"


def _shape(found: Any) -> tuple:
    """What a ranking reads of an answer, scores aside."""
    return (
        [c.id for c in found.semantic], [c.id for c in found.keyword],
        {key: [n.id for n in near] for key, near in found.neighbours.items()}, set(found.notes),
    )


def exact_scan(url: str, project: str, where: Any) -> Callable[[Any, int], list[str]]:
    """The ``depth`` nearest notes of ``project`` to a question as the exact scan orders them,
    of every vector read once (the notes ``where`` hides left out)."""
    import psycopg

    from local_mcp_memory.adapters.postgres_store.project_vectors import pg_cosines, sent_matrix
    from local_mcp_memory.adapters.postgres_store.queries import hidden_sql

    params: dict[str, Any] = {}
    hidden_query = hidden_sql(where, params)
    with psycopg.connect(url) as conn:
        hidden = {key for (key,) in conn.execute(hidden_query, params).fetchall()}
        rows = conn.execute(
            """SELECT note, (extract(epoch FROM created) * 1000000)::bigint, vector_send(embedding) FROM vectors
               WHERE project = %s""", (project,)).fetchall()
    rows = [row for row in rows if row[0] not in hidden]
    ids, created = [row[0] for row in rows], np.array([row[1] for row in rows], dtype=np.int64)
    matrix = sent_matrix(row[2] for row in rows)
    squares = np.einsum("ij,ij->i", matrix, matrix).astype(np.float64)

    def nearest(q: Any, depth: int) -> list[str]:
        cosines = pg_cosines(matrix, squares, q)
        near = np.argpartition(-cosines, depth * 4)[:depth * 4]
        return [ids[i] for i in sorted(near, key=lambda i: (-cosines[i], -created[i], ids[i]))[:depth]]

    return nearest


def _recall(found: list[str], exact: list[str], k: int) -> float:
    return len(set(found[:k]) & set(exact[:k])) / max(1, len(exact[:k]))


def run(url: str, project: str, searches: int, seed: int) -> dict[str, Any]:
    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
    from local_mcp_memory.domain.note import NoteFilter

    embedder = LocalOnnxEmbedder(threads=2)
    namespace = Namespace("local", LocalOnnxEmbedder.MODEL, LocalOnnxEmbedder.DIM)
    stores = {GRAPH: PostgresNoteStore(url, pool_size=1, vector_graphs=True),
              HELD: PostgresNoteStore(url, pool_size=1),
              DATABASE: PostgresNoteStore(url, pool_size=1, cached_vectors=0)}
    rng = random.Random(seed)
    questions = []
    for _ in range(searches + 1):
        text = synthetic_query(rng)
        where = NoteFilter(CanonicalProjectId(project), now=datetime.now(timezone.utc))
        questions.append(CandidateQuery(where, DEPTH, namespace, embedder.embed([text], "query")[0], text, SAMPLE, neighbours=True))
    answers: dict[str, list[Any]] = {name: [] for name in stores}
    wall: dict[str, list[float]] = {name: [] for name in stores}
    cpu = {name: 0.0 for name in stores}
    backend = {name: 0.0 for name in stores}
    pids: dict[str, list[int]] = {}
    for i, question in enumerate(questions):
        for name, store in stores.items():
            if i == 0:  # the first question builds the project's indexes and opens the connection
                store.candidates(question)
                store.vector_graphs_built()
                with store._pool.connection() as conn:  # its pool's one connection
                    pids[name] = [conn.info.backend_pid] if conn.info.backend_pid in backend_pids(url) else []
                continue
            started, thread, database = time.perf_counter(), time.thread_time(), cpu_seconds(pids[name])
            answers[name].append(store.candidates(question))
            wall[name].append(1000 * (time.perf_counter() - started))
            cpu[name] += 1000 * (time.thread_time() - thread)
            backend[name] += 1000 * (cpu_seconds(pids[name]) - database)
    for store in stores.values():
        store.close()
    exact = exact_scan(url, project, questions[0].where)
    nearest = [exact(question.vector, DEPTH) for question in questions[1:]]
    plain = answers[DATABASE]
    paths = {}
    for name in stores:
        worst = 0.0
        for a, b in zip(answers[name], plain):
            worst = max(worst, abs(a.spread.mean - b.spread.mean), abs(a.spread.std - b.spread.std),
                        *(abs(x.score - y.score) for x, y in zip(a.semantic, b.semantic) if x.id == y.id))
        found = [[c.id for c in answer.semantic] for answer in answers[name]]
        paths[name] = {
            "differing_answers": sum(_shape(a) != _shape(b) for a, b in zip(answers[name], plain)),
            "largest_score_difference": worst,
            "recall_at_10": round(statistics.mean(_recall(f, e, 10) for f, e in zip(found, nearest)), 4),
            "recall_at_30": round(statistics.mean(_recall(f, e, 30) for f, e in zip(found, nearest)), 4),
            "wall_p50_ms": round(statistics.median(wall[name]), 2),
            "process_cpu_ms": round(cpu[name] / searches, 2),
            "backend_cpu_ms": round(backend[name] / searches, 2) if pids[name] else None,
        }
    return {"project": project, "searches": searches, "paths": paths}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.held_vectors", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="postgresql://… holding a data set (bench.team_scale)")
    parser.add_argument("--project", default="team-scale-000")
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", default="held_vectors")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    result = run(args.store, args.project, args.searches, args.seed)
    print(f"PostgreSQL store, project {args.project}, {args.searches} hybrid questions, each asked of both paths; "
          f"load average at start {load:.1f}\n")
    print(table(["path", "answers differing from the database's", "largest score difference", "recall@10", "recall@30",
                 "wall p50 ms", "this process CPU ms", "database backend CPU ms"],
                [[name, p["differing_answers"], f"{p['largest_score_difference']:.1e}", p["recall_at_10"], p["recall_at_30"],
                  p["wall_p50_ms"], p["process_cpu_ms"], p["backend_cpu_ms"]] for name, p in result["paths"].items()]))
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    paths = result["paths"]
    worse = any(paths[GRAPH][k] < paths[DATABASE][k] for k in ("recall_at_10", "recall_at_30"))
    return 0 if paths[HELD]["differing_answers"] == 0 and not worse else 1


if __name__ == "__main__":
    sys.exit(main())
