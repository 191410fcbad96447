"""The input channels the local model's int8 products leave in float, found on text that is
no benchmark's, and what the int8 products change: the vectors, and the CPU of a text.

    .venv/bin/pip install onnx                 # to read the activations; the server does not need it
    .venv/bin/python -m bench.int8_outliers [--rounds 3]

``adapters/embedders/quantized_rows.multiply_in_int8`` quantizes each product's input to
uint8 on every run. A channel whose values reach far beyond the others' would take the
256 levels for itself, so the channels listed in ``local.MINILM_OUTLIERS`` are multiplied in
float. Found here: every sentence of ``bench/sets/calibration/sentences.txt`` (400 sentences
of the project's own documentation) goes alone through the pinned model with each product's
input as an extra output; for each product, the channels whose largest magnitude exceeds
``--ratio`` times the median channel's, the ``--cap`` largest at most. Then each product's
channels are tried in int8 too, and left there where the vectors of the same sentences and of
their first one and two words stay within ``--tolerance`` of the lowest cosine with the float
products (``in_float_where_needed``). The
table printed is compared with the pinned one (the script says when they differ and prints
the new one).

Then, on texts of every data set the project measures on (LoCoMo turns and questions, the
three paraphrase sets' notes and questions in four languages, the knowledge-update notes),
each alone: the cosine between the server's vector with int8 products and with float ones,
and the CPU of a text (LoCoMo turns and questions, one at a time, medians of ``--rounds``
alternating rounds). Writes ``bench/results/int8_outliers.json``.
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

import numpy as np

from bench.client import REPO, table, write_result
from bench.datasets import LOCOMO_DIR, PARAPHRASE_SET, load_locomo, load_paraphrase
from bench.model_runs import mean_pooled, text_feeds

CALIBRATION = REPO / "bench/sets/calibration/sentences.txt"
PARAPHRASE_SETS = (PARAPHRASE_SET, REPO / "bench/sets/paraphrase2/set.json", REPO / "bench/sets/paraphrase3/set.json")
KNOWLEDGE = REPO / "bench/sets/knowledge_update"


def products(model: Any) -> list[tuple[str, str]]:
    """(input, int8 weight) of each product ``MatMul(a, Mul(Cast(q), s))`` of the graph."""
    producer = {output: node for node in model.graph.node for output in node.output}
    initializers = {i.name for i in model.graph.initializer}
    found = []
    for node in model.graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if cast is not None and cast.op_type == "Cast" and cast.input[0] in initializers:
            found.append((node.input[0], cast.input[0]))
    return found


def channel_peaks(texts: list[str]) -> dict[str, np.ndarray]:
    """Per int8 weight, the largest magnitude of each channel of its product's input."""
    import onnx
    import onnxruntime

    from local_mcp_memory.adapters.embedders import local

    model = onnx.load_from_string(local._verified(local.default_model_path(), local.MODEL_SHA256, "model", ""))
    found = products(model)
    for activations in dict.fromkeys(a for a, _ in found):
        model.graph.output.append(onnx.helper.make_tensor_value_info(activations, onnx.TensorProto.FLOAT, None))
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer, _ = local.LocalOnnxEmbedder()._load()
    names = list(dict.fromkeys(a for a, _ in found))
    peaks: dict[str, np.ndarray] = {}
    for text in texts:
        outs = session.run(names, text_feeds(tokenizer.encode(text).ids))
        for name, out in zip(names, outs, strict=True):
            peak = np.abs(out.reshape(-1, out.shape[-1])).max(axis=0)
            peaks[name] = peak if name not in peaks else np.maximum(peaks[name], peak)
    return {weight: peaks[a] for a, weight in found}


def choose(peaks: dict[str, np.ndarray], ratio: float, cap: int) -> dict[str, tuple[int, ...]]:
    chosen = {}
    for weight, peak in peaks.items():
        median = float(np.median(peak))
        largest = [int(c) for c in np.argsort(-peak, kind="stable")[:cap] if peak[c] > ratio * median]
        chosen[weight] = tuple(sorted(largest))
    return chosen


TOLERANCE = 3e-4
"""How far the lowest cosine over the calibration texts (int8 products against float) may fall
below the one with every chosen channel in float when a product's channels go to int8 too
(``in_float_where_needed``): from 0.9984 with all of them (a text of one or two words is the
lowest) to 0.9981, above the 0.998 the server holds every vector to."""


def in_float_where_needed(chosen: dict[str, tuple[int, ...]], texts: list[str],
                          tolerance: float = TOLERANCE) -> tuple[dict[str, tuple[int, ...]], list[dict[str, Any]]]:
    """``chosen`` less the float parts ``texts`` do not need, and each try: a product's channels
    in float cost a few small operators of every run (a slice, a product, a sum), and in some
    products the channels change no vector beyond the int8 rounding. Each product with channels
    (the query, key and value of a layer as one: they share an input and are multiplied as one)
    is tried in int8 alone, then in the order of what that costs the lowest cosine with the
    float products over ``texts``, kept in int8 while the lowest cosine with every product kept
    so far stays within ``tolerance`` of the one with all of ``chosen``."""
    import onnx
    import onnxruntime

    from local_mcp_memory.adapters.embedders import local
    from local_mcp_memory.adapters.embedders.quantized_rows import multiply_in_int8

    plain = local._verified(local.default_model_path(), local.MODEL_SHA256, "model", "")
    graph = local.rewritten_model(local.default_model_path(), local.MODEL_SHA256, int8=False)[0]  # the server's, float products
    tokenizer, _ = local.LocalOnnxEmbedder()._load()
    feeds = [text_feeds(tokenizer.encode(text).ids) for text in texts]

    def vectors(model: bytes) -> np.ndarray:
        session = onnxruntime.InferenceSession(model, sess_options=local.session_options(onnxruntime, 1),
                                               providers=["CPUExecutionProvider"])
        return np.vstack([mean_pooled(session, feed) for feed in feeds])

    reference = vectors(graph)

    def lowest(outliers: dict[str, tuple[int, ...]]) -> float:
        return float(np.min(np.sum(vectors(multiply_in_int8(graph, outliers)[0]) * reference, axis=1)))

    by_input: dict[str, list[str]] = {}
    for activations, weight in products(onnx.load_from_string(plain)):
        if chosen.get(weight):
            by_input.setdefault(activations, []).append(weight)
    groups = list(by_input.values())
    bar = lowest(chosen) - tolerance
    alone = {tuple(group): lowest({**chosen, **{w: () for w in group}}) for group in groups}
    kept, tries = dict(chosen), []
    for group in sorted(alone, key=lambda g: -alone[g]):
        trial = {**kept, **{w: () for w in group}}
        reached = alone[group] if alone[group] < bar else lowest(trial)  # under the bar alone: not tried with the others
        tries.append({"products": list(group), "alone": round(alone[group], 5), "with_those_before": round(reached, 5),
                      "in_int8": reached >= bar})
        if reached >= bar:
            kept = trial
    return kept, tries


def short_texts(sentences: list[str]) -> list[str]:
    """The first word and the first two words of each of ``sentences`` (once each): a note or a
    query can be that short, and the fewer its tokens, the more one of them weighs in its vector."""
    heads = [" ".join(sentence.split()[:n]) for n in (1, 2) for sentence in sentences]
    return list(dict.fromkeys(head for head in heads if head))


def held_out_texts(locomo: Path) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {"LoCoMo turns": [], "LoCoMo questions": []}
    for conversation in load_locomo(locomo):
        texts["LoCoMo turns"] += [n["text"] for n in conversation.notes[::5]]
        texts["LoCoMo questions"] += [q.text for q in conversation.questions[::2]]
    texts["paraphrase notes and questions"] = []
    for path in PARAPHRASE_SETS:
        data = load_paraphrase(Path(path))
        texts["paraphrase notes and questions"] += data.notes + [query for query, _, _ in data.queries]
    texts["knowledge-update notes and questions"] = []
    for part in ("dev", "heldout", "final"):
        for project in json.loads((KNOWLEDGE / f"{part}.json").read_text())["projects"]:
            for pair in project["pairs"]:
                texts["knowledge-update notes and questions"] += [pair["old"], pair["new"], pair["question"]]
            texts["knowledge-update notes and questions"] += project["related"] + project["unrelated"]
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.int8_outliers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ratio", type=float, default=2.0)
    parser.add_argument("--cap", type=int, default=24)
    parser.add_argument("--tolerance", type=float, default=TOLERANCE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    args = parser.parse_args(argv)

    from local_mcp_memory.adapters.embedders.local import MINILM_OUTLIERS, LocalOnnxEmbedder

    calibration = [line for line in CALIBRATION.read_text().splitlines() if line.strip()]
    peaks = choose(channel_peaks(calibration), args.ratio, args.cap)
    chosen, tries = in_float_where_needed(peaks, calibration + short_texts(calibration), args.tolerance)
    print(table(["products (one: a layer's query, key and value)", "lowest cosine, it alone in int8",
                 "with those before it", "in int8"],
                [[", ".join(t["products"]), f"{t['alone']:.5f}", f"{t['with_those_before']:.5f}", t["in_int8"]] for t in tries]))
    pinned = {k: tuple(v) for k, v in MINILM_OUTLIERS.items()}
    same = chosen == pinned
    print(f"{len(chosen)} products, {sum(1 for c in chosen.values() if c)} with channels in float, "
          f"{sum(map(len, chosen.values()))} channels; "
          f"{'the same as' if same else 'NOT the same as'} local.MINILM_OUTLIERS")
    if not same:
        print("MINILM_OUTLIERS = {")
        for weight, channels in chosen.items():
            print(f'    "{weight}": {channels},')
        print("}")

    int8, float_ = LocalOnnxEmbedder(products="int8"), LocalOnnxEmbedder(products="float")
    rows = []
    cosines: dict[str, dict[str, float]] = {}
    held_out = held_out_texts(args.locomo)
    for name, texts in held_out.items():
        ours = np.vstack([int8.embed([t]) for t in texts])
        theirs = np.vstack([float_.embed([t]) for t in texts])
        cos = np.sum(ours * theirs, axis=1)
        cosines[name] = {"texts": len(texts), "min": float(cos.min()), "p1": float(np.percentile(cos, 1)), "median": float(np.median(cos))}
        rows.append([name, len(texts), f"{cos.min():.5f}", f"{np.percentile(cos, 1):.5f}", f"{np.median(cos):.5f}"])
    print(table(["texts (each alone)", "n", "cosine min", "p1", "median"], rows))

    cpu: dict[str, dict[str, list[float]]] = {}
    for name in ("LoCoMo turns", "LoCoMo questions"):
        texts = held_out[name][:300]
        cpu[name] = {"float": [], "int8": []}
        for _ in range(args.rounds):
            for label, embedder in (("float", float_), ("int8", int8)):
                start = time.process_time()
                for text in texts:
                    embedder.embed([text])
                cpu[name][label].append((time.process_time() - start) / len(texts) * 1e3)
    timing_rows = [[name, f"{statistics.median(v['float']):.2f} ms", f"{statistics.median(v['int8']):.2f} ms",
                    f"{statistics.median(v['float']) / statistics.median(v['int8']):.2f}x"] for name, v in cpu.items()]
    print(table(["one text at a time", "CPU float products", "CPU int8 products", "ratio"], timing_rows))
    write_result("int8_outliers", {"ratio": args.ratio, "cap": args.cap, "tolerance": args.tolerance, "same_as_pinned": same,
                                   "outliers": {k: list(v) for k, v in chosen.items()},
                                   "by_peaks": {k: list(v) for k, v in peaks.items()}, "float_parts_tried": tries,
                                   "cosine": cosines, "cpu_ms_per_text": cpu})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
