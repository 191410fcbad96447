"""The server's CPU time per request, which a busy machine moves far less than wall time.

    .venv/bin/python -m bench.request_cpu [--data PATH] [--adds 200] [--rounds 2] [--out NAME]

One ``mcp-memory serve`` over stdio, the first LoCoMo conversation: its first ``--adds``
turns one ``memory.add_note`` at a time, the rest in ``memory.add_notes`` of 100, then its
questions ``--rounds`` times (``memory.search``, hybrid, topK 5; the rounds after the first as
"search, asked again": the server keeps a recent query's vector). For each kind of request:
the wall p50 and the server process's CPU time (every thread, from ``/proc``) per request or
per note. Also the sha256 of the answers (each result's diaId and score, first round), so
that two versions can be shown to answer alike. Run an older tree with it first on
``PYTHONPATH`` (a folder holding it as ``local_mcp_memory/``) to compare. Writes
``bench/results/request_cpu.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python bench/request_cpu.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StdioClient, table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

BATCH = 100
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def measure(data: Path, adds: int, rounds: int) -> dict[str, object]:
    conversation = load_locomo(data)[0]
    answers = hashlib.sha256()
    out: dict[str, object] = {}
    with StdioClient() as client:
        client.call("memory.search", {"projectId": "warm-up", "query": "warm up"})  # loads the model
        pid = client.process.pid
        singles, rest = conversation.notes[:adds], conversation.notes[adds:]
        wall, used = [], cpu_s(pid)
        for note in singles:
            started = time.perf_counter()
            client.call("memory.add_note", note)
            wall.append(time.perf_counter() - started)
        out["add_note"] = {"wall_p50_ms": statistics.median(wall) * 1e3, "cpu_ms": (cpu_s(pid) - used) / len(singles) * 1e3}
        started, used = time.perf_counter(), cpu_s(pid)
        for i in range(0, len(rest), BATCH):
            client.call("memory.add_notes", {"notes": rest[i : i + BATCH]})
        out["add_notes, per note"] = {"wall_p50_ms": (time.perf_counter() - started) / len(rest) * 1e3,
                                      "cpu_ms": (cpu_s(pid) - used) / len(rest) * 1e3}
        def ask(rounds_: int, record: bool) -> dict[str, float]:
            """The questions ``rounds_`` times; the first round's answers into the digest if ``record``."""
            wall, used = [], cpu_s(pid)
            for _ in range(rounds_):
                for question in conversation.questions:
                    started = time.perf_counter()
                    found = client.call("memory.search", {"projectId": conversation.project, "query": question.text, "topK": 5})
                    wall.append(time.perf_counter() - started)
                    if record:
                        seen = [((r.get("metadata") or {}).get("diaId"), r["score"]) for r in found["results"]]
                        answers.update(json.dumps(seen).encode())
                record = False
            return {"wall_p50_ms": statistics.median(wall) * 1e3, "cpu_ms": (cpu_s(pid) - used) / len(wall) * 1e3}

        out["search"] = ask(1, True)
        if rounds > 1:  # the same questions again: their vectors kept since (Embedding.QUERIES_KEPT)
            out["search, asked again"] = ask(rounds - 1, False)
        searches = rounds * len(conversation.questions)
    figures = {k: {m: round(v, 2) for m, v in f.items()} for k, f in out.items()}  # type: ignore[union-attr]
    return {"figures": figures, "answers_sha256": answers.hexdigest(), "singles": len(singles), "batched": len(rest),
            "searches": searches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.request_cpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR, help="LoCoMo conversation files")
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default="request_cpu")
    args = parser.parse_args(argv)
    load = [round(x, 2) for x in os.getloadavg()]
    result = measure(args.data, args.adds, args.rounds)
    figures = result["figures"]
    print(f"load average at start {load}; answers sha256 {str(result['answers_sha256'])[:16]}")
    print(table(["request", "wall p50 ms", "server CPU ms"],
                [[k, f["wall_p50_ms"], f["cpu_ms"]] for k, f in figures.items()]))  # type: ignore[union-attr]
    path = write_result(args.out, {"load_average_at_start": load, "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                                   "pythonpath": os.environ.get("PYTHONPATH", ""), **result}, data_digest(args.data))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
