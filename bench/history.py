"""Histories of concurrent writers, checked: do servers sharing one store ever undo an
acknowledged write?

    python -m bench.history [--store local|embedded|postgresql://…] [--transport http|stdio]
                            [--histories 3] [--clients 4] [--servers 2] [--ops 60] [--seed 1]

Each history: fresh data (a data directory, or a fresh database), ``--servers`` real
``mcp-memory serve`` processes on it (``http``: the clients share them, round robin;
``stdio``: every client runs a server of its own), a few seed notes, then ``--clients``
client processes at once, each running ``--ops`` seeded random operations — add, update
(text, or tags and title), delete, link, unlink, upsert_global — on notes they share,
recording each one's invoke and complete instants and answer. When all are done the final
state is read and checked against the history (``bench.history_check``); then every server
is stopped, one is started again on the same data, and the state it reads is checked too,
and must equal the one read before.

Prints a table (histories, operations, acknowledged, anomalies, per store and transport) and
writes ``bench/results/history.json`` (``--out``) with every anomaly found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.client import MCP_MEMORY, StdioClient, generated_data, server_env, store_urls, table, write_result
from bench.history_check import check

PROJECT = "history-project"
RELATIONS = ("relates_to", "follows")
GLOBAL_KEYS = ("global.history.a", "global.history.b", "global.history.c")
SEEDS = 6
MIX = {"add": 12, "readd": 4, "text": 18, "fields": 18, "delete": 8, "link": 14, "unlink": 10, "global": 10}


# ------------------------------------------------------------------ talking to a server


class HttpRpc:
    def __init__(self, url: str) -> None:
        self._client = httpx.Client(base_url=url, timeout=120)
        self._id = 0

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        reply = self._client.post("/rpc", json={"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        return reply.json()

    def close(self) -> None:
        self._client.close()


class StdioRpc:
    def __init__(self, home: Path, store: str | None) -> None:
        self._server = StdioClient(home, **_store_env(store))
        self._id = 0

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        return self._server._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})

    def close(self) -> None:
        self._server.close()


def _store_env(store: str | None) -> dict[str, str]:
    return {} if store is None else {"MCP_MEMORY_STORE": store}


class HttpServers:
    """``count`` HTTP servers on the data of ``home`` (or the database ``store``)."""

    def __init__(self, home: Path, store: str | None, count: int) -> None:
        self.urls: list[str] = []
        self._processes: list[subprocess.Popen] = []
        for i in range(count):
            port = _free_port()
            log = open(home / f"server-{len(self._processes)}-{port}.log", "ab")
            self._processes.append(subprocess.Popen(
                [MCP_MEMORY, "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=server_env(home, **_store_env(store)), cwd=home,
            ))  # fmt: skip
            log.close()
            self.urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(self.urls, self._processes):
            _wait_healthy(url, process)

    def stop(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self._processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    """Until ``/health`` answers 200: the event a client may start on, not a delay."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=5) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the server at {url} exited with {process.returncode}")
            try:
                if client.get("/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise RuntimeError(f"the server at {url} did not become healthy within {timeout} s")


# ------------------------------------------------------------------ one client


def run_client(call: Callable[[str, dict[str, Any]], dict[str, Any]], client: int, seed: int, ops: int, shared: list[str]) -> list[dict]:
    """``ops`` random operations on the ``shared`` notes and the ones this client adds; the
    history of this client."""
    rng = random.Random(seed * 1_000 + client)
    ids, history = list(shared), []
    for n in range(ops):
        kind = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        unique = f"c{client}n{n}"
        if kind in ("add", "readd"):
            text = f"history seed note {rng.randrange(SEEDS)}" if kind == "readd" else f"note {unique} about {rng.choice(['ports', 'locks', 'queues'])}"
            op = ("add", "memory.add_note", {"text": text, "tags": [f"t{unique}"], "title": f"title {unique}"})
        elif kind == "text":
            op = ("update", "memory.update", {"id": rng.choice(ids), "patch": {"text": f"text {unique} rewritten"}})
        elif kind == "fields":
            op = ("update", "memory.update", {"id": rng.choice(ids), "patch": {"tags": [f"t{unique}"], "title": f"title {unique}"}})
        elif kind == "delete":
            op = ("delete", "memory.delete", {"id": rng.choice(ids)})
        elif kind in ("link", "unlink"):
            source, target = rng.sample(ids, 2)
            op = (kind, f"memory.{kind}", {"from": source, "to": target, "relation": rng.choice(RELATIONS)})
        else:
            op = ("global", "memory.upsert_global", {"key": rng.choice(GLOBAL_KEYS), "value": {"by": unique}})
        name, method, args = op
        record = {"client": client, "op": name, "args": args, "invoke": time.monotonic_ns()}
        try:
            reply = call(method, _params(name, args))
        except (httpx.HTTPError, OSError, RuntimeError, ValueError) as exc:
            record.update(complete=time.monotonic_ns(), result=None, error="transport", detail=str(exc))
        else:
            record.update(complete=time.monotonic_ns(), result=reply.get("result"), error=reply.get("error", {}).get("code"))
            if "error" in reply:
                record["detail"] = reply["error"].get("message")
        history.append(record)
        if name == "add" and record["error"] is None:
            ids.append(record["result"]["id"])
    return history


def _params(name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "add":
        return {"projectId": PROJECT, "groupId": "history", **args}
    if name in ("link", "unlink"):
        return {"fromId": args["from"], "toId": args["to"], "relation": args["relation"]}
    if name == "global":
        return {"projectId": PROJECT, **args}
    return args


def read_state(call: Callable[[str, dict[str, Any]], dict[str, Any]], history: list[dict]) -> dict[str, Any]:
    ids = {op["args"]["id"] for op in history if "id" in op["args"]}
    ids |= {op["result"]["id"] for op in history if op["op"] == "add" and op["result"]}
    notes: dict[str, Any] = {}
    links: list[list[str]] = []
    for note_id in sorted(ids):
        got = call("memory.get", {"id": note_id})
        if "error" in got:
            if got["error"]["code"] != -32004:
                raise RuntimeError(f"memory.get {note_id}: {got['error']}")
            notes[note_id] = None
            continue
        notes[note_id] = {field: got["result"][field] for field in ("text", "tags", "title")}
        related = call("memory.related", {"id": note_id})["result"]["items"]
        links += [[note_id, item["id"], item["relation"]] for item in related if item["direction"] == "out"]
    found = {key: call("memory.get_global", {"projectId": PROJECT, "key": key})["result"] for key in GLOBAL_KEYS}
    return {"notes": notes, "links": sorted(links), "globals": {k: g["value"] if g["found"] else None for k, g in found.items()}}


# ------------------------------------------------------------------ one history


def run_history(store: str | None, transport: str, *, clients: int, servers: int, ops: int, seed: int) -> dict[str, Any]:
    """One history on fresh data: its operations, the anomalies of the state read by the
    servers that ran it and of the state read after a restart."""
    home = Path(tempfile.mkdtemp(prefix="mcp-memory-history-"))
    try:
        with _serving(home, store, transport, servers) as url:
            setup = _connect(url(0), home, store)
            history = [_seed_add(setup, i) for i in range(SEEDS)]
            shared = [op["result"]["id"] for op in history]
            workers = [_client_process(home, store, i, seed, ops, shared, url(i)) for i in range(clients)]
            for i, worker in enumerate(workers):
                if worker.wait(timeout=1800) != 0:
                    raise RuntimeError(f"client {i} failed: {(home / f'client-{i}.err').read_text()[-2000:]}")
                history += json.loads((home / f"client-{i}.json").read_text())
            before = read_state(setup, history)
            setup.close()
        with _serving(home, store, transport, 1) as url:
            reader = _connect(url(0), home, store)
            after = read_state(reader, history)
            reader.close()
    except BaseException:
        print(f"the history failed; its servers' logs are kept in {home}", file=sys.stderr)
        raise
    shutil.rmtree(home, ignore_errors=True)
    anomalies = check(history, before) + [dict(a, after_restart=True) for a in check(history, after)]
    if before != after:
        anomalies.append({"kind": "changed_by_restart", "subject": None})
    return {"ops": len(history), "acknowledged": sum(op["error"] is None for op in history), "anomalies": anomalies}


def _seed_add(call, i: int) -> dict[str, Any]:
    args = {"text": f"history seed note {i}", "tags": [f"seed{i}"], "title": f"seed {i}"}
    record = {"client": -1, "op": "add", "args": args, "invoke": time.monotonic_ns()}
    reply = call("memory.add_note", _params("add", args))
    record.update(complete=time.monotonic_ns(), result=reply["result"], error=None)
    return record


@contextmanager
def _serving(home: Path, store: str | None, transport: str, count: int) -> Iterator[Callable[[int], str | None]]:
    """``url(i)``: the URL of HTTP server ``i`` (modulo ``count``), or None with stdio (each
    caller runs a stdio server of its own on the data)."""
    if transport == "stdio":
        yield lambda i: None
        return
    servers = HttpServers(home, store, count)
    try:
        yield lambda i: servers.urls[i % len(servers.urls)]
    finally:
        servers.stop()


def _connect(url: str | None, home: Path, store: str | None):
    return HttpRpc(url) if url else StdioRpc(home, store)


def _client_process(home: Path, store: str | None, client: int, seed: int, ops: int, shared: list[str], url: str | None) -> subprocess.Popen:
    spec = {"client": client, "seed": seed, "ops": ops, "shared": shared, "out": str(home / f"client-{client}.json"),
            "url": url, "home": str(home), "store": store}
    with open(home / f"client-{client}.err", "wb") as err:
        return subprocess.Popen([sys.executable, "-m", "bench.history", "client", json.dumps(spec)], stderr=err,
                                stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)


def client_main(spec: dict[str, Any]) -> int:
    call = _connect(spec["url"], Path(spec["home"]), spec["store"])
    try:
        history = run_client(call, spec["client"], spec["seed"], spec["ops"], spec["shared"])
    finally:
        call.close()
    Path(spec["out"]).write_text(json.dumps(history))
    return 0


# ------------------------------------------------------------------ the benchmark


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["client"]:
        return client_main(json.loads(argv[1]))
    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", action="append", help="local, embedded or a postgresql:// URL (repeatable; default: local and embedded)")
    parser.add_argument("--transport", action="append", choices=("http", "stdio"), help="repeatable; default: both")
    parser.add_argument("--histories", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--ops", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="history")
    args = parser.parse_args(argv)
    rows, runs = [], []
    for store in args.store or ["local", "embedded"]:
        with store_urls(None if store == "local" else store) as store_for:
            for transport in args.transport or ["http", "stdio"]:
                found = [run_history(store_for(), transport, clients=args.clients, servers=args.servers, ops=args.ops, seed=args.seed + h)
                         for h in range(args.histories)]
                kind = "local" if store == "local" else "postgresql"
                anomalies = [a for run in found for a in run["anomalies"]]
                rows.append([kind, transport, len(found), sum(r["ops"] for r in found), sum(r["acknowledged"] for r in found), len(anomalies)])
                runs.append({"store": kind, "transport": transport, "histories": found})
    print(f"Histories of {args.clients} clients x {args.ops} operations on shared notes, {args.servers} servers "
          f"(http) or one per client (stdio); load average {os.getloadavg()[0]:.1f}\n")
    print(table(["store", "transport", "histories checked", "operations", "acknowledged", "anomalies"], rows))
    path = write_result(args.out, {"settings": vars(args), "runs": runs}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 1 if any(row[-1] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
