"""What a full pass of Python's cyclic garbage collector costs a server on a large
PostgreSQL project, with what the store built kept out of it (``long_lived``: ``gc.freeze``,
as the warm-up's builds leave it) and walked as before.

    .venv/bin/python -m bench.gc_pauses --store postgresql://… [--rounds 5]

Opens the store as ``mcp-memory serve`` does (vector graphs, warm-up) in this process,
waits until it has warmed up (a data set of ``bench.team_scale``: its 100k-note project),
then times ``--rounds`` full collections (``gc.collect()``) as the warm-up left the
process, and as many after ``gc.unfreeze()``, which puts everything back in the collector's
sight. No request runs while a full collection does (it holds the interpreter): through
HTTP, such a pass is a search's delay. Reported: the median and largest pass and the
objects the collector tracks, each way. Writes ``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/gc_pauses.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import table, write_result


def passes(rounds: int) -> dict[str, Any]:
    """``rounds`` full collections: their milliseconds and the objects tracked."""
    ms = []
    for _ in range(rounds):
        started = time.perf_counter()
        gc.collect()
        ms.append((time.perf_counter() - started) * 1e3)
    return {"median_ms": round(statistics.median(ms), 2), "max_ms": round(max(ms), 2), "tracked": len(gc.get_objects()),
            "frozen": gc.get_freeze_count()}


def run(url: str, rounds: int) -> dict[str, Any]:
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore

    started = time.monotonic()
    store = PostgresNoteStore(url, rebuild_graphs=True, vector_graphs=True, warm_up=True)
    try:
        if not store.warmed_up(600):
            raise SystemExit("the store did not warm up within 600 s")
        warmed = time.monotonic() - started
        frozen = passes(rounds)
        gc.unfreeze()
        walked = passes(rounds)
    finally:
        store.close()
    return {"warmed_up_after_s": round(warmed, 1), "rounds": rounds, "as_warmed": frozen, "unfrozen": walked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.gc_pauses", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="postgresql://… holding a data set (bench.team_scale)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="gc_pauses")
    args = parser.parse_args(argv)
    result = run(args.store, args.rounds)
    rows = [[way, result[key]["median_ms"], result[key]["max_ms"], result[key]["tracked"], result[key]["frozen"]]
            for way, key in (("as the warm-up leaves it (frozen)", "as_warmed"), ("everything walked (unfrozen)", "unfrozen"))]
    print(f"A full collection after the store warmed up ({result['warmed_up_after_s']} s), {args.rounds} rounds each\n")
    print(table(["collector", "median ms", "max ms", "objects tracked", "objects frozen"], rows))
    print(f"\nwritten: {write_result(args.out, {'store': 'postgresql', **result})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
