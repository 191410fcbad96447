"""Where a bulk write on the PostgreSQL store spends its time: ``put_many`` of ``--batch`` notes
(``bench.keyword_scale``'s notes and vectors), its statements run one by one and timed, the
HNSW index dropped first as an import's ``bulk`` block does, then built once at the end.

    .venv/bin/python -m bench.pg_writes [--notes 20000] [--batch 1000] [--store embedded|postgresql://…]

Reported per statement: wall µs per note, and the database backend's CPU µs per note (from
``/proc``, when PostgreSQL runs on this machine: on a machine shared with other work, wall
time is mostly waiting for a core); the batch's preparation in Python (``rows``) and the
commit; the write rate without and with the HNSW build. Writes ``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/pg_writes.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import store_urls, table, write_result
from bench.keyword_scale import notes as corpus
from bench.team_scale import DIM, Vectors, cpu_seconds


def run(url: str, count: int, batch: int) -> dict[str, Any]:
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore, schema, writes
    from local_mcp_memory.adapters.postgres_store.store import _rows_and_docs
    from local_mcp_memory.domain.identifiers import Namespace

    namespace = Namespace("local", "all-MiniLM-L6-v2", DIM)
    store = PostgresNoteStore(url, pool_size=1)
    wall: Counter[str] = Counter()
    cpu: Counter[str] = Counter()
    names = ("leave old", "notes", "count new", "terms", "vectors", "other vectors")
    try:
        space = store._space(namespace)
        notes = [pair for part in corpus(count, random.Random(count), Vectors(count)) for pair in part]
        with store._pool.connection() as conn:
            conn.execute(f"DROP INDEX IF EXISTS vectors_hnsw_{space}")
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]

            def timed(name: str, step: Any) -> Any:
                started, used = time.perf_counter(), cpu_seconds([backend])
                result = step()
                wall[name] += time.perf_counter() - started
                cpu[name] += cpu_seconds([backend]) - used
                return result

            started = time.perf_counter()
            for first in range(0, count, batch):
                chunk = notes[first : first + batch]
                rows, docs = timed("rows", lambda: _rows_and_docs(chunk, namespace))
                entries = [writes.Entry(n, d, r) for (n, _v), d, r in zip(chunk, docs, rows)]
                with conn.transaction():
                    timed("lock", lambda: writes.lock_rows(conn, [e.note for e in entries]))
                    values = timed("rows", lambda: writes._rows(entries))
                    timed("copy", lambda: writes.stage(conn, values))
                    for name, statement in zip(names, writes.STAGED):
                        timed(name, lambda: conn.execute(statement, {"space": space}))
                    commit = time.perf_counter()
                wall["commit"] += time.perf_counter() - commit
            writing = time.perf_counter() - started
            built = time.perf_counter()
            schema.build_hnsw(conn, space, DIM)
            building = time.perf_counter() - built
    finally:
        store.close()
    steps = {name: {"wall_us": round(1e6 * wall[name] / count), "backend_cpu_us": round(1e6 * cpu[name] / count)}
             for name in ("rows", "lock", "copy", *names, "commit")}
    return {"notes": count, "batch": batch, "steps": steps, "writing_s": round(writing, 2),
            "written_per_s": round(count / writing), "hnsw_build_s": round(building, 2),
            "with_build_per_s": round(count / (writing + building))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.pg_writes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--store", default="embedded", help="postgresql://… (an empty database) or 'embedded'")
    parser.add_argument("--out", default="pg_writes")
    args = parser.parse_args(argv)
    with store_urls(args.store) as store_for:
        result = run(store_for(), args.notes, args.batch)
    print(f"\nput_many of {args.batch} notes at a time, {args.notes} notes: {result['written_per_s']} notes/s written, "
          f"{result['with_build_per_s']} notes/s with the HNSW build ({result['hnsw_build_s']} s)\n")
    print(table(["step", "wall µs / note", "backend CPU µs / note"],
                [[name, s["wall_us"], s["backend_cpu_us"]] for name, s in result["steps"].items()]))
    print(f"\nwritten: {write_result(args.out, result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
