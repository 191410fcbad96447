"""Where the local model's memory goes: resident memory after each step of loading
all-MiniLM-L6-v2 (imports, tokenizer, ONNX session), for the session options that matter.

    .venv/bin/python -m bench.embedder_memory [--texts 64]

Each variant runs in its own process: the session the server builds (``project``: the
embedding tables gathered as int8 before dequantizing, an arena kept for one text of up to
``local.ARENA_TOKENS`` tokens, a batch's run handing back what it grew it by, as the server
runs it), the model file as
shipped with onnxruntime's defaults and the project's former options (``as-shipped``:
constant folding turns every int8 weight into float32 at load, arena on), the int8 tables
with the arena on (``int8-tables+arena``), and without constant folding (``no-folding``: the
int8 weights stay int8 and are dequantized on every run). After the session, each embeds
``--texts`` texts of varied length up to 100 words one at a time, then in the batches the
server forms (up to 32 texts and 160 padded tokens), then in plain batches of 32 texts; reported: RSS after each step, peak RSS (``VmHWM``), and the median wall and CPU
time of one text (a busy machine slows every variant alike; CPU time moves less). Writes
``bench/results/embedder_memory.json``.
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

VARIANTS = ("project", "as-shipped", "int8-tables+arena", "no-folding")
WORDS = "the we deploy server memory note search gateway billing worker pipeline retries timeout painting kids".split()


def rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def measure(variant: str, texts: int) -> dict[str, float]:
    steps = {"python": rss_mib()}
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder, default_model_path, default_tokenizer_path
    from local_mcp_memory.adapters.embedders.quantized_rows import gather_before_dequantizing

    steps["imports"] = rss_mib()
    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    steps["tokenizer"] = rss_mib()
    server = LocalOnnxEmbedder()
    if variant == "project":
        session = server._load()[1]  # the server's session
    else:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model: str | bytes = str(default_model_path())
        if variant == "int8-tables+arena":
            model = gather_before_dequantizing(default_model_path().read_bytes())[0]
        disabled = ["ConstantFolding"] if variant == "no-folding" else None
        session = onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"],
                                               disabled_optimizers=disabled)
        del model
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
        session.run(None, feed, server._arena_kept(encoded) if variant == "project" else None)  # the server's run options

    rng = random.Random(1)
    corpus = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 100))) for _ in range(texts)]
    one, cpu = [], []
    for text in corpus:
        started, started_cpu = time.perf_counter(), time.process_time()
        embed([text])
        one.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    lengths = [len(e.ids) for e in tokenizer.encode_batch(corpus)]
    for batch in server._batches(lengths):  # as the server batches: <= 32 texts, <= 160 padded tokens
        embed([corpus[i] for i in batch])
    steps["peak, server batches"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for start in range(0, texts, 32):  # and as a caller that ignores lengths would: 32 texts, padded to the longest
        embed(corpus[start : start + 32])
    steps["after texts"] = rss_mib()
    return {**{k: round(v, 1) for k, v in steps.items()},
            "peak, batches of 32": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),  # VmHWM
            "one_text_ms_p50": round(1000 * statistics.median(one), 2),
            "one_text_cpu_ms_p50": round(1000 * statistics.median(cpu), 2)}


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
    steps = ["python", "imports", "tokenizer", "session", "peak, server batches", "after texts", "peak, batches of 32",
             "one_text_ms_p50",
             "one_text_cpu_ms_p50"]
    print("all-MiniLM-L6-v2 (int8 ONNX): RSS in MiB after each step, and one text's median wall and CPU time\n")
    print(table(["variant", *steps], [[v, *(runs[v][s] for s in steps)] for v in VARIANTS]))
    path = write_result("embedder_memory", {"texts": args.texts, "runs": runs}, generated_data(__file__))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
