"""One project's vectors in one namespace held in the server process (``ProjectVectors``), and
the arithmetic on them: cosines as pgvector computes them (float32 sums, the quotient in double,
clamped to [-1, 1]), and pgvector's binary form read into rows. ``vector_cache`` holds them
and keeps them current; ``vector_graph`` lays a graph over a large project's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone

import numpy as np

from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, Spread

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class ProjectVectors:
    """One project's vectors in one namespace, as of feed position ``seen``; ``complete``:
    every one of them (else the first ``PREFIX`` in sample order, and ``count`` says how many
    there are, up to ``COUNT_MAX``). Read-only once built."""

    def __init__(
        self, ids: list[str], created: np.ndarray, matrix: np.ndarray, *, complete: bool, seen: int, count: int | None = None,
        hashes: np.ndarray | None = None, squares: np.ndarray | None = None,
    ) -> None:
        self.ids = ids
        self.hashes = np.zeros(len(ids), dtype=np.int64) if hashes is None else hashes  # the sample order's key
        self.count = len(ids) if count is None else count  # vectors of the project, up to COUNT_MAX
        self.created = created  # microseconds since the epoch
        self.matrix = matrix
        self.squares = _squares(matrix) if squares is None else squares  # the rows' squared lengths, when known
        self.usable = bool(np.all(self.squares > 0.0))  # a zero vector: pgvector's cosine is NaN, searched in SQL
        self.complete = complete
        self.seen = seen
        self._rows: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def changed(self, rows: list[tuple], seen: int) -> ProjectVectors:
        """A whole project's copy with the feed's ``rows`` since its position applied (each
        note changed: its row dropped, its current vector, if any, put in its place in sample
        order), as of ``seen``. The rows kept are in order already: only the new ones are
        sorted, and each is placed by its hash (a tie: after the kept rows of that hash with
        a smaller id), so a write costs one copy of the arrays, not a sort of every id."""
        assert self.complete
        at = self.row_of()
        dropped = {at[key] for key, *_rest in rows if key in at}
        kept = np.delete(np.arange(len(self.ids)), list(dropped)) if dropped else slice(None)  # no copy when none is
        new = sorted((row for row in rows if row[2] is not None), key=lambda row: (row[3], row[0]))
        hashes, new_hashes = self.hashes[kept], np.array([row[3] for row in new], dtype=np.int64)
        ids = [key for i, key in enumerate(self.ids) if i not in dropped] if dropped else self.ids
        places = np.searchsorted(hashes, new_hashes)
        for n, row in enumerate(new):
            while places[n] < len(ids) and hashes[places[n]] == row[3] and ids[places[n]] < row[0]:
                places[n] += 1
        added = sent_matrix(row[2] for row in new)
        if not new:
            matrix = self.matrix[kept]
        elif not ids:
            matrix = added  # an empty copy's matrix has no width to insert into
        else:
            matrix = np.insert(self.matrix[kept], places, added, axis=0)
        return ProjectVectors(
            np.insert(np.array(ids, dtype=object), places, [row[0] for row in new]).tolist(),
            np.insert(self.created[kept], places, np.array([row[1] for row in new], dtype=np.int64)), matrix,
            complete=True, seen=seen, hashes=np.insert(hashes, places, new_hashes),
            squares=np.insert(self.squares[kept], places, _squares(added)),
        )

    def large(self, hidden: frozenset[str]) -> bool:
        """Whether the scope holds more than ``EXACT_SCAN_MAX`` vectors once ``hidden`` (ids
        of the project's notes, each with at most one vector here) is left out: the HNSW
        walk then runs without the statement counting the scope first."""
        return larger_than_scan(self.count, hidden)

    def nearest(self, q: np.ndarray, depth: int, hidden: frozenset[str]) -> list[Candidate]:
        """The ``depth`` best by cosine, then newer, then smaller id (the exact scan's order)."""
        assert self.complete
        if not self.ids:
            return []
        cosines = pg_cosines(self.matrix, self.squares, q)
        if hidden:
            cosines[~self.visible(hidden)] = -np.inf
        k = min(depth, int(np.count_nonzero(cosines > -np.inf)))
        if k <= 0:
            return []
        bar = np.partition(cosines, cosines.size - k)[cosines.size - k]
        near = np.flatnonzero(cosines >= bar)  # ties at the bar all compared below
        best = sorted(near, key=lambda i: (-cosines[i], -self.created[i], self.ids[i]))[:k]
        return [Candidate(self.ids[i], instant(self.created[i]), float(cosines[i])) for i in best]

    def spread(self, q: np.ndarray, sample: int, hidden: frozenset[str]) -> Spread | None:
        """Mean and population deviation of the cosines of the first ``sample`` visible
        vectors in sample order; None when the rows held do not reach that far."""
        if hidden:
            rows = np.flatnonzero(self.visible(hidden))[:sample]
            matrix, squares = self.matrix[rows], self.squares[rows]
        else:
            matrix, squares = self.matrix[:sample], self.squares[:sample]
        if len(squares) < sample and not self.complete:
            return None
        if len(squares) == 0:
            return NO_SPREAD
        cosines = pg_cosines(matrix, squares, q)
        return Spread(len(squares), float(cosines.mean()), float(cosines.std()))

    def visible(self, hidden: frozenset[str]) -> np.ndarray:
        """Per row held, whether ``hidden`` leaves it in."""
        rows = self.row_of()
        out = np.ones(len(self.ids), dtype=bool)
        out[[rows[key] for key in hidden if key in rows]] = False
        return out

    def cosines_of(self, ids: Sequence[str], q: np.ndarray) -> dict[str, float]:
        """The cosines of those of ``ids`` held (the others have no vector here)."""
        rows = self.row_of()
        keys = [key for key in ids if key in rows]
        picked = [rows[key] for key in keys]
        return dict(zip(keys, pg_cosines(self.matrix[picked], self.squares[picked], q).tolist())) if keys else {}

    def vectors_of(self, ids: Sequence[str]) -> np.ndarray | None:
        """The vectors of ``ids`` (rows in that order), when every one is held."""
        rows = self.row_of()
        if ids and ids[0] not in rows:  # the usual miss: another project's copy
            return None
        try:
            return self.matrix[[rows[key] for key in ids]]
        except KeyError:
            return None

    def row_of(self) -> dict[str, int]:
        """Each held id's row."""
        if self._rows is None:
            self._rows = {key: i for i, key in enumerate(self.ids)}
        return self._rows


def _squares(matrix: np.ndarray) -> np.ndarray:
    """Each row's squared length, summed in float32 as pgvector sums."""
    return np.einsum("ij,ij->i", matrix, matrix).astype(np.float64)


def pg_cosines(matrix: np.ndarray, squares: np.ndarray, q: np.ndarray) -> np.ndarray:
    """pgvector's ``1 - (a <=> q)``: float32 dot products, the quotient in double, clamped."""
    q32 = np.asarray(q, dtype=np.float32)
    # not ``matrix @ q32``: OpenBLAS spreads a product of this size over threads, which cost
    # 6 ms of CPU on two busy cores where one thread takes 0.25-0.5 ms
    dots = np.einsum("ij,j->i", matrix, q32).astype(np.float64)
    similarity = np.clip(dots / np.sqrt(squares * float(np.dot(q32, q32))), -1.0, 1.0)
    return 1.0 - (1.0 - similarity)


def larger_than_scan(count: int, hidden: frozenset[str]) -> bool:
    """Whether ``count`` vectors less ``hidden`` are more than an exact scan takes (``EXACT_SCAN_MAX``)."""
    return count - len(hidden) > EXACT_SCAN_MAX


def instant(microseconds: int) -> datetime:
    return EPOCH + timedelta(microseconds=int(microseconds))


def sent_matrix(sent: Iterable[bytes]) -> np.ndarray:
    """Vectors in pgvector's binary form (two int16, then big-endian float32s) as rows."""
    blobs = [bytes(blob) for blob in sent]
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    width = len(blobs[0])
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)
