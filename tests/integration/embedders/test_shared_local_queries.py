"""Queries embedded concurrently through the local model share its calls and get the
vectors they get alone."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
from local_mcp_memory.adapters.embedders.shared_queries import SharedQueryEmbedder
from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.ports import EmbedKind

QUERIES = [
    "What did Caroline research?",
    "When did Melanie paint a sunrise?",
    "hi",
    "Which city did John move to after he left the startup and started teaching?",
    "pottery",
    "What is the name of Sam's dog and when did he adopt it from the shelter?",
    "東京の天気は？",
    "word " * 300,
]


class CountingEmbedder:
    """The local model, counting its calls and the texts of each."""

    def __init__(self, embedder: LocalOnnxEmbedder) -> None:
        self.sizes: list[int] = []
        self._embedder = embedder

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        self.sizes.append(len(texts))
        return self._embedder.embed(texts, kind)


def _ask_concurrently(shared: SharedQueryEmbedder, texts: list[str]) -> dict[int, object]:
    outcomes: dict[int, object] = {}
    start = threading.Barrier(len(texts))

    def ask(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = shared.embed([texts[i]], "query")
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcomes[i] = exc

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def test_concurrent_queries_share_calls_and_get_their_vectors_alone() -> None:
    minilm = LocalOnnxEmbedder()
    alone = np.vstack([minilm.embed([q], "query") for q in QUERIES])
    counting = CountingEmbedder(minilm)
    shared = SharedQueryEmbedder(counting)
    texts = QUERIES * 4
    for _ in range(3):  # a thread may find the call before its own already done: some rounds share
        outcomes = _ask_concurrently(shared, texts)
        for i, text in enumerate(texts):
            vector = np.asarray(outcomes[i])
            assert vector.shape == (1, LocalOnnxEmbedder.DIM) and vector.dtype == np.float32
            np.testing.assert_allclose(vector[0], alone[i % len(QUERIES)], atol=1e-6)
    assert sum(counting.sizes) == 3 * len(texts)
    assert len(counting.sizes) < 3 * len(texts) and max(counting.sizes) > 1


def test_a_model_that_cannot_load_fails_every_concurrent_query_as_alone() -> None:
    shared = SharedQueryEmbedder(LocalOnnxEmbedder(model_sha256="0" * 64))
    outcomes = _ask_concurrently(shared, QUERIES)
    assert len(outcomes) == len(QUERIES)
    for outcome in outcomes.values():
        assert isinstance(outcome, EmbedderNotConfigured) and "sha256" in str(outcome)
