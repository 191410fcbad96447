"""Where the local model's memory goes: resident memory after each step of loading
all-MiniLM-L6-v2 (imports, tokenizer, ONNX session), for the session options that matter.

    .venv/bin/python -m bench.embedder_memory [--texts 64]

Each variant runs in its own process: onnxruntime's defaults with the project's options
(``default``), without constant folding (``no-folding``: the int8 weights stay int8 and are
dequantized on every run), and without the CPU arena (``no-arena``). After the session, each
embeds ``--texts`` texts one at a time and then in batches of 32 texts of varied length up to
100 words; reported: RSS after each step, peak RSS, and the median time of one text (a
busy machine slows every variant alike). Writes ``bench/results/embedder_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python bench/embedder_memory.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import generated_data, table, write_result

VARIANTS = ("default", "no-folding", "no-arena")
WORDS = "the we deploy server memory note search gateway billing worker pipeline retries timeout painting kids".split()


def rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def measure(variant: str, texts: int) -> dict[str, float]:
    steps = {"python": rss_mib()}
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from local_mcp_memory.adapters.embedders.local import default_model_path, default_tokenizer_path

    steps["imports"] = rss_mib()
    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    steps["tokenizer"] = rss_mib()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = variant != "no-arena"
    disabled = ["ConstantFolding"] if variant == "no-folding" else None
    session = onnxruntime.InferenceSession(str(default_model_path()), sess_options=options,
                                           providers=["CPUExecutionProvider"], disabled_optimizers=disabled)
    steps["session"] = rss_mib()
    inputs = {i.name for i in session.get_inputs()}

    def embed(batch: list[str]) -> None:
        encoded = tokenizer.encode_batch(batch)
        ids = np.zeros((len(encoded), max(len(e.ids) for e in encoded)), dtype=np.int64)
        for i, e in enumerate(encoded):
            ids[i, : len(e.ids)] = e.ids
        feed = {"input_ids": ids, "attention_mask": (ids > 0).astype(np.int64)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        session.run(None, feed)

    rng = random.Random(1)
    corpus = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 100))) for _ in range(texts)]
    one = []
    for text in corpus:
        started = time.perf_counter()
        embed([text])
        one.append(time.perf_counter() - started)
    for start in range(0, texts, 32):
        embed(corpus[start : start + 32])
    steps["after texts"] = rss_mib()
    return {**{k: round(v, 1) for k, v in steps.items()},
            "peak": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "one_text_ms_p50": round(1000 * statistics.median(one), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embedder_memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child, args.texts)))
        return 0
    runs = {}
    for variant in VARIANTS:
        command = [sys.executable, "-m", "bench.embedder_memory", "--child", variant, "--texts", str(args.texts)]
        out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent)
        runs[variant] = json.loads(out.stdout.strip().splitlines()[-1])
    steps = ["python", "imports", "tokenizer", "session", "after texts", "peak", "one_text_ms_p50"]
    print("all-MiniLM-L6-v2 (int8 ONNX): RSS in MiB after each step, and one text's median time\n")
    print(table(["variant", *steps], [[v, *(runs[v][s] for s in steps)] for v in VARIANTS]))
    path = write_result("embedder_memory", {"texts": args.texts, "runs": runs}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
