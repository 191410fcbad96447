"""The inverted-file partition of large vector spaces: training, calibration, probing."""

from __future__ import annotations

import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store.memory import partition as partitioning
from local_mcp_memory.adapters.faiss_store.memory.partition import Partition, train


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def topics(n: int, dim: int = 64, count: int = 80, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Vectors around ``count`` topics, like text embeddings, and the topic centres."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((count, dim)))
    picks = rng.integers(0, count, n)
    return unit(centres[picks] + 0.12 * rng.standard_normal((n, dim))), centres


def probed_recall(part: Partition, lists: np.ndarray, vectors: np.ndarray, queries: np.ndarray, k: int) -> float:
    """The share of each query's exact top ``k`` that a search of the probed lists returns."""
    shares = []
    for q in queries:
        scores = vectors @ q
        exact = set(np.argsort(-scores, kind="stable")[:k].tolist())
        near = np.flatnonzero(part.chosen(q, 1.0)[lists])
        found = near[np.argsort(-scores[near], kind="stable")[:k]]
        shares.append(len(exact & set(found.tolist())) / k)
    return float(np.mean(shares))


def test_vectors_around_topics_get_a_partition_that_finds_the_exact_neighbours() -> None:
    vectors, centres = topics(6000)
    part, lists = train(vectors)
    assert part.usable and part.probes <= partitioning.MAX_SHARE * part.lists
    assert part.trained == 6000 and lists.shape == (6000,) and lists.dtype == np.int32
    assert np.allclose(np.linalg.norm(part.centroids, axis=1), 1, atol=1e-5)
    rng = np.random.default_rng(9)  # queries unlike the calibration's: near one topic each
    queries = unit(centres[rng.integers(0, len(centres), 60)] + 0.15 * rng.standard_normal((60, centres.shape[1])))
    assert probed_recall(part, lists, vectors, queries, 10) >= 0.99
    assert probed_recall(part, lists, vectors, queries, 30) >= 0.99
    scanned = np.mean([part.chosen(q, 1.0)[lists].mean() for q in queries])
    assert scanned < 0.5  # and it scans a fraction of the space


def test_vectors_without_structure_get_an_unused_partition() -> None:
    vectors = unit(np.random.default_rng(3).standard_normal((6000, 128)))
    part, _lists = train(vectors)
    assert not part.usable and part.probes == 0


def test_training_is_deterministic_and_each_vector_is_in_its_nearest_list() -> None:
    vectors, _ = topics(3000, seed=4)
    first, lists = train(vectors)
    second, again = train(vectors)
    assert np.array_equal(first.centroids, second.centroids) and np.array_equal(lists, again)
    assert first.probes == second.probes
    assert np.array_equal(lists, np.argmax(vectors @ first.centroids.T, axis=1))
    assert np.array_equal(first.assign(vectors[:10]), lists[:10])


@pytest.mark.parametrize(("share", "expected"), [(1.0, 5), (0.5, 10), (0.4, 13), (0.01, 40)])
def test_a_filter_keeping_less_of_the_space_probes_proportionally_more_lists(share: float, expected: int) -> None:
    centroids = unit(np.random.default_rng(5).standard_normal((40, 8)))
    part = Partition(centroids, probes=5, trained=1000)
    query = centroids[7]
    chosen = part.chosen(query, share)
    assert chosen.dtype == bool and int(chosen.sum()) == expected
    assert chosen[7]  # the query's own list first
