"""An inverted file over a large vector space: search scans the lists nearest the query.

Vectors are partitioned into ``lists`` around centroids (spherical k-means on a sample).
A search scores the query against the centroids, keeps the ``probes`` best lists, and
scans exactly the matching vectors in them; ``VectorSpace`` re-ranks them by their true
inner product, so what is approximate is only which vectors are looked at.

The partition is trained when a space is snapshotted (``VectorSpace.repartition``) holding
at least ``MIN_VECTORS`` vectors, and again once it has doubled since; in between, each new
vector joins its nearest list. Training ends with a calibration that decides whether the
partition may be used at all: queries made from the space itself (the normalized sum of
three stored vectors, which lies between topics and is harder to answer than a real query
near one note) are answered exactly and with each probe count; ``probes`` becomes the
fewest lists that find ``RECALL`` of the exact top ``DEPTH``, or 0 (unused, search stays
exact) when even ``MAX_SHARE`` of the lists do not. Vectors without cluster structure, such
as random ones, get 0; text embeddings get a few percent of the lists.
"""

from __future__ import annotations

import math

import faiss
import numpy as np

MIN_VECTORS = 32_768
"""Below this many vectors an exact scan takes about 2 ms: no partition is trained."""

RECALL = 0.99
DEPTH = 30  # the semantic depth of a hybrid search
CALIBRATION_QUERIES = 256
MAX_SHARE = 0.375
TRAINING_POINTS = 8  # per list
ITERATIONS = 6
SEED = 20240601


class Partition:
    """``centroids`` (float32, ``(lists, dim)``, unit rows); ``probes`` lists searched per
    query (0: unused); ``trained`` the vector count it was trained on."""

    def __init__(self, centroids: np.ndarray, probes: int, trained: int) -> None:
        self.centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        self.probes = probes
        self.trained = trained

    @property
    def lists(self) -> int:
        return self.centroids.shape[0]

    @property
    def usable(self) -> bool:
        return self.probes > 0

    def assign(self, vectors: np.ndarray) -> np.ndarray:
        """The list (int32) of each row of ``vectors``."""
        return nearest(vectors, self.centroids)

    def chosen(self, query: np.ndarray, share: float) -> np.ndarray:
        """Which lists (bool per list) a query scans when ``share`` of the space's vectors
        match its filter: ``probes / share`` of them, the nearest to the query."""
        probes = min(self.lists, math.ceil(self.probes / share))
        flags = np.zeros(self.lists, dtype=bool)
        if probes >= self.lists:
            flags[:] = True
            return flags
        scores = np.empty(self.lists, dtype=np.float32)
        query = np.ascontiguousarray(query, dtype=np.float32)
        # FAISS on this thread: a multi-threaded BLAS product this small waits on waking its
        # threads, milliseconds when the machine is busy
        faiss.fvec_inner_products_ny(
            faiss.swig_ptr(scores), faiss.swig_ptr(query), faiss.swig_ptr(self.centroids), query.shape[0], self.lists
        )
        flags[np.argpartition(-scores, probes - 1)[:probes]] = True
        return flags


def train(vectors: np.ndarray) -> tuple[Partition, np.ndarray]:
    """A calibrated partition of ``vectors`` (float32, unit rows) and the list of each row.
    Deterministic: the same vectors give the same partition."""
    n = vectors.shape[0]
    rng = np.random.default_rng(SEED)
    lists = max(16, round(8 * math.sqrt(n)))
    sample = vectors[np.sort(rng.choice(n, min(n, TRAINING_POINTS * lists), replace=False))]
    centroids = _kmeans(np.asarray(sample, dtype=np.float32), lists, rng)
    labels = nearest(vectors, centroids)
    probes = _calibrate(vectors, centroids, labels, rng)
    return Partition(centroids, probes, n), labels


def nearest(vectors: np.ndarray, centroids: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """The index of the centroid with the highest inner product, per row (int32)."""
    out = np.empty(vectors.shape[0], dtype=np.int32)
    for start in range(0, vectors.shape[0], chunk):
        out[start : start + chunk] = np.argmax(np.asarray(vectors[start : start + chunk]) @ centroids.T, axis=1)
    return out


def _kmeans(sample: np.ndarray, lists: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means: unit centroids maximizing the inner product with their points.
    An emptied list restarts at the sample point worst served by its centroid."""
    centroids = sample[rng.choice(sample.shape[0], lists, replace=False)].copy()
    for _ in range(ITERATIONS):
        scores = sample @ centroids.T
        labels = np.argmax(scores, axis=1)
        order = np.argsort(labels, kind="stable")
        counts = np.bincount(labels, minlength=lists)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        filled = counts > 0
        sums = np.add.reduceat(sample[order], starts[filled], axis=0)
        centroids[filled] = sums
        empty = np.flatnonzero(~filled)
        if empty.shape[0]:
            served = scores[np.arange(sample.shape[0]), labels]
            centroids[empty] = sample[np.argsort(served, kind="stable")[: empty.shape[0]]]
        centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    return centroids.astype(np.float32)


def _calibrate(vectors: np.ndarray, centroids: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> int:
    """The fewest probes finding ``RECALL`` of the exact top ``DEPTH`` for the calibration
    queries, or 0 when more than ``MAX_SHARE`` of the lists would be needed.

    The recall of a probe count is the share of each query's exact top vectors lying in
    a probed list: a search returns the best of the probed vectors, so it finds exactly
    those."""
    n, lists = vectors.shape[0], centroids.shape[0]
    picks = rng.integers(0, n, (CALIBRATION_QUERIES, 3))
    queries = np.asarray(vectors[picks.ravel()], dtype=np.float32).reshape(CALIBRATION_QUERIES, 3, -1).sum(axis=1)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    depth = min(DEPTH, n)
    # the exact top ``depth`` of each query, merged chunk by chunk (BLAS on both cores; no
    # n-wide score matrix per query). Placeholders score -inf and never survive a merge.
    best = np.zeros((CALIBRATION_QUERIES, depth), dtype=np.int64)
    top_scores = np.full((CALIBRATION_QUERIES, depth), -np.inf, dtype=np.float32)
    for start in range(0, n, 8192):
        scores = queries @ np.asarray(vectors[start : start + 8192]).T
        merged = np.concatenate([top_scores, scores], axis=1)
        keep = np.argpartition(-merged, depth - 1, axis=1)[:, :depth]
        ids = np.concatenate([best, np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)], axis=1)
        top_scores = np.take_along_axis(merged, keep, axis=1)
        best = np.take_along_axis(ids, keep, axis=1)
    # rank of each list for each query (0 = nearest), then of each exact top vector's list
    ranks = np.empty((CALIBRATION_QUERIES, lists), dtype=np.int32)
    np.put_along_axis(ranks, np.argsort(-(queries @ centroids.T), axis=1), np.arange(lists, dtype=np.int32)[None, :], axis=1)
    needed = np.take_along_axis(ranks, labels[best], axis=1)  # a vector is found iff its list's rank < probes
    probes = int(np.sort(needed, axis=None)[math.ceil(RECALL * needed.size) - 1]) + 1
    return probes if probes <= MAX_SHARE * lists else 0
