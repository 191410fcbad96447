"""pgvector index options against an exact scan, on a data set of ``bench.team_scale``.

    .venv/bin/python -m bench.hnsw_settings --store postgresql://… [--project team-scale-000] [--questions 40]
                                            [--variants vector,bit] [--ef 200] [--rerank 200,400] [--workers 0]

Each variant builds an HNSW index of its own on the namespace's rows (``CREATE INDEX``, with
``maintenance_work_mem`` 2GB as the store builds it, ``--workers`` parallel maintenance
workers), timed (wall seconds, and CPU seconds of the whole cluster from ``/proc`` when
PostgreSQL runs on this machine), then measured and dropped again:

* ``vector``: what the store built up to schema version 7, ``embedding::vector(dim)`` with
  ``vector_cosine_ops`` (``m``/``ef_construction`` from ``--m``/``--efc``, pgvector's 16/64 by default);
* ``halfvec``: ``embedding::halfvec(dim)``, ``halfvec_cosine_ops`` (half the bytes per vector);
* ``bit``: ``binary_quantize(embedding::vector(dim))::bit(dim)``, ``bit_hamming_ops`` (one bit
  per dimension), searched for ``--rerank`` candidates by Hamming distance that the same
  statement re-ranks by the exact cosine of the full vectors.

For each variant and each ``hnsw.ef_search`` (``--ef``; for ``bit`` at least the candidates
asked), with ``hnsw.iterative_scan = relaxed_order`` as the store sets it: the ``depth`` (30,
what a hybrid search asks) nearest notes of one project against the exact ones (recall@10
and recall@30), and the statement's time and shared buffers read, median over
``--questions`` questions embedded by the real model. Writes ``bench/results/<--out>.json``.
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
from bench.team_scale import _cluster_cpu, _postmaster

DEPTH = 30


def index_sql(variant: str, space: int, dim: int, m: int, efc: int) -> tuple[str, str]:
    """The CREATE INDEX of ``variant`` (named ``bench_hnsw_<variant>``) and its ORDER BY
    expression of a row ``v`` against ``%(q)s``."""
    expr, ops, order = {
        "vector": (f"embedding::vector({dim})", "vector_cosine_ops", f"v.embedding::vector({dim}) <=> %(q)s::vector({dim})"),
        "halfvec": (f"embedding::halfvec({dim})", "halfvec_cosine_ops",
                    f"v.embedding::halfvec({dim}) <=> %(q)s::halfvec({dim})"),
        "bit": (f"binary_quantize(embedding::vector({dim}))::bit({dim})", "bit_hamming_ops",
                f"binary_quantize(v.embedding::vector({dim}))::bit({dim}) <~> binary_quantize(%(q)s::vector({dim}))"),
    }[variant]
    sql = (f"CREATE INDEX bench_hnsw_{variant} ON vectors USING hnsw (({expr}) {ops}) "
           f"WITH (m = {m}, ef_construction = {efc}) WHERE space = {space}")
    return sql, order


def search_sql(variant: str, order: str, space: int, dim: int, rerank: int) -> str:
    if variant != "bit":
        return f"SELECT v.note FROM vectors v WHERE v.space = {space} AND v.project = %(p)s ORDER BY {order} LIMIT {DEPTH}"
    return f"""SELECT c.note FROM (SELECT v.note, v.embedding FROM vectors v WHERE v.space = {space} AND v.project = %(p)s
                                   ORDER BY {order} LIMIT {rerank}) c
               ORDER BY c.embedding <=> %(q)s::vector({dim}) LIMIT {DEPTH}"""


def run(url: str, args: argparse.Namespace) -> dict[str, Any]:
    import psycopg
    from pgvector.psycopg import register_vector

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

    embedder = LocalOnnxEmbedder(threads=2)
    rng = random.Random(11)
    vectors = [embedder.embed([synthetic_query(rng)], "query")[0] for _ in range(args.questions)]
    conn = psycopg.connect(url, autocommit=True)
    register_vector(conn)
    postmaster = _postmaster(url)
    conn.execute("SET max_parallel_workers_per_gather = 0")
    conn.execute("SET work_mem = '16MB'")
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    conn.execute("SET hnsw.max_scan_tuples = 100000")
    space, dim = conn.execute("SELECT id, dim FROM namespaces ORDER BY id LIMIT 1").fetchone()
    exact_sql = f"""SELECT v.note FROM vectors v WHERE v.space = {space} AND v.project = %(p)s
                    ORDER BY v.embedding <=> %(q)s::vector({dim}), v.note LIMIT {DEPTH}"""
    truth = [[r[0] for r in conn.execute(exact_sql, {"p": args.project, "q": q}).fetchall()] for q in vectors]
    notes = conn.execute(f"SELECT count(*) FROM vectors WHERE space = {space}").fetchone()[0]
    out: dict[str, Any] = {"project": args.project, "questions": args.questions, "depth": DEPTH, "vectors": notes,
                           "m": args.m, "ef_construction": args.efc, "workers": args.workers, "rows": [], "builds": []}
    for variant in args.variants.split(","):
        create, order = index_sql(variant, space, dim, args.m, args.efc)
        conn.execute(f"DROP INDEX IF EXISTS bench_hnsw_{variant}")
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute(f"SET max_parallel_maintenance_workers = {args.workers}")
        cpu, started = _cluster_cpu(postmaster), time.perf_counter()
        conn.execute(create)
        wall, cpu = time.perf_counter() - started, _cluster_cpu(postmaster) - cpu
        size = conn.execute(f"SELECT pg_relation_size('bench_hnsw_{variant}')").fetchone()[0]
        out["builds"].append({"index": variant, "build_s": round(wall, 1), "cluster_cpu_s": round(cpu, 1),
                              "cpu_us_per_vector": round(1e6 * cpu / notes) if postmaster else None,
                              "size_mib": round(size / 2**20, 1)})
        print(f"  built {variant}: {wall:.1f} s, {cpu:.1f} s CPU, {size / 2**20:.0f} MiB", file=sys.stderr)
        try:
            for rerank in [int(x) for x in args.rerank.split(",")] if variant == "bit" else [DEPTH]:
                for ef in [int(x) for x in args.ef.split(",")]:
                    ef = max(ef, rerank)
                    conn.execute(f"SET hnsw.ef_search = {ef}")
                    sql = search_sql(variant, order, space, dim, rerank)
                    at10, at30, ms, buffers = [], [], [], []
                    for q, want in zip(vectors, truth):
                        got = [r[0] for r in conn.execute(sql, {"p": args.project, "q": q}).fetchall()]
                        at10.append(len(set(got[:10]) & set(want[:10])) / 10)
                        at30.append(len(set(got) & set(want)) / len(want))
                        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql,
                                                                    {"p": args.project, "q": q}))
                        if f"bench_hnsw_{variant}" not in plan:  # another index of the same expression
                            raise RuntimeError(f"the search did not use bench_hnsw_{variant}:\n{plan}")
                        ms.append(float(re.search(r"Execution Time: ([\d.]+)", plan).group(1)))
                        buffers.append(int(re.search(r"shared hit=(\d+)", plan).group(1)))
                    out["rows"].append({"index": variant, "ef_search": ef, "rerank": rerank if variant == "bit" else None,
                                        "recall_at_10": round(statistics.mean(at10), 4),
                                        "recall_at_30": round(statistics.mean(at30), 4),
                                        "ms_p50": round(statistics.median(ms), 2), "buffers_p50": statistics.median(buffers)})
                    print(f"  {out['rows'][-1]}", file=sys.stderr)
        finally:
            if not args.keep:
                conn.execute(f"DROP INDEX IF EXISTS bench_hnsw_{variant}")
    conn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.hnsw_settings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--project", default="team-scale-000")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--variants", default="vector,bit")
    parser.add_argument("--ef", default="200")
    parser.add_argument("--rerank", default="200,400", help="bit: candidates by Hamming distance re-ranked by cosine")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--efc", type=int, default=64)
    parser.add_argument("--workers", type=int, default=0, help="max_parallel_maintenance_workers of the builds")
    parser.add_argument("--keep", action="store_true", help="keep the indexes built (bench_hnsw_<variant>)")
    parser.add_argument("--out", default="hnsw_settings")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    result = run(args.store, args)
    print(f"pgvector HNSW indexes against an exact scan, {result['vectors']} vectors, project {args.project}, "
          f"{args.questions} questions, top {DEPTH}; m {args.m}, ef_construction {args.efc}, "
          f"{args.workers} parallel workers; load average at start {load:.1f}\n")
    print(table(["index", "build s", "cluster CPU s", "CPU µs / vector", "MiB"],
                [[b["index"], b["build_s"], b["cluster_cpu_s"], b["cpu_us_per_vector"], b["size_mib"]]
                 for b in result["builds"]]))
    print()
    print(table(["index", "ef_search", "re-ranked", "recall@10", "recall@30", "statement p50 ms", "buffers p50"],
                [[r["index"], r["ef_search"], r["rerank"] or "-", r["recall_at_10"], r["recall_at_30"], r["ms_p50"],
                  r["buffers_p50"]] for r in result["rows"]]))
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
