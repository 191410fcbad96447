"""Start-up latency of ``mcp-memory serve`` over stdio, as an MCP client sees it.

    python bench/startup_bench.py [--runs 10] [--out bench/results/startup.json]

Each run spawns a fresh server (its own temporary config and data directory) and sends
what Claude Code sends: ``initialize`` at once (the request waits in the pipe while
Python starts), ``notifications/initialized``, ``tools/list``, then one
``tools/call memory_search`` with the real local model. Times are measured from just
before the process is spawned to the moment each answer line is read. The first search
includes opening the store and loading the model. Prints a markdown table of medians
(min and max beside) and writes the figures as JSON.

On Linux the server's CPU time (user + system, from ``/proc``) at each answer is recorded
too: on a busy machine wall times stretch, CPU times much less.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "startup.json"
MCP_MEMORY = str(Path(sys.executable).with_name("mcp-memory"))

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "startup-bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
SEARCH = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "memory_search", "arguments": {"query": "how do we run the tests?"}},
}
STEPS = ("initialize", "tools/list", "first memory_search")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_ms(pid: int) -> float | None:
    """User + system CPU time of a live process, in ms; None where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / CLOCK_TICKS


def one_run() -> dict[str, float]:
    """Wall ms per step, and ``<step> cpu`` ms where /proc is available."""
    with tempfile.TemporaryDirectory(prefix="mcp-memory-startup-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
        env.update(
            MCP_MEMORY_CONFIG=str(home / "config.json"),
            MCP_MEMORY_DATA_DIR=str(home / "data"),
            MCP_MEMORY_LOG_LEVEL="WARNING",
        )
        with open(home / "server.log", "wb") as log:
            started = time.perf_counter()
            process = subprocess.Popen(
                [MCP_MEMORY, "serve", "--transport", "stdio"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=home,
            )
            assert process.stdin and process.stdout
            times: dict[str, float] = {}
            try:
                for step, messages in zip(STEPS, ([INITIALIZE], [INITIALIZED, TOOLS_LIST], [SEARCH])):
                    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
                    process.stdin.flush()
                    reply = json.loads(process.stdout.readline() or b"null")
                    times[step] = (time.perf_counter() - started) * 1000
                    cpu = cpu_ms(process.pid)
                    if cpu is not None:
                        times[f"{step} cpu"] = cpu
                    if not isinstance(reply, dict) or "result" not in reply or reply["result"].get("isError"):
                        raise SystemExit(f"{step} failed: {reply}; log: {(home / 'server.log').read_text()}")
            finally:
                process.stdin.close()
                process.wait(timeout=60)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    one_run()  # warm the OS file cache (Python, the model file); not counted
    runs = [one_run() for _ in range(args.runs)]
    summary = {
        step: {
            "median_ms": round(statistics.median(r[step] for r in runs), 1),
            "min_ms": round(min(r[step] for r in runs), 1),
            "max_ms": round(max(r[step] for r in runs), 1),
        }
        for step in runs[0]
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"mcp-memory serve (stdio), {args.runs} runs, time from spawn to the answer (load average {load})\n")
    print("| answer | median ms | min ms | max ms | server CPU ms (median) |\n|---|---|---|---|---|")
    for step in STEPS:
        figures, cpu = summary[step], summary.get(f"{step} cpu", {}).get("median_ms", "n/a")
        print(f"| {step} | {figures['median_ms']} | {figures['min_ms']} | {figures['max_ms']} | {cpu} |")
    record = {
        "benchmark": "startup",
        "runs": args.runs,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": load,
        "summary": summary,
        "raw_ms": [{k: round(v, 1) for k, v in r.items()} for r in runs],
        "data_digest": {"generated_by": Path(__file__).name, "sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()},  # the requests are this module's
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
