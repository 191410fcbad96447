"""What the local model's graph rewrites of its layers bring: each GELU as one operator
(``adapters/embedders/gelu.py``), each layer's query, key and value as one int8 product
with every int8 product adding its bias itself (``quantized_rows.multiply_in_int8``,
``together``) and each attention block as ONNX's ``Attention`` (``attention.py``), against
the graph without them.

    .venv/bin/python -m bench.embedder_graph [--data PATH] [--rounds 5] [--texts 300]

Three graphs, each with the tables gathered as int8 and the attention fused as the server's:
"products apart" (each int8 product alone, its bias added after it, the GELU spelled out: the
graph before these rewrites), "GELU in one" (the GELU fused, products apart) and "server's"
(both), with the int8 products' channels in float where the server has them
(``local.MINILM_OUTLIERS``); and, where ``bench/results/int8_outliers.json`` gives it, a
fourth: "every peak channel in float" (the server's graph with every channel whose peak stands
out in float, as before ``bench.int8_outliers`` left the products that do not need it in int8);
and "MultiHeadAttention" (the server's graph with each block as onnxruntime's
``com.microsoft.MultiHeadAttention`` on a key padding mask, as the server's rewrite wrote it
before: ``with_multihead_attention``).
Each runs on sessions built as the server's: one intra-op thread (queries, a
request's texts) and two that spin through a run (a passage alone on a machine with a core
to spare). The first ``--texts`` LoCoMo turns and questions go through each session one text
at a time, rounds alternating between graphs; reported: the median wall time per text and
the CPU (every thread of this process) per text, and the lowest cosine of each graph's
mean-pooled vectors with the first one's. Where the CPU has no int8 dot products the
products stay float and only the GELU differs. Prints a table and writes
``bench/results/embedder_graph.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import REPO, table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo
from bench.model_runs import mean_pooled, text_feeds


OUTLIERS = REPO / "bench/results/int8_outliers.json"
"""``bench.int8_outliers``' result: its ``by_peaks`` table is every channel whose peak stands out
in float, before the products that do not need it were left in int8."""


def with_multihead_attention(model: bytes) -> bytes:
    """``model`` (the server's graph) with each ``Attention`` as ``com.microsoft.MultiHeadAttention``
    of the same query, key, value and scale, reading the attention mask as int32 key padding,
    and the nodes that built ``Attention``'s mask gone."""
    from local_mcp_memory.adapters.embedders import local
    from local_mcp_memory.adapters.embedders.attention import MASK_INPUT
    from local_mcp_memory.adapters.embedders.onnx_wire import (
        ATTR_NAME, INT32, MICROSOFT, Rewrite, fields, int_attribute_field, node, rewritten)

    def named(attribute: bytes) -> bytes:
        return next(bytes(v) for n, _, v, _ in fields(memoryview(attribute)) if n == ATTR_NAME)

    def rule(nodes: list[Any], known: Any) -> Any:
        replaced, cast = {}, node("Cast", [MASK_INPUT], "mask/int32", (int_attribute_field("to", INT32),))
        for found in nodes:
            if found.op == "Attention" and not found.domain:
                (scale,) = [a for a in found.attributes if named(a) == b"scale"]
                attributes = (int_attribute_field("num_heads", local.HEADS), scale)
                reads = [*found.inputs[:3], "", "mask/int32"]
                replaced[id(found)], cast = cast + node("MultiHeadAttention", reads, found.outputs[0], attributes, MICROSOFT), b""
            elif found.outputs[0].startswith(MASK_INPUT + "/"):  # the nodes of attention._mask
                replaced[id(found)] = b""
        return Rewrite(replaced)

    return rewritten(model, rule, MICROSOFT)[0]


def graphs(int8: bool) -> dict[str, bytes]:
    from local_mcp_memory.adapters.embedders import local
    from local_mcp_memory.adapters.embedders.attention import fuse_attention
    from local_mcp_memory.adapters.embedders.gelu import fuse_gelu
    from local_mcp_memory.adapters.embedders.quantized_rows import gather_before_dequantizing, multiply_in_int8

    base = fuse_attention(gather_before_dequantizing(local.default_model_path().read_bytes())[0], local.HEADS)[0]
    with_gelu = fuse_gelu(base)[0]

    def products(model: bytes, together: bool) -> bytes:
        return multiply_in_int8(model, local.MINILM_OUTLIERS, together)[0] if int8 else model

    server = local.rewritten_model(local.default_model_path(), local.MODEL_SHA256, int8=int8, fused=True)[0]
    assert server == products(with_gelu, True), "the server's graph is not the one measured"
    out = {"products apart": products(base, False), "GELU in one": products(with_gelu, False)}
    peaks = json.loads(OUTLIERS.read_text()).get("by_peaks") if int8 and OUTLIERS.exists() else None
    if peaks:  # every channel over the peak bar in float, as the server multiplied them before
        out["every peak channel in float"] = multiply_in_int8(with_gelu, {k: tuple(v) for k, v in peaks.items()})[0]
    out["MultiHeadAttention"] = with_multihead_attention(server)
    return {**out, "server's": server}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embedder_graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--texts", type=int, default=300)
    args = parser.parse_args(argv)
    import onnxruntime

    from local_mcp_memory.adapters.embedders import local
    from local_mcp_memory.adapters.embedders.products import int8_dot_products

    int8 = int8_dot_products()
    conversations = load_locomo(args.data)
    texts = {"turn": [n["text"] for c in conversations for n in c.notes][: args.texts],
             "question": [q.text for c in conversations for q in c.questions][: args.texts]}
    tokenizer = local.LocalOnnxEmbedder()._tokenizer_loaded()
    feeds = {kind: [text_feeds(tokenizer.encode(text).ids) for text in chosen] for kind, chosen in texts.items()}
    models = graphs(int8)
    threads = {"1 thread": 1, "2 spinning": 2}
    sessions = {(name, way): onnxruntime.InferenceSession(
        model, sess_options=local.session_options(onnxruntime, n, spinning=n > 1),
        providers=["CPUExecutionProvider"], disabled_optimizers=list(local.UNFUSED))
        for name, model in models.items() for way, n in threads.items()}

    first = next(iter(models))
    every = feeds["turn"] + feeds["question"]
    reference = [mean_pooled(sessions[first, "1 thread"], feed) for feed in every]
    min_cosine = {name: float(min(mean_pooled(sessions[name, "1 thread"], feed) @ ref for feed, ref in zip(every, reference)))
                  for name in models}
    wall: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(args.rounds):
        for (name, way), session in sessions.items():
            for kind, chosen in feeds.items():
                times = []
                started_cpu = time.process_time()
                for feed in chosen:
                    started = time.perf_counter()
                    session.run(["last_hidden_state"], feed)
                    times.append(time.perf_counter() - started)
                cpu.setdefault((name, way, kind), []).append((time.process_time() - started_cpu) * 1e3 / len(chosen))
                wall.setdefault((name, way, kind), []).append(statistics.median(times) * 1e3)
    rows, figures = [], {}
    for name in models:
        for way in threads:
            for kind in feeds:
                key = (name, way, kind)
                w, c = statistics.median(wall[key]), statistics.median(cpu[key])
                base_w = statistics.median(wall[first, way, kind])
                figures[" / ".join(key)] = {"wall_ms": round(w, 3), "cpu_ms": round(c, 3), "speedup": round(base_w / w, 3)}
                rows.append([name, way, kind, f"{w:.3f}", f"{c:.3f}", f"{base_w / w:.3f}"])
    result = {"int8_products": int8, "texts": {k: len(v) for k, v in feeds.items()}, "rounds": args.rounds,
              "min_cosine_with_products_apart": min_cosine, "per_text": figures}
    print(table(["graph", "session", "text", "wall ms (median)", "CPU ms", "speed-up"], rows))
    print("lowest cosine with the first graph: " + ", ".join(f"{k} {v:.6f}" for k, v in min_cosine.items()))
    print(f"written: {write_result('embedder_graph', result, data_digest(args.data))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
