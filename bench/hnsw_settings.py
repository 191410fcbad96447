"""pgvector's HNSW settings against an exact scan, on a data set of ``bench.team_scale``.

    .venv/bin/python -m bench.hnsw_settings --store postgresql://… [--project team-scale-000] [--questions 40]
                                            [--ef 40,100,200,400] [--halfvec]

For each ``hnsw.ef_search`` (with ``hnsw.iterative_scan = relaxed_order``, as the store sets
it), the ``depth`` (30, what a hybrid search asks) nearest notes of one project by the index
against the exact ones (recall@30), and the statement's time and shared buffers read, median
over ``--questions`` questions embedded by the real model. ``--halfvec`` builds a second HNSW
index over ``embedding::halfvec`` (half the bytes per vector) on the namespace's rows, measures
it the same way and drops it again. Writes ``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, table, write_result
from bench.e2e import synthetic_query

DEPTH = 30


def run(url: str, project: str, questions: int, efs: list[int], halfvec: bool) -> dict[str, Any]:
    import psycopg
    from pgvector.psycopg import register_vector

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

    embedder = LocalOnnxEmbedder(threads=2)
    rng = random.Random(11)
    vectors = [embedder.embed([synthetic_query(rng)], "query")[0] for _ in range(questions)]
    conn = psycopg.connect(url, autocommit=True)
    register_vector(conn)
    conn.execute("SET max_parallel_workers_per_gather = 0")
    conn.execute("SET work_mem = '16MB'")
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    space, dim = conn.execute("SELECT id, dim FROM namespaces ORDER BY id LIMIT 1").fetchone()
    exact_sql = f"""SELECT v.note FROM vectors v WHERE v.space = {space} AND v.project = %(p)s
                    ORDER BY v.embedding <=> %(q)s::vector({dim}), v.note LIMIT {DEPTH}"""
    truth = [{r[0] for r in conn.execute(exact_sql, {"p": project, "q": q}).fetchall()} for q in vectors]
    kinds = {"vector": f"embedding::vector({dim})"}
    if halfvec:
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(f"""CREATE INDEX IF NOT EXISTS bench_hnsw_halfvec ON vectors
                         USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops) WHERE space = {space}""")
        kinds["halfvec"] = f"embedding::halfvec({dim})"
        build_s = round(time.perf_counter() - started, 1)
    out: dict[str, Any] = {"project": project, "questions": questions, "depth": DEPTH, "rows": []}
    try:
        for kind, expr in kinds.items():
            for ef in efs:
                conn.execute(f"SET hnsw.ef_search = {ef}")
                sql = f"""SELECT v.note FROM vectors v WHERE v.space = {space} AND v.project = %(p)s
                          ORDER BY {expr} <=> %(q)s::{kind}({dim}) LIMIT {DEPTH}"""
                recalls, ms, buffers = [], [], []
                for q, want in zip(vectors, truth):
                    got = {r[0] for r in conn.execute(sql, {"p": project, "q": q}).fetchall()}
                    recalls.append(len(got & want) / len(want))
                    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, {"p": project, "q": q}))
                    ms.append(float(re.search(r"Execution Time: ([\d.]+)", plan).group(1)))
                    buffers.append(int(re.search(r"shared hit=(\d+)", plan).group(1)))
                out["rows"].append({"index": kind, "ef_search": ef, "recall_at_30": round(statistics.mean(recalls), 4),
                                    "ms_p50": round(statistics.median(ms), 2), "buffers_p50": statistics.median(buffers)})
    finally:
        if halfvec:
            conn.execute("DROP INDEX IF EXISTS bench_hnsw_halfvec")
            out["halfvec_build_s"] = build_s
        conn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.hnsw_settings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--project", default="team-scale-000")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--ef", default="40,100,200,400")
    parser.add_argument("--halfvec", action="store_true")
    parser.add_argument("--out", default="hnsw_settings")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    result = run(args.store, args.project, args.questions, [int(x) for x in args.ef.split(",")], args.halfvec)
    print(f"HNSW against an exact scan, project {args.project}, {args.questions} questions, top {DEPTH}; "
          f"load average at start {load:.1f}\n")
    print(table(["index", "ef_search", "recall@30", "statement p50 ms", "buffers p50"],
                [[r["index"], r["ef_search"], r["recall_at_30"], r["ms_p50"], r["buffers_p50"]] for r in result["rows"]]))
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
