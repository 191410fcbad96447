"""What embedding several search queries in one model call costs, per query.

    .venv/bin/python -m bench.query_batches [--data PATH] [--calls 40] [--rounds 2] [--out NAME]

Each intra-op thread setting (1: the server's, 2) runs in its own process, in turn, ``--rounds``
times. It embeds LoCoMo questions (a search's query: 13 tokens on average) of the first
conversations in single model calls of 1, 2, 4, 8 and 16 texts, each call padded to its
longest text (``LocalOnnxEmbedder``'s own batching would split a call of 16 at its token cap),
``--calls`` calls per size, and a batch of texts of one length too (what grouping by length
saves). Reported per query: wall time (a call's median over its texts) and CPU time (the
process's, every thread, mean over the calls); and the largest difference between a text's
vector in a batch and embedded alone. Writes ``bench/results/query_batches.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python bench/query_batches.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

SIZES = (1, 2, 4, 8, 16)
THREADS = (1, 2)


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def measure(threads: int, data: Path, calls: int) -> dict[str, dict[str, float]]:
    import numpy as np

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

    questions = [q.text for c in load_locomo(data) for q in c.questions]
    embedder = LocalOnnxEmbedder(threads=threads, workers=1, solo_threads=1)
    tokenizer, session = embedder._load()
    encodings = tokenizer.encode_batch(questions)
    alone = {}
    embedder._run(session, encodings[:16])  # warm
    out: dict[str, dict[str, float]] = {}
    for grouped in (False, True):
        pool = encodings
        if grouped:  # texts of the most common length only
            common = statistics.mode(len(e.ids) for e in encodings)
            pool = [e for e in encodings if len(e.ids) == common]
        for size in SIZES:
            wall, cpu, tokens, padded, drift = [], [], 0, 0, 0.0
            for call in range(calls):
                start = call * size % max(len(pool) - size, 1)
                batch = pool[start : start + size]
                started, used = time.perf_counter(), _cpu()
                vectors = embedder._run(session, batch)
                wall.append((time.perf_counter() - started) / size)
                cpu.append((_cpu() - used) / size)
                tokens += sum(len(e.ids) for e in batch)
                padded += max(len(e.ids) for e in batch) * size
                if call < 4:
                    for row, enc in enumerate(batch):
                        key = tuple(enc.ids)
                        if key not in alone:
                            alone[key] = embedder._run(session, [enc])[0]
                        drift = max(drift, float(np.abs(vectors[row] - alone[key]).max()))
            out[f"{'same length' if grouped else 'mixed'} x{size}"] = {
                "wall_ms_per_query": round(statistics.median(wall) * 1e3, 3),
                "cpu_ms_per_query": round(statistics.mean(cpu) * 1e3, 3),
                "tokens_per_query": round(tokens / (calls * size), 1),
                "padding_share": round(1 - tokens / padded, 3),
                "largest_difference_to_alone": drift,
            }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.query_batches", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR, help="LoCoMo conversation files")
    parser.add_argument("--calls", type=int, default=40, help="model calls per batch size")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default="query_batches")
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)  # internal: measure one setting in this process
    args = parser.parse_args(argv)
    if args.threads:
        print(json.dumps(measure(args.threads, args.data, args.calls)))
        return 0
    load = [round(x, 2) for x in os.getloadavg()]
    runs: dict[str, list[dict[str, dict[str, float]]]] = {str(t): [] for t in THREADS}
    for _ in range(args.rounds):
        for threads in THREADS:
            done = subprocess.run([sys.executable, "-m", "bench.query_batches", "--threads", str(threads), "--data",
                                   str(args.data), "--calls", str(args.calls)],
                                  capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
            runs[str(threads)].append(json.loads(done.stdout.splitlines()[-1]))
    medians = {t: {batch: {k: (max(r[batch][k] for r in rs) if k == "largest_difference_to_alone"
                               else round(statistics.median(r[batch][k] for r in rs), 3)) for k in rs[0][batch]}
                   for batch in rs[0]} for t, rs in runs.items()}
    rows = [[f"{t} thread{'s' if t != '1' else ''}", batch, m["wall_ms_per_query"], m["cpu_ms_per_query"],
             m["tokens_per_query"], m["padding_share"], f"{m['largest_difference_to_alone']:.1e}"]
            for t, batches in medians.items() for batch, m in batches.items()]
    print(f"load average at start {load}, now {[round(x, 2) for x in os.getloadavg()]}; ms per query, medians of {args.rounds} rounds")
    print(table(["intra-op threads", "texts per call", "wall", "CPU", "tokens", "padding", "largest difference"], rows))
    path = write_result(args.out, {"load_average_at_start": load, "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                                   "calls": args.calls, "rounds": args.rounds, "medians": medians, "runs": runs},
                        data_digest(args.data))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
