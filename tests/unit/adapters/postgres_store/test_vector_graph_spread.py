"""A graph's spread (``ProjectGraph.spread``) is measured on the first ``sample`` visible
vectors of its rows and its tail merged in sample order, hash then id, as the statement's
``spread_part`` orders them: with distinct hashes, with hashes shared across the graph and
the tail (the ids decide), with a sample shorter than both, and with hidden notes."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from local_mcp_memory.adapters.postgres_store.project_vectors import ProjectVectors, pg_cosines
from local_mcp_memory.adapters.postgres_store.vector_graph import ProjectGraph

DIM = 8


def vectors(ids: list[str], hashes: list[int], rng: np.random.Generator) -> ProjectVectors:
    order = sorted(range(len(ids)), key=lambda i: (hashes[i], ids[i]))
    matrix = rng.standard_normal((len(ids), DIM)).astype(np.float32)
    return ProjectVectors([ids[i] for i in order], np.arange(len(ids), dtype=np.int64), matrix, complete=True, seen=0,
                          hashes=np.array([hashes[i] for i in order], dtype=np.int64))


def graph(base: ProjectVectors, tail: ProjectVectors) -> ProjectGraph:
    index = faiss.IndexHNSWFlat(DIM, 4, faiss.METRIC_INNER_PRODUCT)
    index.add(base.matrix / np.linalg.norm(base.matrix, axis=1, keepdims=True))
    return ProjectGraph(base, index, 0, tail=tail)


def expected(held: ProjectGraph, q: np.ndarray, sample: int, hidden: frozenset[str]) -> tuple[int, float, float]:
    rows = [(int(part.hashes[i]), key, part.matrix[i]) for part in (held.base, held.tail)
            for i, key in enumerate(part.ids) if key not in hidden]
    picked = sorted(rows, key=lambda row: row[:2])[:sample]
    matrix = np.stack([row[2] for row in picked])
    cosines = pg_cosines(matrix, np.einsum("ij,ij->i", matrix, matrix).astype(np.float64), q)
    return len(cosines), float(cosines.mean()), float(cosines.std())


@pytest.mark.parametrize("shared", [False, True], ids=["distinct hashes", "hashes shared with the tail"])
@pytest.mark.parametrize("sample", [5, 12, 40])
@pytest.mark.parametrize("hide", [False, True], ids=["all visible", "some hidden"])
def test_the_spread_is_measured_on_the_first_vectors_in_sample_order(shared: bool, sample: int, hide: bool) -> None:
    rng = np.random.default_rng(sample + 2 * shared + hide)
    base_ids = [f"b{n:02d}" for n in range(20)]
    base_hashes = [int(h) for h in rng.integers(-50, 50, 20)]
    tail_ids = [f"a{n:02d}" if n % 2 else f"c{n:02d}" for n in range(10)]
    tail_hashes = [base_hashes[n] if shared else 1000 + n for n in range(10)]  # shared: the ids decide
    if not shared:
        tail_hashes = [int(h) for h in rng.integers(51, 60, 10)] if sample > 20 else [-60 + n for n in range(10)]
    held = graph(vectors(base_ids, base_hashes, rng), vectors(tail_ids, tail_hashes, rng))
    hidden = frozenset([held.base.ids[0], held.tail.ids[1], "not held"]) if hide else frozenset()
    q = rng.standard_normal(DIM).astype(np.float32)
    spread = held.spread(q, sample, hidden)
    count, mean, std = expected(held, q, sample, hidden)
    assert spread.count == count
    assert spread.mean == pytest.approx(mean, rel=1e-9, abs=1e-12)
    assert spread.std == pytest.approx(std, rel=1e-9, abs=1e-12)
