"""Would fusing MiniLM's attention pay? The shipped export beside the same weights with each
layer's attention rewritten into one ``com.microsoft.MultiHeadAttention``.

    .venv/bin/pip install onnx sympy        # the rewrite needs them; the server does not
    .venv/bin/python -m bench.attention_fusion [--data PATH] [--rounds 6]

onnxruntime's transformer optimizer (``model_type="bert"``) fuses only the skip layer norms
and the bias GELUs of this export: its attention matcher does not know the dynamo export's
scaled-dot-product pattern (the scale applied to Q and to K, the key's reshape-transpose
chain, a ``Where`` for the mask and ``IsNaN`` after the softmax). This rewrites that pattern
by hand (``fuse_attention``) and runs both graphs through ``LocalOnnxEmbedder`` (the
server's session settings, tokenizer, batches and pooling). Reported: how far the vectors
move (every note and question of the LoCoMo conversations in ``--data``, each embedded
alone: the smallest cosine with today's vector and the largest difference in a
component), and the CPU time of a text one at a time (a question or a turn) and of a turn
in requests of 100 turns, medians of ``--rounds`` alternating rounds. Writes
``bench/results/attention_fusion.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

HEADS = 12


def fuse_attention(model: Any) -> int:
    """Rewrite each attention block of the ``onnx`` ``ModelProto`` ``model`` in place into
    one ``MultiHeadAttention`` on the projected Q, K and V (the bias already added) with the
    attention mask as key padding mask; the nodes only it used go. How many were fused."""
    from onnx import TensorProto, helper

    graph = model.graph
    producer = {output: node for node in graph.node for output in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def made_by(name: str, op: str) -> Any:
        node = producer.get(name)
        if node is None or node.op_type != op:
            raise ValueError(f"{name} is not made by a {op}: the graph is not the pinned export")
        return node

    def source(name: str, ops: list[str]) -> str:
        """The input found by walking back through ``ops`` (each node's first input)."""
        for op in ops:
            name = made_by(name, op).input[0]
        return name

    replaced: dict[int, Any] = {}
    mask = "attention_mask_int32"
    for softmax in [n for n in graph.node if n.op_type == "Softmax"]:
        (cleaned,) = [n for n in consumers[softmax.output[0]] if n.op_type == "Where"]
        (weighted,) = consumers[cleaned.output[0]]
        (transposed,) = consumers[weighted.output[0]]
        (merged,) = consumers[transposed.output[0]]
        scores = made_by(made_by(softmax.input[0], "Add").input[0], "MatMul")
        query = source(made_by(scores.input[0], "Mul").input[0], ["Transpose", "Reshape"])
        key = source(made_by(scores.input[1], "Mul").input[0], ["Reshape", "Transpose", "Reshape", "Transpose", "Reshape"])
        value = source(weighted.input[1], ["Transpose", "Reshape"])
        replaced[id(merged)] = helper.make_node(
            "MultiHeadAttention", [query, key, value, "", mask], [merged.output[0]],
            name=f"attention_{len(replaced)}", domain="com.microsoft", num_heads=HEADS,
        )
    nodes = [helper.make_node("Cast", ["attention_mask"], [mask], to=TensorProto.INT32, name="attention_mask_cast")]
    nodes += [replaced.get(id(node), node) for node in graph.node]
    needed, kept = {output.name for output in graph.output}, []
    for node in reversed(nodes):  # only what the outputs still need
        if any(output in needed for output in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return len(replaced)


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
    args = parser.parse_args(argv)
    import numpy as np
    import onnx

    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder, default_model_path

    model = onnx.load(str(default_model_path()))
    before = len(model.graph.node)
    fused = fuse_attention(model)
    conversations = load_locomo(args.data)
    notes = [n["text"] for c in conversations for n in c.notes]
    questions = [q.text for c in conversations for q in c.questions]
    with tempfile.TemporaryDirectory(prefix="mcp-memory-fusion-") as tmp:
        path = Path(tmp, "fused.onnx")
        onnx.save(model, str(path))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        embedders = {"as shipped": LocalOnnxEmbedder(), "attention fused": LocalOnnxEmbedder(model_path=path, model_sha256=digest)}
        for embedder in embedders.values():
            embedder.load()
        texts = notes + questions
        today, other = (np.concatenate([e.embed([t]) for t in texts]) for e in embedders.values())
        cosines = (today * other).sum(axis=1)
        single = [[t] for t in questions[:60] + notes[:60]]
        batched = [notes[i : i + 100] for i in range(0, min(len(notes), 400), 100)]
        cpu: dict[str, dict[str, list[float]]] = {name: {"one at a time": [], "requests of 100": []} for name in embedders}
        for _ in range(args.rounds):
            for name, embedder in embedders.items():
                cpu[name]["one at a time"].append(cpu_per_text(embedder, single))
                cpu[name]["requests of 100"].append(cpu_per_text(embedder, batched))
    medians = {name: {way: round(statistics.median(v), 3) for way, v in ways.items()} for name, ways in cpu.items()}
    speedup = {way: round(medians["as shipped"][way] / medians["attention fused"][way], 3) for way in medians["as shipped"]}
    result = {
        "nodes": {"as shipped": before, "attention fused": len(model.graph.node)}, "attention_blocks_fused": fused,
        "texts": len(texts), "min_cosine": float(cosines.min()), "max_abs_diff": float(np.abs(today - other).max()),
        "cpu_ms_per_text": medians, "speedup": speedup, "rounds": args.rounds,
    }
    print(f"{fused} attention blocks fused, {before} -> {len(model.graph.node)} nodes; {len(texts)} texts: "
          f"min cosine {result['min_cosine']:.8f}, max abs diff {result['max_abs_diff']:.3g}")
    print(table(["graph", "CPU ms per text, one at a time", "CPU ms per turn, requests of 100"],
                [[name, m["one at a time"], m["requests of 100"]] for name, m in medians.items()]
                + [["speed-up", speedup["one at a time"], speedup["requests of 100"]]]))
    print(f"written: {write_result('attention_fusion', result, data_digest(args.data))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
