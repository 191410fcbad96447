"""Keyword and hybrid search on the PostgreSQL store at scale, on a vocabulary whose every term
is common: the notes of ``bench.e2e`` (each subject, verb, cause and fix held by about 10 % of
the notes), with ``bench.team_scale``'s synthetic vectors, all in one project.

    .venv/bin/python -m bench.keyword_scale [--notes 100000] [--searches 200] [--store embedded|postgresql://…]

Loads the notes through the store (``put_many``, 1,000 a call, inside ``bulk`` where the
store has it; the import rate is reported),
then asks each question through the store as ``memory.search`` asks it (depth 30): keyword
alone, and hybrid (vector and words, the spread, the neighbours). ``--vacuum`` runs
``VACUUM`` on the postings after the import, which sets PostgreSQL's visibility map: without
it, right after an import, every posting a keyword question reads is also fetched from the
table ("Heap Fetches" in ``EXPLAIN``). Reported per mode: wall p50 / p95, and the database
backend's CPU time per question (from ``/proc``, when PostgreSQL runs on this machine: the
store holds one connection, so one backend serves every question) and this process's (the
store's own work: in-process BM25, decoding answers). On a machine shared with other work,
CPU time moves far less than wall time. The module runs against an older checkout of the
store too (put its tree first on ``PYTHONPATH``; stores without ``bulk`` load without it),
which is how the SQL BM25 was measured against the in-process one. Writes ``bench/results/keyword_scale.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/keyword_scale.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, latency_ms, store_urls, table, write_result
from bench.e2e import synthetic_note, synthetic_query
from bench.team_scale import Vectors

PROJECT = "/bench/keyword-scale"
DEPTH = 30  # application.search.HYBRID_DEPTH: what a search asks of each ranking
DIM = 384
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def notes(count: int, rng: random.Random, vectors: Vectors):
    """``(Note, vector)`` batches of 1,000 of the synthetic corpus, vectors as ``bench.team_scale`` makes them."""
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
    from local_mcp_memory.domain.note import Note, Tags

    for start in range(0, count, 1000):
        batch = []
        for i in range(start, min(count, start + 1000)):
            d = synthetic_note(rng, i)
            note = Note(NoteId(str(uuid.UUID(int=i + 1, version=4))), CanonicalProjectId(PROJECT),
                        GroupId(d["groupId"]), d["text"], T0 + timedelta(seconds=i), tags=Tags(tuple(d["tags"])))
            batch.append((note, vectors.of(d["text"])))
        yield batch


def backend_cpu_seconds(url: str) -> float | None:
    """CPU seconds so far of the one other client backend of the database at ``url`` (the
    store's), or None when it does not run on this machine."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        pids = conn.execute(
            """SELECT pid FROM pg_stat_activity WHERE datname = current_database()
               AND backend_type = 'client backend' AND pid <> pg_backend_pid()"""
        ).fetchall()
    if len(pids) != 1:
        return None
    try:
        fields = Path(f"/proc/{pids[0][0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(url: str, count: int, searches: int, vacuum: bool) -> dict[str, Any]:
    import psycopg

    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
    from local_mcp_memory.domain.note import NoteFilter

    namespace = Namespace("local", "bench-model", DIM)
    store = PostgresNoteStore(url, pool_size=1)
    rng, vectors = random.Random(count), Vectors(count)
    started = time.perf_counter()
    bulk = store.bulk(namespace, count) if hasattr(store, "bulk") else contextlib.nullcontext()  # older stores: none
    with bulk:
        for batch in notes(count, rng, vectors):
            store.put_many(batch, namespace)
    imported = time.perf_counter() - started
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) postings, notes" if vacuum else "ANALYZE postings, notes")
    where = NoteFilter(CanonicalProjectId(PROJECT), now=datetime.now(timezone.utc))
    questions = [synthetic_query(rng) for _ in range(searches)]
    asked = {
        "keyword": lambda text: CandidateQuery(where, DEPTH, text=text),
        "hybrid": lambda text: CandidateQuery(where, DEPTH, namespace, vectors.of(text), text, 1024, neighbours=True),
    }
    out: dict[str, Any] = {"notes": count, "import_notes_per_s": round(count / imported, 1), "vacuum": vacuum}
    for mode, question in asked.items():
        for text in questions[:5]:  # warm the caches
            store.candidates(question(text))
        cpu_before, own_before, seconds = backend_cpu_seconds(url), time.process_time(), []
        for text in questions:
            t = time.perf_counter()
            store.candidates(question(text))
            seconds.append(time.perf_counter() - t)
        own = round(1000 * (time.process_time() - own_before) / searches, 2)
        cpu_after = backend_cpu_seconds(url)
        cpu = None if cpu_before is None or cpu_after is None else round(1000 * (cpu_after - cpu_before) / searches, 2)
        out[mode] = {**latency_ms(seconds), "backend_cpu_ms_mean": cpu, "process_cpu_ms_mean": own}
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.keyword_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--vacuum", action="store_true", help="VACUUM the postings after the import")
    parser.add_argument("--store", default="embedded", help="postgresql://… (an empty database) or 'embedded'")
    parser.add_argument("--out", default="keyword_scale")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with store_urls(args.store) as store_for:
        result = run(store_for(), args.notes, args.searches, args.vacuum)
    rows = [[args.notes, mode, result[mode]["p50"], result[mode]["p95"], result[mode]["backend_cpu_ms_mean"],
             result[mode]["process_cpu_ms_mean"]] for mode in ("keyword", "hybrid")]
    print(f"PostgreSQL store, {args.notes} notes in one project, every query term held by ~10 % of them; "
          f"import {result['import_notes_per_s']} notes/s; vacuum {args.vacuum}; load average at start {load:.1f}\n")
    print(table(["notes", "mode", "wall p50 ms", "wall p95 ms", "backend CPU ms / question", "store process CPU ms / question"],
                rows))
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
