"""End-to-end latency and throughput through ``mcp-memory serve`` (stdio) at a given store size.

    .venv/bin/python -m bench.e2e [--sizes 10000] [--model all-MiniLM-L6-v2] [--searches 200] [--adds 200]
                                  [--store postgresql://…|embedded]

For each size, a fresh server loads that many short synthetic notes into one project with
``memory.add_notes`` (batches of ``--batch``), waits until the server is idle (``settled_after_s``:
on PostgreSQL, a large project's graph being built), then times ``--adds`` single
``memory.add_note`` round trips and ``--searches`` ``memory.search`` round trips (topK 5) per
mode, each mode with queries of its own, none asked twice (``distinct_queries``). Reported: bulk ingest notes/s, add_note p50/p95, search p50/p95 and sequential searches/s per mode.
``--sizes 10000,100000`` adds the large run: the local model embeds ~200 short texts/s, so
100k notes take ~5-10 minutes to load. Writes ``bench/results/e2e.json``; the notes and
queries are generated from seeded choices by this module, so its sha256 is the data's.
``--store`` runs each size's server on a PostgreSQL store: a URL names an empty database
(give one size), ``embedded`` starts a throwaway PostgreSQL 18 with pgvector with a fresh
database per size.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path
import time
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/e2e.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StdioClient, generated_data, latency_ms, settle, store_urls, table, use_model, write_result
from bench.locomo import DEFAULT_MODEL

PROJECT = "e2e-bench"
SUBJECTS = "the api gateway|the billing worker|our ci pipeline|the search index|the mobile app|the auth service|the data exporter|the admin ui|the cron scheduler|the cache layer".split("|")
VERBS = "times out|retries|fails|is slow|leaks memory|needs a restart|logs too much|drops requests|blocks|crashes".split("|")
CAUSES = "after a deploy|under load|on cold start|when the token expires|with large payloads|at midnight UTC|behind the proxy|on arm64|with python 3.12|when disk is full".split("|")
FIXES = "raise the pool size|pin the client version|add an index|use exponential backoff|batch the writes|set a timeout of 30s|clear the stale lock|rotate the key|upgrade the driver|split the job".split("|")
QUESTIONS = [
    "why does {s} {v}?", "how did we fix {s} when it {v}", "{s} {v} {c}", "what to do when {s} {v}",
    "decision about {s}", "known issue: {v} {c}",
]


def synthetic_note(rng: random.Random, i: int) -> dict[str, Any]:
    s, v, c, f = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(CAUSES), rng.choice(FIXES)
    return {
        "projectId": PROJECT,
        "groupId": f"task-{i % 50}",
        "text": f"{s.capitalize()} {v} {c}; fix: {f} (ticket OPS-{i}).",
        "tags": [rng.choice(["bug", "decision", "insight", "convention"])],
    }


def synthetic_query(rng: random.Random) -> str:
    return rng.choice(QUESTIONS).format(s=rng.choice(SUBJECTS), v=rng.choice(VERBS), c=rng.choice(CAUSES))


def distinct_queries(rng: random.Random, count: int) -> list[str]:
    """``count`` different synthetic queries (of the 1,410 there are), in a random order: a
    server keeps the vectors of recent queries, so a query asked twice would not time its
    embedding the second time."""
    every = sorted({q.format(s=s, v=v, c=c) for q in QUESTIONS for s in SUBJECTS for v in VERBS for c in CAUSES})
    if count > len(every):
        raise ValueError(f"at most {len(every)} different queries, {count} asked")
    return rng.sample(every, count)


def run_size(
    size: int, model: str, modes: list[str], searches: int, adds: int, batch: int, store: str | None = None
) -> dict[str, Any]:
    rng = random.Random(size)
    with StdioClient(**({"MCP_MEMORY_STORE": store} if store else {})) as client:
        use_model(client, None if model == DEFAULT_MODEL else model)
        client.call("memory.search", {"projectId": "warm-up", "query": "warm up"})
        started = time.perf_counter()
        for start in range(0, size, batch):
            notes = [synthetic_note(rng, i) for i in range(start, min(size, start + batch))]
            client.call("memory.add_notes", {"notes": notes})
            if start and start % (batch * 20) == 0:
                print(f"  {start}/{size} notes, {start / (time.perf_counter() - started):.0f}/s", file=sys.stderr)
        bulk = time.perf_counter() - started
        settled = settle(client.process.pid)  # a store's work on threads of its own after the writes (a graph build)
        add_seconds = [client.timed("memory.add_note", synthetic_note(rng, size + i))[1] for i in range(adds)]
        out: dict[str, Any] = {
            "size": size,
            "bulk_ingest": {"notes": size, "seconds": round(bulk, 1), "notes_per_s": round(size / bulk, 1), "batch": batch},
            "settled_after_s": settled,
            "add_note_ms": latency_ms(add_seconds),
            "search": {},
        }
        fresh = iter(distinct_queries(rng, len(modes) * (searches + 5)))  # no query asked twice: each embedding timed
        for mode in modes:
            for _ in range(5):  # warm the keyword index of the project and the caches
                client.call("memory.search", {"projectId": PROJECT, "query": next(fresh), "mode": mode})
            queries = [next(fresh) for _ in range(searches)]
            seconds = [client.timed("memory.search", {"projectId": PROJECT, "query": q, "mode": mode})[1] for q in queries]
            out["search"][mode] = {**latency_ms(seconds), "per_s": round(len(seconds) / sum(seconds), 1)}
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.e2e", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--out", default="e2e")
    parser.add_argument("--store", help="postgresql://… (an empty database) or 'embedded'; default: the local store")
    args = parser.parse_args(argv)

    modes = args.modes.split(",")
    load = os.getloadavg()[0]
    with store_urls(args.store) as store_for:
        runs = [run_size(int(s), args.model, modes, args.searches, args.adds, args.batch, store_for())
                for s in args.sizes.split(",")]
    rows = []
    for run in runs:
        for mode, res in run["search"].items():
            rows.append([run["size"], mode, res["p50"], res["p95"], res["per_s"], run["add_note_ms"]["p50"],
                         run["add_note_ms"]["p95"], run["bulk_ingest"]["notes_per_s"]])
    store = "postgresql" if args.store else "faiss"
    print(f"End to end through `mcp-memory serve` (stdio), {store} store, model {args.model}, one project; "
          f"load average at start {load:.1f}\n")
    print(table(["notes", "search mode", "search p50 ms", "search p95 ms", "searches/s", "add_note p50 ms",
                 "add_note p95 ms", "bulk add_notes notes/s"], rows))
    result = {"model": args.model, "store": store, "load_average_at_start": load, "runs": runs}
    path = write_result(args.out, result, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
