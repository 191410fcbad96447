"""The Claude Code hooks measured: latency, characters added per prompt, the service's memory,
capture of a long session.

    python -m bench.hooks [--cold 5] [--warm 30] [--turns 5000] [--out bench/results/hooks.json]

Every hook is a real ``mcp-memory hook <event>`` process fed the JSON Claude Code gives it,
timed from spawn to exit (what Claude Code waits for), on a store holding the 30 notes of
``bench/recall_prompts.json`` (a web shop's project memory) with the real local model.

- cold: no service running (killed before each run): the hook starts it and waits for it;
- warm: the service is up and has answered once (with the hook process's own CPU time);
- in-process: ``MCP_MEMORY_SERVICE_IDLE=0``, the hook does the work itself (the fallback);
- characters added: recall's output for each of the set's 61 prompts (31 related to a note,
  30 unrelated), with the share of unrelated prompts that added nothing;
- the service's resident memory (VmRSS, VmHWM) after the runs;
- capture of a ``--turns`` turn transcript (``bench.claude_sessions.long_session``) by a
  warm ``hook stop``, and the digest's size.

Prints a markdown table and writes the figures as JSON. On a shared machine wall times
stretch: compare medians, and read the load average printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.claude_sessions import long_session
from bench.hook_runs import add_notes, run_hook, services_of, stop_services

PROMPTS = Path(__file__).parent / "recall_prompts.json"
OUT = Path(__file__).parent / "results" / "hooks.json"
EVENTS = ("session-start", "user-prompt-submit", "stop")


CPU_MS: list[float] = []
"""CPU time (user + system) of each hook process timed, in order: on a busy machine wall
times stretch, CPU times much less."""


def timed(home: Path, event: str, payload: dict[str, Any], **env: str) -> tuple[float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = run_hook(home, event, payload, env, timeout=120)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_MS.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall, result.stdout


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1), "runs": len(ordered)}


def _python_start() -> float:
    """A bare ``python -c pass`` from spawn to exit: the floor under any hook on this machine now."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", type=int, default=5, help="cold runs per event")
    parser.add_argument("--warm", type=int, default=30, help="warm runs per event")
    parser.add_argument("--turns", type=int, default=5000, help="turns of the long transcript")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = json.loads(PROMPTS.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        add_notes(home, str(project), [{"title": n["title"], "text": n["text"], "group": n["topic"]} for n in data["notes"]])
        session = long_session(40, str(project), "bench-session")
        session.save(home / "short.jsonl")
        payloads = {
            "session-start": {"session_id": "bench-session", "cwd": str(project), "source": "startup"},
            "user-prompt-submit": {"session_id": "bench-session", "cwd": str(project), "prompt": "deploy the fix to production"},
            "stop": {"session_id": "bench-session", "cwd": str(project), "transcript_path": str(home / "short.jsonl")},
        }
        try:
            figures = _measure(home, project, payloads, data, args)
        finally:
            stop_services(home / "data")
    figures["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "load_average": os.getloadavg()}
    figures["python_start_ms"] = spread([_python_start() for _ in range(10)])
    _print(figures)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


def _measure(home: Path, project: Path, payloads: dict[str, dict[str, Any]], data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    latency: dict[str, dict[str, Any]] = {}
    for event in EVENTS:
        cold = []
        for _ in range(args.cold):
            stop_services(home / "data")
            cold.append(timed(home, event, payloads[event])[0])
        timed(home, event, payloads[event])
        warm = [timed(home, event, payloads[event])[0] for _ in range(args.warm)]
        warm_cpu = CPU_MS[-args.warm :]
        alone = [timed(home, event, payloads[event], MCP_MEMORY_SERVICE_IDLE="0")[0] for _ in range(max(3, args.cold))]
        latency[event] = {
            "cold_ms": spread(cold),
            "warm_ms": spread(warm),
            "warm_hook_cpu_ms": spread(warm_cpu),
            "in_process_ms": spread(alone),
        }
    added = {"related": [], "unrelated": []}
    for kind, prompts in (("related", [p["prompt"] for p in data["related"]]), ("unrelated", data["unrelated"])):
        for text in prompts:
            out = timed(home, "user-prompt-submit", {"session_id": "bench", "cwd": str(project), "prompt": text})[1]
            added[kind].append(len(out.decode()))
    (pid,) = services_of(home / "data")
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    memory = {k: round(int(status[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM")}
    long = long_session(args.turns, str(project), "bench-long")
    long.save(home / "long.jsonl")
    size = (home / "long.jsonl").stat().st_size
    payload = {"session_id": "bench-long", "cwd": str(project), "transcript_path": str(home / "long.jsonl")}
    capture = [timed(home, "stop", payload)[0] for _ in range(3)]
    alone = [timed(home, "stop", payload, MCP_MEMORY_SERVICE_IDLE="0")[0] for _ in range(2)]
    return {
        "latency": latency,
        "chars_added": {
            kind: {"mean": round(statistics.fmean(v), 1), "p50": statistics.median(v), "max": max(v), "silent": sum(x == 0 for x in v), "prompts": len(v)}
            for kind, v in added.items()
        },
        "service_memory_mib": memory,
        "long_capture": {"turns": args.turns, "transcript_mib": round(size / 2**20, 1), "warm_ms": spread(capture), "in_process_ms": spread(alone)},
    }


def _print(f: dict[str, Any]) -> None:
    print("| event | cold p50 / p95 ms | warm p50 / p95 ms | warm hook CPU p50 ms | in-process p50 ms |")
    print("|---|---|---|---|---|")
    for event, row in f["latency"].items():
        c, w, u, i = row["cold_ms"], row["warm_ms"], row["warm_hook_cpu_ms"], row["in_process_ms"]
        print(f"| {event} | {c['p50']} / {c['p95']} | {w['p50']} / {w['p95']} | {u['p50']} | {i['p50']} |")
    print()
    print("| prompts | chars added mean | p50 | max | added nothing |")
    print("|---|---|---|---|---|")
    for kind, row in f["chars_added"].items():
        print(f"| {kind} | {row['mean']} | {row['p50']} | {row['max']} | {row['silent']} of {row['prompts']} |")
    m, c = f["service_memory_mib"], f["long_capture"]
    print()
    print(f"service memory: RSS {m['VmRSS']} MiB, peak {m['VmHWM']} MiB")
    print(
        f"capture of {c['turns']} turns ({c['transcript_mib']} MiB transcript): warm p50 {c['warm_ms']['p50']} ms, "
        f"in-process p50 {c['in_process_ms']['p50']} ms"
    )
    print(f"load average during the run: {', '.join(f'{x:.1f}' for x in f['machine']['load_average'])} on {f['machine']['cpus']} CPUs")
    print(f"a bare `python -c pass` at the same time: p50 {f['python_start_ms']['p50']} ms")


if __name__ == "__main__":
    raise SystemExit(main())
