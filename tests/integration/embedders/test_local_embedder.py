"""The default local embedder: all-MiniLM-L6-v2 (int8 ONNX) must give the model's real
vectors, offline, checked files only."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import structlog

from local_mcp_memory.adapters.embedders import local
from local_mcp_memory.adapters.embedders.attention import fuse_attention
from local_mcp_memory.adapters.embedders.gelu import fuse_gelu
from local_mcp_memory.adapters.embedders.local import (
    HEADS,
    MINILM_OUTLIERS,
    MODEL_SHA256,
    UNFUSED,
    LocalOnnxEmbedder,
    default_model_path,
    default_tokenizer_path,
    rewritten_model,
)
from local_mcp_memory.adapters.embedders.products import int8_dot_products, wide_int8_products
from local_mcp_memory.adapters.embedders.quantized_rows import gather_before_dequantizing, multiply_in_int8
from local_mcp_memory.application.errors import EmbedderNotConfigured

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = json.loads((ROOT / "tests/data/minilm_reference.json").read_text())
INT8_REFERENCE = json.loads((ROOT / "tests/data/minilm_int8_reference.json").read_text())


@pytest.fixture(scope="module")
def minilm() -> LocalOnnxEmbedder:
    embedder = LocalOnnxEmbedder()
    embedder.load()
    return embedder


def _cos(embedder: LocalOnnxEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b], "passage")
    return float(va @ vb)


def test_reports_the_local_provider_and_model_name(minilm: LocalOnnxEmbedder) -> None:
    assert (minilm.provider, minilm.model) == ("local", "all-MiniLM-L6-v2")


def test_vectors_are_384_dimensional_float32(minilm: LocalOnnxEmbedder) -> None:
    vectors = minilm.embed(["hello", "world"], "passage")
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32


def test_vectors_match_the_fp32_reference_model(minilm: LocalOnnxEmbedder) -> None:
    # tests/data/make_minilm_reference.py: an independent numpy forward pass of the fp32 weights
    texts = [entry["text"] for entry in REFERENCE["entries"]]
    vectors = minilm.embed(texts, "passage")
    for entry, vector in zip(REFERENCE["entries"], vectors):
        assert float(vector @ np.asarray(entry["vector"], dtype=np.float32)) >= 0.998, entry["text"]


@pytest.mark.parametrize("products", ["float", "auto"])
def test_a_request_matches_the_pinned_int8_model_sentence_by_sentence(products: str) -> None:
    # tests/data/make_minilm_int8_reference.py: each sentence embedded alone by the pinned model
    # (float products); here together, as the server runs a request (float products: padded to
    # the longest; int8 ones where the CPU has them), so tokenizer, padding and pooling all count
    assert INT8_REFERENCE["sha256"] == MODEL_SHA256
    texts = [entry["text"] for entry in INT8_REFERENCE["entries"]]
    vectors = LocalOnnxEmbedder(products=products).embed(texts, "passage")  # type: ignore[arg-type]
    for entry, vector in zip(INT8_REFERENCE["entries"], vectors, strict=True):
        reference = np.asarray(entry["vector"], dtype=np.float32)
        cosine = float(vector @ reference) / float(np.linalg.norm(reference))
        assert cosine >= 0.999, (entry["text"], cosine)


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [
        ([5, 3, 9, 4], [[1, 3, 0, 2]]),  # few short texts: one batch, shortest first
        ([40] * 5, [[0, 1, 2], [3, 4]]),  # 3 x 40 tokens fit 128, a fourth would not
        ([200, 10], [[1], [0]]),  # a text longer than the budget goes alone
        ([1] * 7, [[0, 1, 2, 3], [4, 5, 6]]),  # at most batch_size texts
        ([], []),
    ],
)
def test_with_float_products_batches_hold_texts_of_similar_length_within_the_token_budget(lengths, expected) -> None:
    embedder = LocalOnnxEmbedder(batch_size=4, batch_tokens=128, products="float")
    assert embedder._batches(lengths) == expected


def test_with_int8_products_every_text_runs_alone() -> None:
    # the products' input scale is one per run: a batch would share it between its texts
    embedder = LocalOnnxEmbedder(batch_size=4, batch_tokens=128, products="int8")
    embedder.load()
    assert embedder._batches([5, 3, 9, 4]) == [[1], [3], [0], [2]]


def test_texts_of_very_different_lengths_embed_as_they_do_alone(minilm: LocalOnnxEmbedder) -> None:
    texts = ["ok", "a much longer note about the deployment pipeline and its retries " * 6, "short one", "mid-sized note here"]
    together = minilm.embed(texts)
    for text, vector in zip(texts, together):
        assert float(minilm.embed([text])[0] @ vector) > 0.9999


def test_a_request_s_batches_run_side_by_side_give_each_batch_s_vectors_bit_for_bit() -> None:
    minilm = LocalOnnxEmbedder(workers=2)
    words = "deploy gateway billing retries timeout worker note search painting".split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(3 + i % 40)) for i in range(60)]
    tokenizer, _ = minilm._load()
    batches = minilm._batches([len(e.ids) for e in tokenizer.encode_batch(texts)])
    assert len(batches) > 4  # run on the pool, two at a time
    together = minilm.embed(texts)
    for rows in batches:
        alone = minilm.embed([texts[i] for i in rows])  # one batch: run on the calling thread
        assert np.array_equal(together[rows], alone)


def test_one_intra_op_thread_gives_the_vectors_of_two(minilm: LocalOnnxEmbedder) -> None:
    """The session runs on the calling thread alone (``threads=1``); stored vectors were
    embedded with two. A product split over threads may sum in another order, so not bit
    for bit: every vector within a cosine of 0.99999, one text at a time and in batches."""
    two = LocalOnnxEmbedder(threads=2, workers=1)
    words = "when did Caroline move to Sweden the support group painting adoption agency career counselling".split()
    texts = [" ".join(words[(i * 7 + j) % len(words)] for j in range(2 + (i * 5) % 120)) for i in range(48)]
    texts += ["What did Melanie paint recently?", "x", "東京の天気は？", "word " * 300]
    for together in (False, True):
        ours = minilm.embed(texts) if together else np.vstack([minilm.embed([t], "query") for t in texts])
        theirs = two.embed(texts) if together else np.vstack([two.embed([t], "query") for t in texts])
        assert float(np.min(np.sum(ours * theirs, axis=1))) >= 0.99999


def test_one_text_is_tokenized_as_it_would_be_in_a_batch(minilm: LocalOnnxEmbedder) -> None:
    """``embed`` of one text (every query, every add) tokenizes it with ``encode``, a batch
    with ``encode_batch``: the same ids, mask and types, awkward texts included."""
    tokenizer, _ = minilm._load()
    texts = ["", " ", "x", "Übergrößenträger café naïve", "东京の天気は？ 🙂🚀", "a\x00b\u200bc\ufeff\r\n\t",
             "word " * 400, "<script>alert('x')</script> [CLS] [SEP] [PAD] [UNK]", "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace")]
    for text in texts:
        alone, (batched,) = tokenizer.encode(text), tokenizer.encode_batch([text])
        assert (alone.ids, alone.attention_mask, alone.type_ids) == (batched.ids, batched.attention_mask, batched.type_ids)
    assert len(tokenizer.encode("word " * 400).ids) == LocalOnnxEmbedder.MAX_TOKENS


def test_tokenizer_gives_the_reference_token_ids() -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    for entry in REFERENCE["entries"]:
        assert tokenizer.encode(entry["text"]).ids == entry["token_ids"]


def test_paraphrases_score_higher_than_unrelated_sentences(minilm: LocalOnnxEmbedder) -> None:
    assert _cos(minilm, "A man is eating food.", "A man is eating a piece of bread.") > 0.6
    assert _cos(minilm, "A man is eating food.", "The new movie is awesome.") < 0.2
    related = _cos(minilm, "How do I reset my password?", "Steps to change a forgotten password")
    unrelated = _cos(minilm, "How do I reset my password?", "The cat sleeps on the warm windowsill")
    assert related > unrelated + 0.3


def test_long_texts_are_truncated_not_refused(minilm: LocalOnnxEmbedder) -> None:
    long_text = "The storage layer writes a sidecar file next to the index. " * 200
    (vector,) = minilm.embed([long_text], "passage")
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3
    (prefix,) = minilm.embed(["The storage layer writes a sidecar file next to the index. " * 30], "passage")
    assert float(vector @ prefix) > 0.99  # both cut at 256 tokens


def test_construction_loads_nothing() -> None:
    code = (
        "import sys; from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder; LocalOnnxEmbedder(); "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("spare", [False, True])
def test_concurrent_first_calls_load_each_session_once(monkeypatch: pytest.MonkeyPatch, spare: bool) -> None:
    _solo(monkeypatch, spare)
    embedder = LocalOnnxEmbedder(solo_threads=2)
    results: list[np.ndarray] = []
    with structlog.testing.capture_logs() as logs:
        threads = [threading.Thread(target=lambda: results.append(embedder.embed(LONG[:1]))) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 4 and all(np.array_equal(r, results[0]) for r in results)
    loaded = [event["spinning"] for event in logs if event["event"] == "embedder_loaded"]
    assert sorted(set(loaded)) == sorted(loaded)  # each session at most once
    assert loaded == [False] if not spare else True in loaded


def test_a_model_file_with_the_wrong_digest_is_refused() -> None:
    embedder = LocalOnnxEmbedder(model_sha256="0" * 64)
    with pytest.raises(EmbedderNotConfigured, match="sha256.*reinstall"):
        embedder.embed(["hi"], "passage")


def test_a_tampered_tokenizer_is_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    shutil.copy(default_tokenizer_path(), tampered)
    with tampered.open("a") as fh:
        fh.write(" ")
    with pytest.raises(EmbedderNotConfigured, match="tokenizer file .* has sha256"):
        LocalOnnxEmbedder(tokenizer_path=tampered).embed(["hi"], "passage")


def test_a_missing_model_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(EmbedderNotConfigured, match="cannot be read"):
        LocalOnnxEmbedder(model_path=tmp_path / "absent.onnx").embed(["hi"], "passage")


OFFLINE_SCRIPT = r"""
import json, socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("network use is forbidden in this test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
vectors = LocalOnnxEmbedder().embed(["A man is eating food."], "passage")
print(json.dumps({"attempts": attempts, "head": vectors[0][:8].tolist()}))
"""

NOWHERE = "http://127.0.0.1:9"
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_ENDPOINT": NOWHERE,
    "HTTP_PROXY": NOWHERE,
    "HTTPS_PROXY": NOWHERE,
    "ALL_PROXY": NOWHERE,
    "http_proxy": NOWHERE,
    "https_proxy": NOWHERE,
    "all_proxy": NOWHERE,
    "NO_PROXY": "",
    "no_proxy": "",
}


def _unshare_works() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    return subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0


def test_the_local_model_runs_without_any_network(minilm: LocalOnnxEmbedder) -> None:
    # In a network namespace with no interface up when unshare -n is permitted; otherwise
    # with every proxy and hub variable pointed nowhere. Either way sockets are refused.
    isolated = _unshare_works()
    prefix = ["unshare", "-n"] if isolated else []
    env = {**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [*prefix, sys.executable, "-c", OFFLINE_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["attempts"] == []
    expected = minilm.embed(["A man is eating food."], "passage")[0][:8]
    np.testing.assert_allclose(report["head"], expected, atol=1e-5)


def test_tables_gathered_as_int8_give_the_shipped_model_s_numbers_bit_for_bit() -> None:
    import onnxruntime

    texts = ["ok", "Failed webhooks are retried with exponential backoff, five tries at most.", "Zürich, 45 ms"]
    tokenizer, _ = LocalOnnxEmbedder(products="float")._load()
    model, rewrites = rewritten_model(default_model_path(), MODEL_SHA256, int8=False, fused=False)
    assert (rewrites.tables, rewrites.attention, rewrites.products) == (2, 0, 0)
    # the same fusions left out as the server's session: the rewrite is what is compared
    rewritten = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"], disabled_optimizers=list(UNFUSED))
    shipped = onnxruntime.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"],
                                           disabled_optimizers=list(UNFUSED))
    for text in texts:
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        (mine,) = rewritten.run(["last_hidden_state"], feeds)
        (theirs,) = shipped.run(["last_hidden_state"], feeds)
        assert np.array_equal(mine, theirs), text


@pytest.mark.parametrize("int8", [False, True])
def test_attention_and_gelu_in_one_operator_change_the_vectors_by_rounding_only(int8: bool) -> None:
    # every kind of text, alone and (float products) in one padded batch: the mask as the
    # fused operator reads it must hide the padding as the export's additive mask did. With
    # int8 products each product's input is rounded to 256 levels on every run, so a last-bit
    # difference may move a value to the next level: the pooled vectors are compared there.
    import onnxruntime

    tokenizer, _ = LocalOnnxEmbedder(products="float")._load()
    sessions = {}
    for fused in (False, True):
        model, rewrites = rewritten_model(default_model_path(), MODEL_SHA256, int8=int8, fused=fused)
        assert (rewrites.attention, rewrites.gelu) == ((6, 6) if fused else (0, 0))
        sessions[fused] = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"],
                                                       disabled_optimizers=list(UNFUSED))
    encodings = [tokenizer.encode(text) for text in AWKWARD]
    batches = [[e] for e in encodings] + ([] if int8 else [encodings])
    for batch in batches:
        width = max(len(e.ids) for e in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(batch):
            ids[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        plain, fused_out = (sessions[f].run(["last_hidden_state"], feeds)[0] for f in (False, True))
        for row in range(len(batch)):
            kept = mask[row] == 1  # padded positions are never pooled
            if not int8:
                np.testing.assert_allclose(fused_out[row][kept], plain[row][kept], atol=1e-4)
            else:
                mine, theirs = fused_out[row][kept].mean(axis=0), plain[row][kept].mean(axis=0)
                assert float(mine @ theirs / np.linalg.norm(mine) / np.linalg.norm(theirs)) >= 0.999


def test_the_fusions_left_out_change_the_float_products_vectors_by_rounding_only() -> None:
    import onnxruntime

    tokenizer, unfused = LocalOnnxEmbedder(products="float")._load()
    fused = onnxruntime.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"])
    for text in AWKWARD:
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        (mine,) = unfused.run(["last_hidden_state"], feeds)
        (theirs,) = fused.run(["last_hidden_state"], feeds)
        np.testing.assert_allclose(mine, theirs, atol=2e-5, err_msg=text)


def test_the_pinned_model_has_its_two_embedding_tables_gathered_as_int8() -> None:
    model = default_model_path().read_bytes()
    rewritten, tables = gather_before_dequantizing(model)
    assert tables == 2 and len(rewritten) < len(model)
    assert gather_before_dequantizing(rewritten) == (rewritten, 0)  # nothing left to rewrite


def test_the_pinned_model_has_all_its_36_matrix_products_in_int8_and_only_those_named() -> None:
    model = gather_before_dequantizing(default_model_path().read_bytes())[0]
    assert len(MINILM_OUTLIERS) == 36
    rewritten, products = multiply_in_int8(model, MINILM_OUTLIERS)
    # each layer's query, key and value are one product of their matrices side by side, split after
    assert products == 36 and rewritten.count(b"DynamicQuantizeMatMul") == 24 and rewritten.count(b"\x22\x05Split") == 6
    assert b"attention.self.query.bias" not in rewritten and b"val_49_q" not in rewritten  # added in: gone
    # every product adds its bias itself (36 Adds fewer); one with channels in float adds its two
    # parts: 25 products with channels, whose 15 queries, keys and values are 5 now
    names = list(MINILM_OUTLIERS)  # per layer: query, key, value, output, the two feed-forward ones
    with_channels = [name for name in names if MINILM_OUTLIERS[name]]
    merged = [layer for layer in range(6) if MINILM_OUTLIERS[names[6 * layer]]]
    assert (len(with_channels), len(merged)) == (25, 5)
    assert rewritten.count(b"\x22\x03Add") == model.count(b"\x22\x03Add") - 36 + len(with_channels) - 2 * len(merged)
    assert multiply_in_int8(rewritten, MINILM_OUTLIERS) == (rewritten, 0)  # nothing left to rewrite
    assert multiply_in_int8(model, {}) == (model, 0)  # a product not named stays float
    one = dict(list(MINILM_OUTLIERS.items())[:1])
    assert multiply_in_int8(model, one)[1] == 1
    assert multiply_in_int8(model, {name: (0, 100_000) for name in one}) == (model, 0)  # no such channel: left alone


def test_the_pinned_model_has_its_six_attention_blocks_fused_and_a_graph_that_differs_is_left_alone() -> None:
    model = gather_before_dequantizing(default_model_path().read_bytes())[0]
    fused, blocks = fuse_attention(model, HEADS)
    assert blocks == 6 and fused.count(b"\x22\x09Attention") == 6 and b"MultiHeadAttention" not in fused
    assert b"Softmax" not in fused and b"IsNaN" not in fused  # the old blocks' nodes are gone
    assert fuse_attention(fused, HEADS) == (fused, 0)  # nothing left to fuse
    assert fuse_attention(model.replace(b"IsNaN", b"IsNaX"), HEADS)[1] == 0  # one node of another kind
    assert fuse_attention(model.replace(b"attention_mask", b"attention_masX"), HEADS)[1] == 0  # no mask input


def test_the_pinned_model_has_its_six_gelus_fused_and_a_graph_that_differs_is_left_alone() -> None:
    model = gather_before_dequantizing(default_model_path().read_bytes())[0]
    fused, count = fuse_gelu(model)
    assert count == 6 and fused.count(b"\x22\x04Gelu") == 6 and b"\x22\x03Erf" not in fused
    assert fuse_gelu(fused) == (fused, 0)  # nothing left to fuse
    assert fuse_gelu(model.replace(b"\x22\x03Erf", b"\x22\x03Erx"))[1] == 0  # one node of another kind


# every kind of text a note or a query can be: empty, one word, numbers and code, other
# scripts, emoji, control characters, at the truncation limit and beyond it
AWKWARD = ["", "x", "ok", "What did Melanie paint recently?", "v2.3.1 → 45 ms p95 at 600 req/min; retry=5 (exp. backoff)",
           "def f(x):\n    return {'a': [1, 2, 3]}", "東京の天気は？ 🙂🚀", "Übergrößenträger café naïve",
           "a\x00b\u200bc\ufeff\r\n\t", "[CLS] [SEP] [PAD] [UNK] <script>alert(1)</script>",
           "The deploy pipeline retries twice and then pages the on-call engineer. " * 12, "word " * 400,
           "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "0" * 300]


def test_int8_products_keep_every_vector_within_a_cosine_of_0_998_of_the_float_products() -> None:
    # where the CPU has no int8 dot products "auto" is the float products: equal, and the bar holds
    ours, theirs = LocalOnnxEmbedder().embed(AWKWARD), LocalOnnxEmbedder(products="float").embed(AWKWARD)
    cosines = np.sum(ours * theirs, axis=1)
    assert float(cosines.min()) >= 0.998, dict(zip(AWKWARD, cosines.tolist()))


def test_int8_products_with_unsigned_weights_keep_every_vector_within_a_cosine_of_0_998_of_the_float_products() -> None:
    # uint8 x uint8 kernels widen each value to 16 bits on every CPU: nothing saturates
    unsigned = LocalOnnxEmbedder(products="int8", unsigned_weights=True)
    ours, theirs = unsigned.embed(AWKWARD), LocalOnnxEmbedder(products="float").embed(AWKWARD)
    assert unsigned._alone  # the products did run in int8
    cosines = np.sum(ours * theirs, axis=1)
    assert float(cosines.min()) >= 0.998, dict(zip(AWKWARD, cosines.tolist()))


def test_unsigned_weights_give_the_signed_weights_sums_or_are_what_this_cpu_gets() -> None:
    # with int8 dot products both kernels sum exactly, so the vectors are the same; without them
    # the signed kernel's pairs of products may saturate, and "auto" gives the unsigned weights
    if int8_dot_products():
        signed = LocalOnnxEmbedder(products="int8", unsigned_weights=False).embed(AWKWARD)
        unsigned = LocalOnnxEmbedder(products="int8", unsigned_weights=True).embed(AWKWARD)
        np.testing.assert_allclose(unsigned, signed, atol=1e-6)
    else:
        chosen = LocalOnnxEmbedder()
        assert chosen._int8 is wide_int8_products() and chosen._unsigned is wide_int8_products()


def test_the_pinned_model_s_products_with_unsigned_weights_read_no_int8_matrix() -> None:
    model = gather_before_dequantizing(default_model_path().read_bytes())[0]
    rewritten, products = multiply_in_int8(model, MINILM_OUTLIERS, unsigned=True)
    assert products == 36 and rewritten.count(b"DynamicQuantizeMatMul") == 24
    assert rewritten.count(b"/weights_uint8") == 2 * 24 and rewritten.count(b"/zero_points") == 2 * 24
    assert b"/merged_q" not in rewritten  # a layer's query, key and value side by side, as uint8 only
    # the rows multiplied in float are dequantized once, at load: no gather of int8 rows per run
    # (the two embedding tables' gathers are the only ones); 15 products with channels, as signed
    assert rewritten.count(b"/rows_int8") == model.count(b"/rows_int8") and rewritten.count(b"/rows_float") == 2 * 15
    assert multiply_in_int8(rewritten, MINILM_OUTLIERS, unsigned=True) == (rewritten, 0)


def test_a_text_s_vector_does_not_depend_on_the_other_texts_of_its_request(minilm: LocalOnnxEmbedder) -> None:
    together = minilm.embed(AWKWARD)
    alone = np.vstack([minilm.embed([text]) for text in AWKWARD])
    assert np.array_equal(together, alone) or not minilm._alone  # float batches: within 1e-5
    assert np.allclose(together, alone, atol=1e-5)


@pytest.mark.parametrize(
    ("cpuinfo", "expected"),
    [
        ("processor: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni avx512_bf16\n", True),
        ("flags\t\t: fpu sse2 avx2 avx_vnni\n", True),
        ("flags\t\t: fpu sse2 avx2 avx512f avx512bw\n", False),  # AVX-512 without VNNI
        ("Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm asimddp\n", True),
        ("Features\t: fp asimd evtstrm\n", False),
        ("", False),
    ],
)
def test_int8_products_are_chosen_by_the_cpu_s_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpuinfo: str, expected: bool
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    path = tmp_path / "cpuinfo"
    path.write_text(cpuinfo)
    assert int8_dot_products(path) is expected
    assert int8_dot_products(tmp_path / "missing") is False


def test_a_model_file_that_is_no_onnx_model_is_refused_by_name(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"\x3a\xff\xff\xff\xff\x0f not a graph")  # a graph field longer than the file
    digest = hashlib.sha256(fake.read_bytes()).hexdigest()
    embedder = LocalOnnxEmbedder(model_path=fake, model_sha256=digest)
    with pytest.raises(EmbedderNotConfigured, match="is no ONNX model"):
        embedder.embed(["hello"])


def test_without_memory_files_the_model_loads_through_a_temporary_file(
    minilm: LocalOnnxEmbedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    embedder = LocalOnnxEmbedder()
    text = ["the model file is written, read and removed"]
    assert np.array_equal(embedder.embed(text), minilm.embed(text))
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def _operator_renamed(monkeypatch: pytest.MonkeyPatch, operator: bytes) -> None:
    """Every model the embedder builds has ``operator`` renamed to one no onnxruntime build
    has (same length, so the protobuf stays well formed)."""
    rewrite = local.rewritten_model

    def renamed(*args: object, **kwargs: object) -> tuple[bytes, object]:
        model, rewrites = rewrite(*args, **kwargs)  # type: ignore[arg-type]
        return model.replace(operator, operator[:-1] + b"X"), rewrites

    monkeypatch.setattr(local, "rewritten_model", renamed)


def test_an_onnxruntime_that_cannot_run_the_model_at_all_is_a_clear_error_naming_the_release_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _operator_renamed(monkeypatch, b"LayerNormalization")  # in every graph
    with pytest.raises(EmbedderNotConfigured, match=r"cannot run the local model .*pip install 'onnxruntime>=1\.23'"):
        LocalOnnxEmbedder().embed(["hello"])


def test_the_oldest_onnxruntime_named_is_the_one_pyproject_requires() -> None:
    import tomllib

    from local_mcp_memory.adapters.embedders.local import MIN_ONNXRUNTIME

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"onnxruntime>={MIN_ONNXRUNTIME}" in dependencies


@pytest.mark.parametrize("operator", [b"DynamicQuantizeMatMul", b"Attention"])
def test_an_onnxruntime_without_its_own_operators_gets_the_plain_graph(
    monkeypatch: pytest.MonkeyPatch, operator: bytes
) -> None:
    _operator_renamed(monkeypatch, operator)
    embedder = LocalOnnxEmbedder(products="int8")
    with structlog.testing.capture_logs() as logs:
        vectors = embedder.embed(AWKWARD[:4])
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["onnxruntime_operators_unavailable"]
    assert not embedder._alone
    assert np.allclose(vectors, LocalOnnxEmbedder(products="float").embed(AWKWARD[:4]), atol=1e-5)


def _solo(monkeypatch: pytest.MonkeyPatch, spare: bool) -> None:
    """The machine seen as having a core to spare, or not."""
    monkeypatch.setattr(local, "spare_core", lambda cores, threads: spare)


LONG = ["What did Melanie paint recently, and which colours did she choose for the sunrise over the lake?",
        AWKWARD[4], AWKWARD[5], AWKWARD[9], AWKWARD[10], AWKWARD[11], AWKWARD[12], "東京の天気は？ 🙂🚀 " * 4]


@pytest.mark.parametrize("products", ["float", "auto"])
def test_a_long_text_alone_on_an_idle_machine_runs_on_two_spinning_threads_with_the_same_vector(
    monkeypatch: pytest.MonkeyPatch, products: str
) -> None:
    _solo(monkeypatch, True)
    solo = LocalOnnxEmbedder(products=products, solo_threads=2)  # type: ignore[arg-type]
    shared = LocalOnnxEmbedder(products=products, solo_threads=1)  # type: ignore[arg-type]
    tokenizer, _ = shared._load()
    assert min(len(tokenizer.encode(t).ids) for t in LONG) >= local.SOLO_TOKENS
    ours = np.vstack([solo.embed([t]) for t in LONG])
    theirs = np.vstack([shared.embed([t]) for t in LONG])
    assert solo._solo is not None and solo._shared is None  # only the session it needed
    assert shared._solo is None
    assert float(np.min(np.sum(ours * theirs, axis=1))) >= 0.99999  # bit for bit on the machines measured
    assert np.array_equal(solo.embed(LONG[:5]), shared.embed(LONG[:5]))  # a request: the shared session


def test_a_short_text_or_a_query_alone_runs_on_the_shared_session(monkeypatch: pytest.MonkeyPatch) -> None:
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(solo_threads=2)
    for text in ["", "x", "which runner do we use?", "What did Melanie paint recently?"]:
        embedder.embed([text])
    for text in LONG:
        embedder.embed([text], "query")  # its search runs the store's work on the other core meanwhile
    assert embedder._solo is None and embedder._shared is not None


def test_on_a_busy_machine_a_text_alone_runs_on_the_shared_session(monkeypatch: pytest.MonkeyPatch) -> None:
    _solo(monkeypatch, False)
    embedder = LocalOnnxEmbedder(solo_threads=2)
    embedder.embed(LONG[:1])
    assert embedder._solo is None and embedder._shared is not None


def test_a_text_alone_while_another_runs_alone_goes_to_the_shared_session(monkeypatch: pytest.MonkeyPatch) -> None:
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(solo_threads=2)
    embedder.embed(LONG[:1])
    assert embedder._solo is not None and embedder._shared is None
    with embedder._solo_free:  # one text running alone
        (second,) = embedder.embed(LONG[1:2])
    assert embedder._shared is not None
    assert float(second @ embedder.embed(LONG[1:2])[0]) >= 0.99999


def test_the_session_of_a_text_alone_is_built_as_the_first_one_was(monkeypatch: pytest.MonkeyPatch) -> None:
    _operator_renamed(monkeypatch, b"Attention")
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(products="int8", solo_threads=2)
    with structlog.testing.capture_logs() as logs:
        embedder.embed(AWKWARD[:4])  # the shared session: the plain graph, after one warning
        (vector,) = embedder.embed(LONG[:1])  # the solo one: the plain graph at once
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["onnxruntime_operators_unavailable"]
    assert [e["attention_fused"] for e in logs if e["event"] == "embedder_loaded"] == [0, 0]
    assert embedder._solo is not None


@pytest.mark.parametrize(("runnable", "cores", "spare"), [(1, 2, True), (2, 2, False), (5, 2, False), (1, 1, False),
                                                          (3, 4, True), (4, 4, False), (7, 8, True)])
def test_a_core_is_spare_while_the_threads_runnable_and_the_second_fit_the_cores(
    monkeypatch: pytest.MonkeyPatch, runnable: int, cores: int, spare: bool
) -> None:
    monkeypatch.setattr(local, "runnable_threads", lambda: runnable)
    assert local.spare_core(cores, 2) is spare


def test_the_threads_runnable_now_are_read_from_the_system() -> None:
    runnable = local.runnable_threads()
    if Path("/proc/loadavg").exists():
        assert runnable is not None and runnable >= 1  # this thread at least
    else:
        assert runnable is None


@pytest.mark.parametrize(("load", "spare"), [(0.4, True), (1.0, True), (1.3, False)])
def test_without_a_count_of_runnable_threads_the_load_average_stands_for_it(
    monkeypatch: pytest.MonkeyPatch, load: float, spare: bool
) -> None:
    monkeypatch.setattr(local, "runnable_threads", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 9.0, 9.0))
    assert local.spare_core(2, 2) is spare


def test_a_system_that_cannot_tell_its_load_has_no_core_to_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    def unknown() -> tuple[float, float, float]:
        raise OSError("load average unobtainable")

    monkeypatch.setattr(local, "runnable_threads", lambda: None)
    monkeypatch.setattr(os, "getloadavg", unknown)
    assert local.spare_core(2, 2) is False


def test_one_core_never_runs_a_text_on_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "usable_cores", lambda: 1)
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder()
    embedder.embed(LONG[:1])
    assert embedder._solo is None


@pytest.mark.parametrize("spinning", [False, True])
def test_only_the_session_of_a_text_alone_spins_and_it_stops_at_each_run_s_end(spinning: bool) -> None:
    import onnxruntime

    options = local.session_options(onnxruntime, 2, spinning)
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == ("1" if spinning else "0")
    if spinning:
        assert options.get_session_config_entry("session.force_spinning_stop") == "1"
    assert options.enable_cpu_mem_arena  # each session keeps an arena (what a batch grows it by goes back)


def _runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, object]]:
    """Each run of every embedder from now on: (texts, tokens of the longest, its run options)."""
    ran: list[tuple[int, int, object]] = []
    run = LocalOnnxEmbedder._run

    def spied(self: LocalOnnxEmbedder, session: object, encodings: list, options: object = None) -> np.ndarray:
        ran.append((len(encodings), max(len(e.ids) for e in encodings), options))
        return run(self, session, encodings, options)

    monkeypatch.setattr(LocalOnnxEmbedder, "_run", spied)
    return ran


@pytest.mark.parametrize("solo_threads", [2, 1])
def test_a_text_longer_than_the_arena_s_measure_hands_back_what_its_run_grew_it_by(
    monkeypatch: pytest.MonkeyPatch, solo_threads: int
) -> None:
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(solo_threads=solo_threads)  # 2: the session of a text alone; 1: the shared one
    reference = LocalOnnxEmbedder(products="int8", solo_threads=1)
    # a word is a token, with [CLS] and [SEP]: ARENA_TOKENS, one more, and 400 words cut to 256
    texts = [LONG[0], "word " * (local.ARENA_TOKENS - 2), "word " * (local.ARENA_TOKENS - 1), AWKWARD[11]]
    ran = _runs(monkeypatch)
    ours = np.vstack([embedder.embed([text]) for text in texts])
    assert (embedder._solo is not None) is (solo_threads == 2) and embedder._shrinking is not None
    assert [tokens for _, tokens, _ in ran][1:] == [local.ARENA_TOKENS, local.ARENA_TOKENS + 1, 256]
    assert [options is embedder._shrinking for _, _, options in ran] == [False, False, True, True]
    theirs = np.vstack([reference.embed([text]) for text in texts])
    assert float(np.min(np.sum(ours * theirs, axis=1))) >= 0.99999  # the arena changes where buffers live, not values


def test_a_batch_of_several_texts_hands_back_what_its_run_grew_the_arena_by(monkeypatch: pytest.MonkeyPatch) -> None:
    # float products: texts of like length run in batches, here of at most 16 padded tokens
    embedder = LocalOnnxEmbedder(products="float", batch_tokens=16)
    ran = _runs(monkeypatch)
    vectors = embedder.embed(["one", "two", "three", "four", LONG[0]])
    assert sorted((texts, options is embedder._shrinking) for texts, _, options in ran) == [(1, False), (4, True)]
    assert np.allclose(vectors, np.vstack([embedder.embed([t]) for t in ["one", "two", "three", "four", LONG[0]]]), atol=1e-5)


def test_a_session_of_a_text_alone_that_cannot_be_built_leaves_every_text_on_the_shared_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(solo_threads=2)
    build = embedder._load_locked

    def no_spinning(threads: int, spinning: bool) -> object:
        if spinning:
            raise RuntimeError("no second thread here")
        return build(threads, spinning)

    monkeypatch.setattr(embedder, "_load_locked", no_spinning)
    with structlog.testing.capture_logs() as logs:
        first = embedder.embed(LONG[:1])
        second = embedder.embed(LONG[:1])
    assert np.array_equal(first, second) and embedder._solo is None and embedder._shared is not None
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["embedder_solo_session_unavailable"]
    assert not embedder._solo_free.locked()


def test_a_model_that_cannot_load_is_reported_as_before_on_an_idle_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    _solo(monkeypatch, True)
    embedder = LocalOnnxEmbedder(model_sha256="0" * 64, solo_threads=2)
    for _ in range(2):
        with pytest.raises(EmbedderNotConfigured, match="sha256.*reinstall"):
            embedder.embed(LONG[:1])
    assert not embedder._solo_free.locked()


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers"])
def test_a_missing_runtime_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    with pytest.raises(EmbedderNotConfigured, match="needs onnxruntime and tokenizers.*reinstall mcp-memory"):
        LocalOnnxEmbedder(solo_threads=1).embed(["hello"])
