"""Where a search of the PostgreSQL store spends its time: each step of ``memory.search`` (hybrid
and keyword) timed on its own, and the plan of every statement it runs.

    .venv/bin/python -m bench.search_breakdown --store postgresql://… [--project team-scale-000] [--searches 100]

Runs against a store already holding a data set (``bench.team_scale --keep …`` leaves one),
in this process, with the real local model embedding each question. Per step, the wall time
and this process's CPU time, median over ``--searches`` questions (``bench.e2e``'s), the
store asked exactly as ``PostgresNoteStore.candidates`` asks it, step by step:

* ``embed``: the model embedding the question;
* ``keyword``: the store's whole keyword step (``_keyword_search``: the change-feed query, the
  filter, the in-process BM25), and the BM25 alone;
* ``statement``: the one statement of the candidates (semantic, spread, keyword join,
  neighbours, docs), and each of its parts run alone; and the statement a server holding the
  project's graph runs (``vector_graph``: the semantic candidates given), after the walk;
* ``decode``: the rows to ``Candidates``;
* ``store.candidates``: the store's whole call as a hybrid search made it with every
  candidate's neighbours (keyword step, the project's vectors held in this process where they
  serve, the statement, decoding), and as it makes it now: without neighbours, then
  ``store.neighbours`` of ten seeds (the semantic and keyword candidates taken in turn:
  about the cost of the ten best fused), and that call alone;
* ``newer-first vectors``: the read of the best 25 results' vectors.

Then ``EXPLAIN (ANALYZE, BUFFERS)`` of each statement for one question, and with
``pg_stat_statements`` in the database, its per-statement figures. Writes
``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, table, write_result
from bench.e2e import synthetic_query
from bench.team_scale import backend_pids, cpu_seconds

DEPTH = 30
SAMPLE = 1024


class Spans:
    """Wall and CPU milliseconds per named step, over many questions."""

    def __init__(self, backends: list[int] | None = None) -> None:
        self.backends = backends or []  # the database backends' pids, when it runs on this machine
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.backend_cpu: dict[str, float] = {}

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        wall, cpu, backend = time.perf_counter(), time.thread_time(), cpu_seconds(self.backends)
        yield
        self.wall.setdefault(name, []).append(1000 * (time.perf_counter() - wall))
        self.cpu.setdefault(name, []).append(1000 * (time.thread_time() - cpu))
        spent = cpu_seconds(self.backends) - backend
        self.backend_cpu[name] = self.backend_cpu.get(name, 0.0) + 1000 * spent

    def rows(self) -> list[list[Any]]:
        """Per step: wall p50 and p95, this process's CPU p50, and the backend's CPU mean (its
        clock counts in ticks of 10 ms: only a mean over many questions says something)."""
        return [[name, round(statistics.median(w), 2), round(statistics.quantiles(w, n=20)[-1], 2) if len(w) > 1 else None,
                 round(statistics.median(self.cpu[name]), 2),
                 round(self.backend_cpu[name] / len(w), 2) if self.backends else None] for name, w in self.wall.items()]


def run(url: str, project: str, searches: int, seed: int) -> dict[str, Any]:
    import psycopg

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore, queries
    from local_mcp_memory.adapters.postgres_store.store import _answer
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.application.ranking import CONTEXT_SEEDS
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace, NoteId
    from local_mcp_memory.domain.note import NoteFilter

    embedder = LocalOnnxEmbedder(threads=2)
    namespace = Namespace("local", LocalOnnxEmbedder.MODEL, LocalOnnxEmbedder.DIM)
    store = PostgresNoteStore(url, pool_size=2, vector_graphs=True)
    rng = random.Random(seed)
    questions = [synthetic_query(rng) for _ in range(searches)]
    spans = Spans()
    plans: dict[str, str] = {}

    def parts(conn: psycopg.Connection, where: NoteFilter, q: Any, found: list[tuple[str, float]], space: int,
              given: list[str]) -> dict[str, tuple[str, dict]]:
        """The statement whole and each part alone, with its parameters."""
        out = {}
        for name, flags in {
            "statement (whole)": dict(semantic=True, keyword=bool(found), spread=True, neighbours=True),
            "  semantic alone": dict(semantic=True, keyword=False, spread=False, neighbours=False),
            "  spread alone": dict(semantic=False, keyword=False, spread=True, neighbours=False),
            "  keyword join + docs": dict(semantic=False, keyword=bool(found), spread=False, neighbours=False),
            "  semantic + keyword + neighbours + docs": dict(semantic=True, keyword=bool(found), spread=False, neighbours=True),
            "statement with the semantic candidates given (graph)": dict(semantic=False, given=True, keyword=bool(found),
                                                                         spread=False, neighbours=True, large=True),
            "  given + keyword + docs, no neighbours": dict(semantic=False, given=True, keyword=bool(found), spread=False,
                                                             neighbours=False, large=True),
        }.items():
            params: dict[str, Any] = {"q": q, "depth": DEPTH, "sample": SAMPLE, "kw_ids": [k for k, _ in found],
                                      "kw_scores": [s for _, s in found], "given": given}
            out[name] = (queries.candidates_sql(where, space=space, dim=namespace.dim, params=params, **flags), params)
        return out

    with store._pool.connection() as conn:
        space = store._known_space(conn, namespace)
        for i, text in enumerate([questions[0]] * 3 + questions):
            record = i >= 3
            if i == 3:  # every backend of this process (the pool's, opened by now) and only those
                spans.backends = backend_pids(url)
            s = spans if record else Spans()
            where = NoteFilter(CanonicalProjectId(project), now=datetime.now(timezone.utc))
            with s.span("embed"):
                q = embedder.embed([text], "query")[0]
            if project not in store._keywords._held:
                store._keywords.search(conn, project, "warm", 1, None)
            with s.span("keyword: catch-up, filter, BM25"):
                keyword, _notes = store._keyword_search(conn, CandidateQuery(where, DEPTH, text=text))
            found = [] if keyword is None else keyword.notes
            held = store._keywords._held[project]
            with s.span("keyword BM25 alone"):
                held.index.search(project, text, DEPTH, None)
            if i == 0:  # the project's graph, built on a thread after its first search
                store.candidates(CandidateQuery(where, DEPTH, namespace, q, text, SAMPLE, neighbours=True))
                store.vector_graphs_built()
            graph = store._vectors.get(conn, project, space, held.seen, None)
            with s.span("graph walk (nearest, in this process)"):
                given = [c.id for c in graph.nearest(q, DEPTH, keyword.hidden or frozenset())] if graph is not None else []
            for name, (sql, params) in parts(conn, where, q, found, space, given).items():
                with s.span(name):
                    rows = conn.execute(sql, params).fetchall()
                if record and name.startswith("statement with") and "statement, semantic given" not in plans:
                    plans["statement, semantic given"] = _explain(conn, sql, params)
                if name == "statement (whole)":
                    with s.span("decode"):
                        answer = _answer(rows, True)
                    if record and "statement" not in plans:
                        plans["statement"] = _explain(conn, sql, params)
            with s.span("store.candidates with every candidate's neighbours (as hybrid search asked before)"):
                store.candidates(CandidateQuery(where, DEPTH, namespace, q, text, SAMPLE, neighbours=True))
            with s.span("store.candidates, then store.neighbours of ten seeds (as hybrid search asks now)"):
                first = store.candidates(CandidateQuery(where, DEPTH, namespace, q, text, SAMPLE))
                seeds = list(dict.fromkeys(c.id for pair in zip(first.semantic, first.keyword) for c in pair))[:CONTEXT_SEEDS]
                store.neighbours(seeds, where, namespace, q)
            with s.span("  store.neighbours of ten seeds alone"):
                store.neighbours(seeds, where, namespace, q)
            window = [NoteId(c.id) for c in (answer.semantic + answer.keyword)[:25]]
            with s.span("newer-first vectors"):
                store.vectors(window, namespace)
            if record and "catch-up" not in plans:
                plans["catch-up"] = _explain(conn, _catch_up_sql(), {"project": project, "seen": held.seen})
                params = {}
                plans["hidden"] = _explain(conn, queries.hidden_sql(where, params), params)
                plans["vectors"] = _explain(
                    conn, """SELECT v.note, v.embedding FROM vectors v JOIN namespaces ns ON ns.id = v.space
                             WHERE v.note = ANY(%s) AND ns.name = %s""", ([w.value for w in window], str(namespace)))
    store.close()
    return {"project": project, "searches": searches, "spans": spans.rows(),
            "plans": plans}


def _catch_up_sql() -> str:
    from local_mcp_memory.adapters.postgres_store.keywords import CHANGES_SQL

    return CHANGES_SQL


def _explain(conn: Any, sql: str, params: Any) -> str:
    rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, params).fetchall()
    return re.sub(r"'\[[^\]]*\]'::vector", "'<query vector>'::vector", "\n".join(row[0] for row in rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.search_breakdown", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="postgresql://… holding a data set (bench.team_scale --keep)")
    parser.add_argument("--project", default="team-scale-000")
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--plans", action="store_true", help="print the plans too")
    parser.add_argument("--out", default="search_breakdown")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    result = run(args.store, args.project, args.searches, args.seed)
    print(f"PostgreSQL store, project {args.project}, {args.searches} hybrid questions as memory.search asks them; "
          f"load average at start {load:.1f}\n")
    print(table(["step", "wall p50 ms", "wall p95 ms", "this process CPU p50 ms", "database backend CPU mean ms"],
                result["spans"]))
    if args.plans:
        for name, plan in result["plans"].items():
            print(f"\n== {name}\n{plan}")
    path = write_result(args.out, {"load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
