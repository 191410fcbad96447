"""A vector space's spread of a query: what it scores, over which rows, and that the next
spread after a write sees it."""

from __future__ import annotations

import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store.memory.vector_space import VectorSpace, by_key


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def filled(n: int, dim: int = 16, seed: int = 3) -> tuple[VectorSpace, np.ndarray]:
    """A space whose row ``i`` holds vector ``i`` of the answer; more than one block."""
    vectors = unit(np.random.default_rng(seed).standard_normal((n, dim)))
    space = VectorSpace(dim)
    for row, vector in enumerate(vectors):
        space.put(row, vector)
    return space, vectors


def expected(vectors: np.ndarray, query: np.ndarray) -> tuple[int, float, float]:
    scores = vectors.astype(np.float64) @ query.astype(np.float64)
    return scores.shape[0], float(scores.mean()), float(scores.std())


def test_the_spread_is_over_every_row_in_scope_up_to_the_sample() -> None:
    space, vectors = filled(1500)  # blocks of 1,024 and 1,024: two of them hold rows
    query = vectors[7]
    mask = np.zeros(1500, dtype=bool)
    mask[::2] = True
    count, mean, std = space.spread(query, mask, 1024)
    want = expected(vectors[::2], query)
    assert count == want[0] == 750
    assert np.isclose(mean, want[1], atol=1e-7) and np.isclose(std, want[2], atol=1e-7)
    assert space.spread(query, mask, 1024) == (count, mean, std)  # each product summed alike every time


def test_a_larger_scope_is_sampled_evenly_in_row_order() -> None:
    space, vectors = filled(1500)
    query = vectors[0]
    mask = np.ones(1500, dtype=bool)
    count, mean, std = space.spread(query, mask, 100)
    picked = np.linspace(0, 1499, 100).astype(np.int64)
    want = expected(vectors[picked], query)
    assert count == 100 and np.isclose(mean, want[1], atol=1e-7) and np.isclose(std, want[2], atol=1e-7)
    assert space.spread(query, mask, 10)[0] == 10  # another sample size is sampled anew


def test_a_write_in_the_scope_is_seen_by_the_next_spread_of_the_same_mask() -> None:
    space, vectors = filled(300)
    query = vectors[1]
    mask = np.ones(300, dtype=bool)
    before = space.spread(query, mask, 1024)
    space.put(5, query)  # a row's vector replaced: the same mask, the same rows
    changed = vectors.copy()
    changed[5] = query
    after = space.spread(query, mask, 1024)
    assert after != before and np.isclose(after[1], expected(changed, query)[1], atol=1e-7)
    space.remove(6)
    assert space.spread(query, mask, 1024)[0] == 299
    space.put(300, vectors[2])  # a new row, the old mask: the scope is what the mask selects
    assert space.spread(query, mask, 1024)[0] == 299
    wider = np.ones(301, dtype=bool)
    assert space.spread(query, wider, 1024)[0] == 300


@pytest.mark.parametrize("bound", [1, 16, 2530, 1 << 16, (1 << 16) + 1, 1 << 20])
def test_slots_are_grouped_by_list_in_the_order_a_stable_sort_gives(bound: int) -> None:
    keys = np.random.default_rng(bound).integers(0, bound, 50_000).astype(np.int32)  # as the lists' column holds them
    keys[:3] = [0, bound - 1, 0]  # both ends, and a tie
    assert np.array_equal(by_key(keys, bound), np.argsort(keys.astype(np.int64), kind="stable"))
