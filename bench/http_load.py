"""Load on the HTTP transport: many keep-alive clients, mixed writes and searches.

A fresh ``mcp-memory serve --transport http`` (default local model, FAISS store on disk)
on 127.0.0.1; ``--clients`` threads, each with its own httpx connection, send
``--requests`` JSON-RPC requests each to POST /rpc: ``memory.add_note`` with probability
``--write-ratio``, ``memory.search`` otherwise. Afterwards every note whose add_note was
answered is fetched with ``memory.get`` and compared. Any error fails the run (exit 1).

    .venv/bin/python -m bench.http_load [--clients 32] [--requests 300] [--workers N]

Prints a markdown table and writes ``bench/results/http_load.json``. The clients run on
the same machine as the server and share its cores.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.client import MCP_MEMORY, percentile, server_env, table, write_result

PROJECTS = ("bench-alpha", "bench-beta", "bench-gamma", "bench-delta")
TOPICS = (
    "retry policy for webhooks", "database migrations run at deploy", "UTC timestamps everywhere",
    "feature flags are cleaned up monthly", "the API returns problem+json errors", "tests use fakes, not mocks",
    "logging goes to stderr as JSON", "the cache expires after ten minutes",
)


class Server:
    def __init__(self, home: Path, workers: int | None, **settings: str) -> None:
        """``workers``: ``MCP_MEMORY_HTTP_WORKERS``; None leaves the server its own default."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        if workers is not None:
            settings = {"MCP_MEMORY_HTTP_WORKERS": str(workers), **settings}
        env = server_env(home, **settings)
        self.log = open(home / "server.log", "wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [MCP_MEMORY, "serve", "--transport", "http", "--port", str(self.port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, env=env, cwd=home,
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> float:
        with httpx.Client(base_url=self.url) as client:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited with {self.process.returncode}")
                try:
                    if client.get("/health").status_code == 200:
                        return time.perf_counter() - self.started
                except httpx.TransportError:
                    time.sleep(0.02)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        self.log.close()
        return code


class Worker(threading.Thread):
    def __init__(self, url: str, index: int, requests: int, write_ratio: float, start: threading.Barrier) -> None:
        super().__init__(name=f"client-{index}")
        self.url, self.index, self.requests, self.write_ratio, self.start_line = url, index, requests, write_ratio, start
        self.latencies: dict[str, list[float]] = {"memory.add_note": [], "memory.search": []}
        self.written: dict[str, str] = {}
        self.errors: list[str] = []

    def run(self) -> None:
        rng = random.Random(self.index)
        with httpx.Client(base_url=self.url, timeout=120) as client:
            self.start_line.wait()
            for n in range(self.requests):
                project = PROJECTS[(self.index + n) % len(PROJECTS)]
                topic = rng.choice(TOPICS)
                if rng.random() < self.write_ratio:
                    method = "memory.add_note"
                    text = f"client {self.index} note {n}: {topic}"
                    params: dict[str, Any] = {"projectId": project, "groupId": f"feature-{n % 3}", "text": text}
                else:
                    method, text = "memory.search", ""
                    params = {"projectId": project, "query": topic, "topK": 5}
                started = time.perf_counter()
                try:
                    response = client.post("/rpc", json={"jsonrpc": "2.0", "id": n, "method": method, "params": params})
                    reply = response.json()
                except (httpx.HTTPError, ValueError) as exc:
                    self.errors.append(f"{method}: {type(exc).__name__}: {exc}")
                    continue
                self.latencies[method].append(time.perf_counter() - started)
                if response.status_code != 200 or "result" not in reply:
                    self.errors.append(f"{method}: HTTP {response.status_code} {response.text[:200]}")
                elif method == "memory.add_note":
                    self.written[reply["result"]["id"]] = text


def verify(url: str, written: dict[str, str]) -> list[str]:
    """Problems found fetching every acknowledged note back; empty when all are there."""
    problems: list[str] = []
    ids = list(written)
    with httpx.Client(base_url=url, timeout=120) as client:
        for start in range(0, len(ids), 200):
            chunk = ids[start : start + 200]
            batch = [{"jsonrpc": "2.0", "id": i, "method": "memory.get", "params": {"id": i}} for i in chunk]
            for reply in client.post("/rpc", json=batch).json():
                if "result" not in reply:
                    problems.append(f"{reply['id']}: {reply.get('error')}")
                elif reply["result"]["text"] != written[reply["id"]]:
                    problems.append(f"{reply['id']}: text differs")
    return problems


def ms(values: list[float], q: float) -> float:
    return round(percentile([v * 1000 for v in values], q), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=300, help="requests per client")
    parser.add_argument("--write-ratio", type=float, default=0.5)
    parser.add_argument("--workers", type=int, help="MCP_MEMORY_HTTP_WORKERS of the server (default: the server's own)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="mcp-memory-http-load-") as tmp:
        home = Path(tmp)
        server = Server(home, args.workers)
        ready_s = server.wait_ready()
        with httpx.Client(base_url=server.url, timeout=120) as client:  # loads the model
            started = time.perf_counter()
            warm = client.post("/rpc", json={"jsonrpc": "2.0", "id": 0, "method": "memory.add_note",
                                              "params": {"projectId": PROJECTS[0], "groupId": "warm-up", "text": "warm-up"}})
            first_s = time.perf_counter() - started
            assert "result" in warm.json(), warm.text
        barrier = threading.Barrier(args.clients + 1)
        workers = [Worker(server.url, i, args.requests, args.write_ratio, barrier) for i in range(args.clients)]
        for worker in workers:
            worker.start()
        barrier.wait()
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - started
        load_after = os.getloadavg()[0]

        written = {k: v for w in workers for k, v in w.written.items()}
        errors = [e for w in workers for e in w.errors]
        code = server.stop()
        restarted = Server(home, args.workers)  # acknowledged writes must survive a restart
        restarted.wait_ready()
        missing = verify(restarted.url, written)
        restarted.stop()

    latencies = {m: [v for w in workers for v in w.latencies[m]] for m in ("memory.add_note", "memory.search")}
    everything = [v for values in latencies.values() for v in values]
    total = len(everything)
    rows = [
        [method, len(values), ms(values, 50), ms(values, 99), round(max(values) * 1000, 2) if values else 0.0]
        for method, values in (*latencies.items(), ("all", everything))
    ]
    print(f"\nHTTP load: {args.clients} clients x {args.requests} requests, write ratio {args.write_ratio}, "
          f"{args.workers or 'default'} server workers, {os.cpu_count()} cores\n")
    print(table(["method", "requests", "p50 ms", "p99 ms", "max ms"], rows))
    print(f"\nthroughput: {total / elapsed:.1f} requests/s over {elapsed:.1f} s; errors: {len(errors)}; "
          f"acknowledged notes: {len(written)}, missing after restart: {len(missing)}; "
          f"server ready in {ready_s:.2f} s, first add_note (model load) {first_s * 1000:.0f} ms; "
          f"exit code after SIGTERM: {code}; load average {load_before:.1f} -> {load_after:.1f}")
    for problem in (errors + missing)[:10]:
        print("  ", problem)
    path = write_result("http_load", {
        "clients": args.clients, "requests_per_client": args.requests, "write_ratio": args.write_ratio,
        "server_workers": args.workers or "default", "seconds": round(elapsed, 2), "requests": total,
        "requests_per_second": round(total / elapsed, 1), "errors": len(errors),
        "acknowledged_notes": len(written), "missing_after_restart": len(missing),
        "latency_ms": {row[0]: {"n": row[1], "p50": row[2], "p99": row[3], "max": row[4]} for row in rows},
        "server_ready_s": round(ready_s, 2), "first_add_note_ms": round(first_s * 1000), "exit_code": code,
        "load_average_1m": {"before": round(load_before, 2), "after": round(load_after, 2)},
    })
    print(f"\nwrote {path}")
    return 0 if not errors and not missing and code == 0 and total == args.clients * args.requests else 1


if __name__ == "__main__":
    sys.exit(main())
