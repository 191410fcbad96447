"""The team store at scale, end to end: a PostgreSQL data set imported with ``mcp-memory import``
(notes with their vectors), then searched through ``mcp-memory serve --transport http`` (POST /rpc).

    .venv/bin/python -m bench.team_scale [--notes 100000] [--projects 1] [--clients 1] [--searches 200]
                                         [--modes keyword,hybrid,semantic] [--rates 0,40,80]
                                         [--store embedded|postgresql://…|local]

The notes are ``bench.e2e``'s (every subject, verb, cause and fix held by about 10 % of the
notes of a project: BM25 over common terms), spread evenly over ``--projects`` projects.
Their vectors, in the default model's namespace, are synthetic: one random direction per
subject, verb, cause and fix, summed with noise and normalized, so notes alike in words are
alike in vectors, as the model's are (HNSW meets clustered data, not uniform noise); queries
are embedded by the real model. The notes are written as export files of ``--file-notes``
notes each (format ``mcp-memory-export`` 1 with vectors), each imported by ``mcp-memory
import`` as a user runs it (default ``--batch``); the import rate is notes over the summed
wall time of those commands. Then one server starts on the store; on PostgreSQL the run
waits until its store has warmed up (the keyword indexes and vector graphs of the projects
above 5,000 notes, built on a thread at start: ``server_warmed_up_after_s``, from the
server's start), every project is searched once (a smaller project's keyword index and
vectors are loaded by its first search), the run waits until the server is idle, and
``--clients`` threads, each with its own keep-alive connection, send ``--searches`` searches
in all (topK 5, a random project and question each) per mode: each client its next as soon
as the last is answered (a closed loop: the server saturated), or, per ``--rates``, at the
random times of a Poisson process offering that many searches a second over all clients, each
timed from when it was due (an open loop: what a team sending that many sees; a search that
waits for its client's last answer counts the wait). Reported per mode and rate: p50 / p95 /
p99 / max (and p50 / p95 of each fifth of the run), searches/s, errors, and the CPU time per
search of the server process and of the database backends serving it (from ``/proc``, when
PostgreSQL runs on this machine; each apart too, and this process's own): on a
machine shared with other work, wall times are mostly waiting for a core, CPU time is what
a search costs. Any error fails the run (exit 1).

``--servers N`` starts N server processes on the one store (one data folder and config),
each warmed up as above, client ``i`` sending to server ``i`` modulo N; the CPU per search
is then theirs together.

``--store local`` runs the same on the local FAISS store (imported into a temporary folder
every run; no database CPU to add). ``--imported`` searches a database that an earlier run filled with
the same ``--notes`` and ``--projects``, so a data set is loaded once and searched many times
(``--store embedded:FOLDER`` keeps the cluster in FOLDER between runs).
The 100k target: ``--notes 100000``; the 1M one: ``--notes 1000000 --projects 200
--clients 16 --modes hybrid``. Writes ``bench/results/<--out>.json``.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/team_scale.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import numpy as np

from bench.client import MCP_MEMORY, cpu_seconds, generated_data, percentile, proc_stat, server_env, settle, store_urls, table, write_result
from bench.e2e import CAUSES, FIXES, SUBJECTS, VERBS, synthetic_note, synthetic_query
from bench.http_load import Server
from bench.locomo import DEFAULT_MODEL

DIM = 384
NAMESPACE = f"local:{DEFAULT_MODEL}:{DIM}"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def project_name(i: int) -> str:
    return f"team-scale-{i:03d}"


class Vectors:
    """Each note's vector: the normalized sum of its words' directions and some noise."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.directions = {
            word: self.rng.standard_normal(DIM).astype(np.float32) for word in (*SUBJECTS, *VERBS, *CAUSES, *FIXES)
        }

    def of(self, text: str) -> np.ndarray:
        lowered = text.lower()
        x = self.rng.standard_normal(DIM).astype(np.float32) * 0.8
        for word, direction in self.directions.items():
            if word in lowered:
                x += direction
        return x / np.linalg.norm(x)


def write_export(path: Path, start: int, count: int, projects: int, rng: random.Random, vectors: Vectors) -> None:
    """Notes ``start`` … ``start + count - 1`` as an export file, note ``i`` in project ``i % projects``."""
    header = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2026-06-01T00:00:00Z", "projectId": None,
              "namespace": NAMESPACE, "vectors": True, "notes": count, "globals": 0, "links": 0}
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for i in range(start, start + count):
            note = synthetic_note(rng, i)
            created = (T0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            vector = base64.b64encode(vectors.of(note["text"]).astype("<f4").tobytes()).decode()
            out.write(json.dumps({
                "type": "note", "id": str(uuid.UUID(int=i + 1, version=4)), "projectId": project_name(i % projects),
                "groupId": note["groupId"], "title": None, "text": note["text"], "tags": note["tags"], "source": None,
                "createdAt": created, "metadata": None, "namespace": NAMESPACE, "vector": vector,
            }) + "\n")


def import_all(home: Path, store: str | None, notes: int, projects: int, file_notes: int, batch: int | None) -> dict[str, Any]:
    """Import the data set; wall seconds in all and until the HNSW build began (every note
    written; the rest is the build and the exit), CPU seconds of the command and of the database."""
    rng, vectors, seconds, writing = random.Random(notes), Vectors(notes), 0.0, 0.0
    env = server_env(home, **_store_setting(store))
    postmaster = _postmaster(store) if store else None
    cpu = {"command": 0.0, "database": 0.0, "database writing": 0.0}
    for start in range(0, notes, file_notes):
        path = home / "export.jsonl"
        count = min(file_notes, notes - start)
        write_export(path, start, count, projects, rng, vectors)
        command = [MCP_MEMORY, "import", str(path)] + ([] if batch is None else ["--batch", str(batch)])
        children, database = resource.getrusage(resource.RUSAGE_CHILDREN), _cluster_cpu(postmaster)
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        written = _written_at(process, store, postmaster) if store else None
        if process.wait() != 0:
            raise RuntimeError(f"mcp-memory import failed with exit code {process.returncode}")
        seconds += time.perf_counter() - started
        done = _cluster_cpu(postmaster)
        writing += (written[0] if written else time.perf_counter()) - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu["command"] += after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        cpu["database"] += done - database
        cpu["database writing"] += (written[1] if written else done) - database
        path.unlink()
        print(f"  imported {start + count}/{notes}: {(start + count) / seconds:.0f} notes/s", file=sys.stderr)
    return {"notes": notes, "seconds": round(seconds, 1), "notes_per_s": round(notes / seconds, 1),
            "writing_s": round(writing, 1), "written_per_s": round(notes / writing, 1),
            "command_cpu_us_per_note": round(1e6 * cpu["command"] / notes),
            "database_cpu_us_per_note": round(1e6 * cpu["database"] / notes) if postmaster else None,
            "database_cpu_us_per_note_writing": round(1e6 * cpu["database writing"] / notes) if postmaster else None,
            "batch": batch or "default", "file_notes": file_notes}


def _written_at(process: subprocess.Popen, store: str, postmaster: int | None) -> tuple[float, float] | None:
    """When the command started building an HNSW index (every note written by then), seen
    in ``pg_stat_progress_create_index`` while it runs, with the cluster's CPU seconds then;
    None if it built none."""
    import psycopg

    with psycopg.connect(store, autocommit=True) as conn:
        while process.poll() is None:
            try:  # not the index a new namespace gets, on an empty table, before any note
                if conn.execute("""SELECT 1 FROM pg_stat_progress_create_index
                                   WHERE datname = current_database() AND EXISTS (SELECT 1 FROM notes)""").fetchone():
                    return time.perf_counter(), _cluster_cpu(postmaster)
            except psycopg.errors.UndefinedTable:
                pass  # the schema is not created yet
            time.sleep(0.2)
    return None


def _postmaster(store: str) -> int | None:
    """The store's postmaster when it runs on this machine (the parent of its checkpointer)."""
    import psycopg

    with psycopg.connect(store, autocommit=True) as conn:
        found = conn.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").fetchone()
    try:
        status = Path(f"/proc/{found[0]}/status").read_text() if found else ""
    except OSError:
        return None
    parent = [line.split()[1] for line in status.splitlines() if line.startswith("PPid:")]
    return int(parent[0]) if parent else None


def _cluster_cpu(postmaster: int | None) -> float:
    """CPU seconds of the cluster so far: the postmaster and its live children, and the
    backends it has reaped (its cutime and cstime)."""
    if postmaster is None:
        return 0.0
    fields = proc_stat(postmaster)
    reaped = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK") if fields else 0.0
    return cpu_seconds([postmaster, *_children(postmaster)]) + reaped


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rpc(client: httpx.Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = client.post("/rpc", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    body = reply.json()
    if reply.status_code != 200 or "result" not in body:
        raise RuntimeError(f"HTTP {reply.status_code}: {reply.text[:300]}")
    return body["result"]


def backend_pids(store: str | None) -> list[int]:
    """The client backends of the store's database, when PostgreSQL runs on this machine
    (none for the local store)."""
    import psycopg

    if store is None:
        return []
    with psycopg.connect(store, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT pid FROM pg_stat_activity WHERE datname = current_database()
               AND backend_type = 'client backend' AND pid <> pg_backend_pid()"""
        ).fetchall()
    return [pid for (pid,) in rows]


def search_load(
    urls: list[str], mode: str, projects: int, clients: int, searches: int, seed: int, server_pids: list[int],
    store: str | None, asked: set[str], rate: float = 0.0,
) -> dict[str, Any]:
    """``searches`` over ``clients`` threads. With no ``rate``, each client sends its next search
    as soon as the last is answered (closed loop: the server saturated, latency the queue
    of ``clients``); with a ``rate`` (searches/s offered, over all clients), each client sends
    at the random times of a Poisson process of ``rate / clients`` a second, and a search is
    timed from when it was due, so one that waits for its client's last answer counts the
    wait (open loop: what a team sending that many searches a second sees). Client ``i`` sends
    to ``urls[i % len(urls)]``, a server each."""
    latencies: list[tuple[float, float]] = []  # (when it began, seconds)
    errors: list[str] = []
    lock = threading.Lock()
    again = 0  # searches whose query is in ``asked``: the texts the servers embedded before (the warm-up's too)
    barrier = threading.Barrier(clients + 1)

    def client_run(index: int) -> None:
        nonlocal again
        rng = random.Random(seed * 1000 + index)
        mine: list[tuple[float, float]] = []
        with httpx.Client(base_url=urls[index % len(urls)], timeout=120) as client:
            barrier.wait()
            due = time.perf_counter()
            for _ in range(searches // clients):
                params = {"projectId": project_name(rng.randrange(projects)), "query": synthetic_query(rng),
                          "mode": mode, "topK": 5}
                if mode != "keyword":  # a query embedded before: its vector may be kept (Embedding.QUERIES_KEPT)
                    with lock:
                        again += params["query"] in asked
                        asked.add(params["query"])
                if rate:
                    due += rng.expovariate(rate / clients)
                    time.sleep(max(0.0, due - time.perf_counter()))
                started = due if rate else time.perf_counter()
                try:
                    rpc(client, "memory.search", params)
                except (httpx.HTTPError, ValueError, RuntimeError) as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                mine.append((started, time.perf_counter() - started))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client_run, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    backends = backend_pids(store)  # taken before the clients go: a busy machine may not run this thread again soon
    server_before, backends_before, clients_before = cpu_seconds(server_pids), cpu_seconds(backends), _own_cpu()
    started = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    clients = _own_cpu() - clients_before
    opened = set(backend_pids(store)) - set(backends)  # connections the pool opened meanwhile
    server = cpu_seconds(server_pids) - server_before
    database = cpu_seconds(backends) + cpu_seconds(list(opened)) - backends_before
    cpu = server + database
    latencies.sort()
    ms = [v * 1000 for _began, v in latencies]
    fifth = max(1, len(ms) // 5)
    return {
        "n": len(ms), "errors": len(errors), "error_samples": errors[:5],
        **{f"p{q}": round(percentile(ms, q), 2) if ms else None for q in (50, 95, 99)},
        "max": round(max(ms), 2) if ms else None, "per_s": round(len(ms) / elapsed, 1), "offered_per_s": rate or None,
        "cpu_ms_per_search": round(1000 * cpu / max(1, len(ms)), 2),
        # of which the server process's and the database backends'; and this process's (the
        # clients': not counted above, but taking a core's share on the same machine)
        "server_cpu_ms_per_search": round(1000 * server / max(1, len(ms)), 2),
        "database_cpu_ms_per_search": round(1000 * database / max(1, len(ms)), 2),
        "clients_cpu_ms_per_search": round(1000 * clients / max(1, len(ms)), 2),
        # the share of searches whose query text was embedded before in the run: at most that
        # many found its vector kept (the synthetic queries repeat; keyword search embeds none)
        "asked_before_share": None if mode == "keyword" else round(again / max(1, searches // clients * clients), 3),
        # p50 / p95 of each fifth of the run in the order the searches began: a server still
        # warming shows as a first fifth slower than the others
        "p50_p95_by_fifth": [[round(percentile(part, 50), 2), round(percentile(part, 95), 2)]
                             for part in (ms[i:i + fifth] for i in range(0, fifth * 5, fifth)) if part],
    }


def _own_cpu() -> float:
    """CPU seconds of this process so far (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(store: str | None, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp-memory-team-scale-") as tmp:
        home = Path(tmp)
        if args.imported:  # the store holds this data set from an earlier run
            imported = {"notes": args.notes, "seconds": None, "notes_per_s": None, "batch": "already imported"}
        else:
            imported = import_all(home, store, args.notes, args.projects, args.file_notes or args.notes, args.batch)
        # --servers: each its own log (its home), all one data folder and config
        homes = [home, *(home / f"server-{n}" for n in range(1, args.servers))]
        shared = {"MCP_MEMORY_DATA_DIR": str(home / "data"), "MCP_MEMORY_CONFIG": str(home / "config.json")}
        servers: list[Server] = []
        try:
            for server_home in homes:
                server_home.mkdir(exist_ok=True)
                # at INFO: the store's line saying it has warmed up (no line per request at that level)
                servers.append(Server(server_home, args.workers, **_store_setting(store), **shared,
                                      MCP_MEMORY_LOG_LEVEL="INFO", MCP_MEMORY_LOCAL_PRODUCTS=args.local_products))
            warmed_s: list[float | None] = []
            warm_s, settle_s = 0.0, 0.0
            asked: set[str] = set()  # every query text embedded in the run so far, by any server
            for server_home, server in zip(homes, servers):
                server.wait_ready()
                warmed_s.append(None if store is None else warmed_up(server_home / "server.log", server, args.warm_limit))
                warm_rng = random.Random(0)
                with httpx.Client(base_url=server.url, timeout=600) as client:
                    started = time.perf_counter()
                    for p in range(args.projects):  # builds each project's keyword index in this server
                        query = synthetic_query(warm_rng)
                        asked.add(query)
                        rpc(client, "memory.search", {"projectId": project_name(p), "query": query, "mode": "hybrid"})
                    warm_s += time.perf_counter() - started
            for server in servers:
                settle_s += settle(server.process.pid)
            rss = [_rss_mib(server.process.pid) for server in servers]
            urls, pids = [server.url for server in servers], [server.process.pid for server in servers]
            searched = {_label(mode, rate): search_load(urls, mode, args.projects, args.clients, args.searches, i,
                                                        pids, store, asked, rate)
                        for i, mode in enumerate(args.modes.split(",")) for rate in args.rates}
        finally:
            codes = [server.stop() for server in servers]
    return {"import": imported, "server_warmed_up_after_s": _per_server(warmed_s),
            "first_search_every_project_s": round(warm_s, 2), "server_settled_after_s": settle_s,
            "server_rss_mib_after_warm": _per_server(rss),
            "search": searched, "server_exit_code": max(codes, key=abs)}


def _per_server(values: list[Any]) -> Any:
    """A figure of each server: the one value for one server (the result's form before
    ``--servers``), else the list."""
    return values[0] if len(values) == 1 else values


def _rates(text: str) -> list[float]:
    """``--rates``: searches a second, each 0 (as fast as answered) or a finite positive number."""
    try:
        rates = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}") from None
    if any(not math.isfinite(rate) or rate < 0 for rate in rates):
        raise argparse.ArgumentTypeError(f"each rate must be 0 or a finite positive number: {text!r}")
    return rates


def _label(mode: str, rate: float) -> str:
    return f"{mode} at {rate:g}/s" if rate else mode


def warmed_up(log: Path, server: Server, limit: float = 600.0) -> float | None:
    """Wait until the server's store says it has warmed up (``postgres_store.warmed`` in its
    log: the keyword indexes and graphs of its large projects built before any search), at
    most ``limit`` seconds; seconds from the server's start, None when it never said so."""
    while time.perf_counter() - server.started < limit:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited with {server.process.returncode}")
        if b"postgres_store.warmed" in log.read_bytes():
            return round(time.perf_counter() - server.started, 1)
        time.sleep(0.2)
    return None


def _store_setting(store: str | None) -> dict[str, str]:
    """The server's and the import's ``MCP_MEMORY_STORE``: none for the local store."""
    return {} if store is None else {"MCP_MEMORY_STORE": store}


def _rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.team_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--projects", type=int, default=1)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--searches", type=int, default=200, help="searches per mode, over all clients")
    parser.add_argument("--modes", default="keyword,hybrid,semantic")
    parser.add_argument("--rates", default="0", type=_rates,
                        help="searches/s offered over all clients, one run per rate and mode (0: each client sends "
                        "its next as soon as the last is answered); e.g. 0,40,80")
    parser.add_argument("--file-notes", type=int, help="notes per export file imported (default: all in one file, "
                        "so that the HNSW index is built once, at the end)")
    parser.add_argument("--batch", type=int, help="mcp-memory import --batch (default: the command's)")
    parser.add_argument("--servers", type=int, default=1,
                        help="server processes on the one store, each client sending to one of them (its index modulo this)")
    parser.add_argument("--workers", type=int, help="MCP_MEMORY_HTTP_WORKERS of the server (default: the server's own)")
    parser.add_argument("--local-products", choices=("auto", "int8", "float"), default="auto",
                        help="MCP_MEMORY_LOCAL_PRODUCTS of the server (how the model embedding the queries multiplies)")
    parser.add_argument("--store", default="embedded",
                        help="postgresql://… (an empty database), 'embedded' or 'embedded:FOLDER' (a cluster kept there), "
                             "or 'local' (the FAISS store in a temporary folder, imported every run)")
    parser.add_argument("--imported", action="store_true",
                        help="the --store database already holds this data set (same --notes and --projects): search it")
    parser.add_argument("--warm-limit", type=float, default=600.0,
                        help="seconds to wait at most for the server's store to say it has warmed up (0: an older "
                        "server that does not warm up)")
    parser.add_argument("--out", default="team_scale")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    if args.servers < 1:
        parser.error("--servers must be at least 1")
    if args.store == "local" and args.imported:
        parser.error("--imported needs a PostgreSQL --store: the local store is imported every run")
    with store_urls(None if args.store == "local" else args.store) as store_for:
        result = run(store_for(), args)
    kind = "local" if args.store == "local" else "postgresql"
    print(f"\n{'Local' if kind == 'local' else 'PostgreSQL'} store through HTTP /rpc: {args.notes} notes over {args.projects} projects, "
          f"{args.clients} concurrent clients, {args.servers} server process(es); import {result['import']['notes_per_s']} notes/s "
          f"(mcp-memory import, batch {result['import']['batch']}; {result['import'].get('written_per_s')} notes/s "
          f"until the last was written, then the HNSW build; CPU per note: command "
          f"{result['import'].get('command_cpu_us_per_note')} µs, database {result['import'].get('database_cpu_us_per_note')} µs, "
          f"of which {result['import'].get('database_cpu_us_per_note_writing')} µs before the HNSW build); "
          f"load average at start {load:.1f}\n")
    rows = [[mode, r["n"], r["p50"], r["p95"], r["p99"], r["max"], r["per_s"], r["cpu_ms_per_search"], r["server_cpu_ms_per_search"],
             r["database_cpu_ms_per_search"], r["clients_cpu_ms_per_search"], r["errors"]] for mode, r in result["search"].items()]
    print(table(["mode", "searches", "p50 ms", "p95 ms", "p99 ms", "max ms", "searches/s", "server + database CPU ms / search",
                 "server", "database", "clients (this process)", "errors"], rows))
    print(f"\nserver warmed up after {result['server_warmed_up_after_s']} s; first search of every project "
          f"{result['first_search_every_project_s']} s; idle {result['server_settled_after_s']} s after")
    again = {mode: r["asked_before_share"] for mode, r in result["search"].items() if r["asked_before_share"] is not None}
    if again:  # the synthetic queries repeat, and a server keeps recent queries' vectors
        print("searches whose query was embedded before in the run (at most that share found its vector kept): "
              + ", ".join(f"{mode} {share:.0%}" for mode, share in again.items()))
    path = write_result(args.out, {"store": kind, "notes": args.notes, "projects": args.projects, "clients": args.clients,
                                   "servers": args.servers, "server_workers": args.workers or "default", "local_products": args.local_products,
                                   "load_average_at_start": load, **result}, generated_data(__file__))
    print(f"\nwritten: {path}")
    errors = sum(r["errors"] for r in result["search"].values())
    return 0 if errors == 0 and result["server_exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
