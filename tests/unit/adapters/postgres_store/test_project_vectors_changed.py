"""A copy of a project's vectors with the feed's changes applied (``ProjectVectors.changed``)
is the copy a sort of every row by hash then id would give: notes removed, vectors replaced
in the place their hash gives them, new notes placed among the kept ones, hashes shared by
several notes (then the ids decide), everything removed, nothing held before."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from local_mcp_memory.adapters.postgres_store.project_vectors import ProjectVectors

DIM = 4


def sent(vector: np.ndarray) -> bytes:
    """A vector as pgvector sends it: its dimension and an unused int16, big-endian floats."""
    return struct.pack(">HH", DIM, 0) + np.asarray(vector, dtype=">f4").tobytes()


def expected(before: ProjectVectors, rows: list[tuple]) -> list[tuple[str, int, int, list[float]]]:
    gone = {row[0] for row in rows}
    kept = [(before.hashes[i], key, int(before.created[i]), before.matrix[i].tolist()) for i, key in enumerate(before.ids) if key not in gone]
    new = [(row[3], row[0], row[1], np.frombuffer(row[2][4:], dtype=">f4").astype(np.float32).tolist()) for row in rows if row[2] is not None]
    return [(key, int(h), created, vector) for h, key, created, vector in sorted(kept + new, key=lambda r: (int(r[0]), r[1]))]


def held(copy: ProjectVectors) -> list[tuple[str, int, int, list[float]]]:
    return [(key, int(copy.hashes[i]), int(copy.created[i]), copy.matrix[i].tolist()) for i, key in enumerate(copy.ids)]


def start(rng: np.random.Generator, count: int, spread: int) -> ProjectVectors:
    ids = [f"{rng.integers(16**6):06x}-{n}" for n in range(count)]
    hashes = rng.integers(-spread, spread, count)
    order = sorted(range(count), key=lambda i: (int(hashes[i]), ids[i]))
    matrix = rng.standard_normal((count, DIM)).astype(np.float32) if count else np.zeros((0, 0), dtype=np.float32)
    return ProjectVectors([ids[i] for i in order], np.arange(count, dtype=np.int64)[order], matrix[order] if count else matrix,
                          complete=True, seen=0, hashes=hashes[order].astype(np.int64))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("spread", [5, 10**12], ids=["hashes shared", "hashes apart"])
def test_the_changes_are_applied_in_sample_order(seed: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    before = start(rng, int(rng.integers(0, 30)), spread)
    rows = []
    for key in before.ids:
        pick = rng.random()
        if pick < 0.2:  # removed
            rows.append((key, None, None, None))
        elif pick < 0.4:  # a new vector, and a new hash (a re-embedding keeps the id: the hash stays)
            rows.append((key, 7, sent(rng.standard_normal(DIM)), int(before.hashes[before.row_of()[key]])))
    for n in range(int(rng.integers(0, 12))):
        rows.append((f"{rng.integers(16**6):06x}-new{n}", 100 + n, sent(rng.standard_normal(DIM)), int(rng.integers(-spread, spread))))
    after = before.changed(rows, 5)
    assert held(after) == expected(before, rows)
    assert after.seen == 5 and after.complete and len(after) == len(after.ids)
    assert after.squares.tolist() == pytest.approx([float(np.dot(v, v)) for v in after.matrix.tolist()] if len(after) else [], rel=1e-6)
    assert after.row_of() == {key: i for i, key in enumerate(after.ids)}


def test_removing_every_note_leaves_an_empty_copy() -> None:
    before = start(np.random.default_rng(3), 4, 100)
    after = before.changed([(key, None, None, None) for key in before.ids], 9)
    assert len(after) == 0 and after.squares.shape == (0,) and after.usable


def test_removals_alone_keep_the_rest_in_order() -> None:
    before = start(np.random.default_rng(4), 6, 100)
    rows = [(before.ids[1], None, None, None), (before.ids[4], None, None, None)]
    after = before.changed(rows, 2)
    assert held(after) == expected(before, rows) and after.matrix.shape == (4, DIM)
    assert held(before.changed([], 3)) == held(before)
