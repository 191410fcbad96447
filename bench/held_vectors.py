"""The PostgreSQL store's hybrid question with the project's vectors held in the server process
(``adapters/postgres_store/vector_cache.py``) against the same question scored in the
database (a store holding none, ``cached_vectors=0``): the same answers, and what each costs.

    .venv/bin/python -m bench.held_vectors --store postgresql://… [--project team-scale-000] [--searches 100]

Runs against a store already holding a data set (``bench.team_scale`` leaves one), in this
process, with the real local model embedding each question, asked as ``memory.search``
asks a hybrid search (depth 30, spread sample 1,024, neighbours), both stores in turn for
every question. Reported: questions whose semantic, keyword or neighbour candidates or
notes differ (in ids or order), the largest difference of a cosine or of the spread's mean
or deviation, and per path the wall time (median) and the CPU of this process and of the
database backends (mean; their clock counts in ticks of 10 ms). Writes
``bench/results/<--out>.json``.
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
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, table, write_result
from bench.e2e import synthetic_query
from bench.team_scale import backend_pids, cpu_seconds

DEPTH = 30
SAMPLE = 1024


def _shape(found: Any) -> tuple:
    """What a ranking reads of an answer, scores aside."""
    return (
        [c.id for c in found.semantic], [c.id for c in found.keyword],
        {key: [n.id for n in near] for key, near in found.neighbours.items()}, set(found.notes),
    )


def run(url: str, project: str, searches: int, seed: int) -> dict[str, Any]:
    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
    from local_mcp_memory.domain.note import NoteFilter

    embedder = LocalOnnxEmbedder(threads=2)
    namespace = Namespace("local", LocalOnnxEmbedder.MODEL, LocalOnnxEmbedder.DIM)
    stores = {"held in the server": PostgresNoteStore(url, pool_size=1),
              "scored in the database": PostgresNoteStore(url, pool_size=1, cached_vectors=0)}
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
    held, plain = answers.values()
    differing = sum(_shape(a) != _shape(b) for a, b in zip(held, plain))
    worst = 0.0
    for a, b in zip(held, plain):
        worst = max(worst, abs(a.spread.mean - b.spread.mean), abs(a.spread.std - b.spread.std),
                    *(abs(x.score - y.score) for x, y in zip(a.semantic, b.semantic)))
    paths = {name: {"wall_p50_ms": round(statistics.median(wall[name]), 2),
                    "process_cpu_ms": round(cpu[name] / searches, 2),
                    "backend_cpu_ms": round(backend[name] / searches, 2) if pids[name] else None} for name in stores}
    return {"project": project, "searches": searches, "differing_answers": differing,
            "largest_score_difference": worst, "paths": paths}


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
    print(f"answers differing: {result['differing_answers']} of {args.searches}; "
          f"largest difference of a cosine or of the spread: {result['largest_score_difference']:.1e}\n")
    print(table(["path", "wall p50 ms", "this process CPU ms", "database backend CPU ms"],
                [[name, p["wall_p50_ms"], p["process_cpu_ms"], p["backend_cpu_ms"]] for name, p in result["paths"].items()]))
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0 if result["differing_answers"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
