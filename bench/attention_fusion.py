"""What fusing MiniLM's attention brings: the server's embedder with each layer's attention as
one ``com.microsoft.MultiHeadAttention`` (``adapters/embedders/attention.py``, the default)
beside the same embedder with the attention as the export spells it out.

    .venv/bin/python -m bench.attention_fusion [--data PATH] [--rounds 6] [--products auto|int8|float]

Both run through ``LocalOnnxEmbedder`` (the server's session settings, tokenizer, batches and
pooling). Reported: how far the vectors move (every note and question of the LoCoMo
conversations in ``--data``, each embedded alone: the smallest cosine between the two and
the largest difference in a component), and the CPU time of a text one at a time (a question
or a turn) and of a turn in requests of 100 turns, medians of ``--rounds`` alternating
rounds. Writes ``bench/results/attention_fusion.json``.
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

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo


def cpu_per_text(embedder: Any, requests: list[list[str]]) -> float:
    """Milliseconds of this process's CPU (every thread) per text over ``requests``."""
    started = time.process_time()
    for texts in requests:
        embedder.embed(texts)
    return (time.process_time() - started) * 1e3 / sum(len(texts) for texts in requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.attention_fusion", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--products", choices=("auto", "int8", "float"), default="auto")
    args = parser.parse_args(argv)
    import numpy as np

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

    conversations = load_locomo(args.data)
    notes = [n["text"] for c in conversations for n in c.notes]
    questions = [q.text for c in conversations for q in c.questions]
    embedders = {name: LocalOnnxEmbedder(products=args.products, fused_attention=fused, solo_threads=1)
                 for name, fused in (("as exported", False), ("attention fused", True))}
    for embedder in embedders.values():
        embedder.load()
    texts = notes + questions
    before, after = (np.concatenate([e.embed([t]) for t in texts]) for e in embedders.values())
    cosines = (before * after).sum(axis=1)
    single = [[t] for t in questions[:60] + notes[:60]]
    batched = [notes[i : i + 100] for i in range(0, min(len(notes), 400), 100)]
    cpu: dict[str, dict[str, list[float]]] = {name: {"one at a time": [], "requests of 100": []} for name in embedders}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            cpu[name]["one at a time"].append(cpu_per_text(embedder, single))
            cpu[name]["requests of 100"].append(cpu_per_text(embedder, batched))
    medians = {name: {way: round(statistics.median(v), 3) for way, v in ways.items()} for name, ways in cpu.items()}
    speedup = {way: round(medians["as exported"][way] / medians["attention fused"][way], 3) for way in medians["as exported"]}
    result = {
        "products": args.products, "int8_products": embedders["attention fused"]._alone,
        "texts": len(texts), "min_cosine": float(cosines.min()), "max_abs_diff": float(np.abs(before - after).max()),
        "cpu_ms_per_text": medians, "speedup": speedup, "rounds": args.rounds,
    }
    print(f"{len(texts)} texts: min cosine {result['min_cosine']:.8f}, max abs diff {result['max_abs_diff']:.3g}")
    print(table(["graph", "CPU ms per text, one at a time", "CPU ms per turn, requests of 100"],
                [[name, m["one at a time"], m["requests of 100"]] for name, m in medians.items()]
                + [["speed-up", speedup["one at a time"], speedup["requests of 100"]]]))
    print(f"written: {write_result('attention_fusion', result, data_digest(args.data))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
