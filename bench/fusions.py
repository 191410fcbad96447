"""What onnxruntime's graph fusions do to the local model's time: the CPU of a text with
each fusion named left out, against the server's session.

    .venv/bin/python -m bench.fusions [--rounds 5] [--texts 300] [--fusions SkipLayerNormFusion ...]

The server leaves out the fusions in ``local.UNFUSED``. Here each session is built as the
server's (one intra-op thread, no spinning, no arena) from the same rewritten model, with
the int8 products where the CPU has int8 dot products and with float ones: the server's
set left out, none left out, and the server's set plus each of ``--fusions``. LoCoMo turns
and questions go through each session one at a time (each text alone, the way the int8
products run), rounds alternating between the sessions; reported: the median CPU per
text, and the lowest cosine of each session's mean-pooled vectors with the server's. Prints
a table and writes ``bench/results/fusions.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, load_locomo
from bench.model_runs import mean_pooled, text_feeds

OTHERS = ("MatMulScaleFusion", "LayerNormFusion", "MatMulAddFusion", "TransposeOptimizer", "GeluFusion")


def sessions(products: str, variants: dict[str, list[str]]) -> dict[str, Any]:
    import onnxruntime

    from local_mcp_memory.adapters.embedders import local

    model, _ = local.rewritten_model(local.default_model_path(), local.MODEL_SHA256, products == "int8")
    options = local.session_options(onnxruntime, 1)
    return {name: onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"],
                                               disabled_optimizers=left_out) for name, left_out in variants.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.fusions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--fusions", nargs="*", default=list(OTHERS))
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    args = parser.parse_args(argv)

    from tokenizers import Tokenizer

    from local_mcp_memory.adapters.embedders.local import UNFUSED, default_tokenizer_path
    from local_mcp_memory.adapters.embedders.products import int8_dot_products

    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    conversations = load_locomo(args.locomo)
    texts = {"LoCoMo turn": [n["text"] for c in conversations for n in c.notes[::5]][: args.texts],
             "LoCoMo question": [q.text for c in conversations for q in c.questions[::2]][: args.texts]}
    feeds = {kind: [text_feeds(tokenizer.encode(t).ids) for t in ts] for kind, ts in texts.items()}
    server = list(UNFUSED)
    variants = {"server (" + (", ".join(server) or "nothing") + " left out)": server, "every fusion": []}
    variants |= {f"server + {name} left out": server + [name] for name in args.fusions if name not in server}
    rows, results = [], {}
    for products in ("int8", "float") if int8_dot_products() else ("float",):
        built = sessions(products, variants)
        reference = {kind: [mean_pooled(built[next(iter(built))], f) for f in fs] for kind, fs in feeds.items()}
        cpu: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in feeds} for name in built}
        for _ in range(args.rounds):
            for name, session in built.items():
                for kind, fs in feeds.items():
                    started = time.process_time()
                    for f in fs:
                        session.run(["last_hidden_state"], f)
                    cpu[name][kind].append((time.process_time() - started) / len(fs) * 1e3)
        for name, session in built.items():
            low = min(float(np.dot(a, b)) for kind, fs in feeds.items()
                      for a, b in zip(reference[kind], (mean_pooled(session, f) for f in fs)))
            medians = {kind: statistics.median(v) for kind, v in cpu[name].items()}
            results[f"{products}: {name}"] = {"cpu_ms_per_text": medians, "rounds": cpu[name], "cosine_min": low}
            rows.append([products, name] + [f"{m:.2f} ms" for m in medians.values()] + [f"{low:.5f}"])
    print(table(["products", "session", *(f"CPU per {k}" for k in feeds), "cosine min with the server's"], rows))
    write_result("fusions", {"texts": {k: len(v) for k, v in texts.items()}, "rounds": args.rounds,
                             "server_leaves_out": server, "sessions": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
