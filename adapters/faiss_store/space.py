"""The vectors of one namespace: float32 rows ("slots") in blocks, owned by note rows.

Block 0 is the snapshot's vector file, memory-mapped copy-on-write (opening reads it once
to check its CRC, then pages stay shared with the page cache and are copied only if a
write changes them). Later blocks are
allocated as the space fills, each half the size so far, so no write ever copies the
vectors already there. A slot belongs to one note row or is free (reused by the next
insert); ``slot_row`` maps slots to note rows and ``row_slot`` note rows to slots, so a
put, a delete or a note moving to a new row (``move``) costs the same at any size.

Search is exact, per block: where the matching slots (the rows a ``NoteTable.mask``
selects) are a minority, FAISS ``knn_inner_products_by_idx`` computes the inner product of
the query with them only; where they are most of the block, one BLAS product of the whole
block is faster. ``top_k`` are returned whenever that many match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import faiss
import numpy as np

from adapters.faiss_store.columns import Column
from application.errors import StoreError

FREE = -1


class VectorSpace:
    def __init__(self, dim: int, base: np.ndarray | None = None, owners: np.ndarray | None = None) -> None:
        """An empty space, or one whose slot ``i`` is ``base[i]``, owned by row ``owners[i]``."""
        self.dim = dim
        self._blocks: list[np.ndarray] = []
        self._starts: list[int] = []
        self.slot_row = Column("<i4", fill=FREE)
        self.row_slot = Column("<i4", fill=FREE)
        self.free: list[int] = []
        self.count = 0
        if base is not None and base.shape[0]:
            assert owners is not None
            self._blocks.append(base)
            self._starts.append(0)
            self.slot_row.extend(owners)
            if owners.shape[0]:
                self.row_slot[int(owners.max())] = FREE  # sized to every owner
                self.row_slot.values[owners] = np.arange(owners.shape[0], dtype=np.int32)
            self.count = owners.shape[0]

    def __len__(self) -> int:
        return self.count

    def has(self, row: int) -> bool:
        return self.row_slot[row] != FREE

    @property
    def capacity(self) -> int:
        return self._starts[-1] + self._blocks[-1].shape[0] if self._blocks else 0

    def _where(self, slot: int) -> tuple[np.ndarray, int]:
        for start, block in zip(reversed(self._starts), reversed(self._blocks)):
            if slot >= start:
                return block, slot - start
        raise IndexError(slot)

    def put(self, row: int, vector: np.ndarray) -> None:
        """Give note row ``row`` this vector (float32, shape ``(dim,)``), replacing its old one."""
        slot = int(self.row_slot[row])
        if slot == FREE:
            if not self.free:
                self._grow()
            slot = self.free.pop()
            self.slot_row[slot] = row
            self.row_slot[row] = slot
            self.count += 1
        block, at = self._where(slot)
        block[at] = vector

    def _grow(self) -> None:
        start = self.capacity
        size = max(1024, start // 2)
        self._blocks.append(np.zeros((size, self.dim), dtype=np.float32))
        self._starts.append(start)
        self.slot_row[start + size - 1] = FREE
        self.free.extend(range(start + size - 1, start - 1, -1))

    def move(self, old: int, new: int) -> None:
        """Note row ``old`` was superseded by row ``new``: its vector goes with it."""
        slot = int(self.row_slot[old])
        if slot != FREE:
            self.row_slot[old] = FREE
            self.row_slot[new] = slot
            self.slot_row[slot] = new

    def remove(self, row: int) -> bool:
        slot = int(self.row_slot[row])
        if slot == FREE:
            return False
        self.row_slot[row] = FREE
        self.slot_row[slot] = FREE
        self.free.append(slot)
        self.count -= 1
        return True

    def vector(self, row: int) -> np.ndarray | None:
        slot = int(self.row_slot[row])
        if slot == FREE:
            return None
        block, at = self._where(slot)
        return np.array(block[at])

    def rows(self) -> np.ndarray:
        """The note rows holding a vector here."""
        rows = self.slot_row.values
        return rows[rows != FREE]

    def used(self) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Owners of the used slots in slot order, and per block its used vectors'
        (block, local indexes), in the same order: what a snapshot writes."""
        owners = self.slot_row.values
        parts = []
        for start, block in zip(self._starts, self._blocks):
            local = np.flatnonzero(owners[start : start + block.shape[0]] != FREE)
            parts.append((block, local))
        return owners[owners != FREE], parts

    def search(
        self, query: Sequence[float], k: int, mask: np.ndarray, order: Callable[[int], tuple]
    ) -> list[tuple[int, float]]:
        """The ``k`` best (note row, inner product) among rows where ``mask`` (indexed by
        note row) is True; ties ordered by ``order(row)``. Exact: every matching row is scanned."""
        q = self._query(query)
        slots = self._slots(mask)
        count = slots.shape[0]
        if count == 0 or k <= 0:
            return []
        want = min(count, k + 8)
        while True:
            scores, best = self._best(q, slots, want)
            if want >= count or scores[k - 1] > scores[want - 1]:
                break  # every slot tied with the k-th best is in hand
            want = min(count, want * 4)
        rows = self.slot_row.values[best]
        found = [(int(r), float(s)) for r, s in zip(rows.tolist(), scores.tolist())]
        found.sort(key=lambda pair: (-pair[1], *order(pair[0])))
        return found[:k]

    def spread(self, query: Sequence[float], mask: np.ndarray, sample: int) -> tuple[int, float, float]:
        """(count, mean, std) of the inner products of ``query`` with the rows where ``mask``
        is True: every one up to ``sample``, else ``sample`` evenly spaced in row order."""
        q = self._query(query).astype(np.float64)
        slots = self._slots(mask)
        if slots.shape[0] > sample:
            slots = slots[np.linspace(0, slots.shape[0] - 1, sample).astype(np.int64)]
        if slots.shape[0] == 0:
            return 0, 0.0, 0.0
        scores = np.concatenate([block[inside] @ q for _, block, inside in self._per_block(slots)])
        return int(scores.shape[0]), float(scores.mean()), float(scores.std())

    def _query(self, query: Sequence[float]) -> np.ndarray:
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(-1))
        if q.shape[0] != self.dim:
            raise StoreError(f"a query of dimension {self.dim} was expected, got {q.shape[0]} floats")
        return q

    def _slots(self, mask: np.ndarray) -> np.ndarray:
        """The slots of the rows where ``mask`` is True, in row order."""
        limit = min(mask.shape[0], self.row_slot.size)
        slots = self.row_slot.values[np.flatnonzero(mask[:limit])]
        return slots[slots != FREE].astype(np.int64)

    def _per_block(self, slots: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(start, block, the block's own indexes of ``slots``) for each block holding any."""
        for start, block in zip(self._starts, self._blocks):
            inside = slots[(slots >= start) & (slots < start + block.shape[0])] - start
            if inside.shape[0]:
                yield start, block, inside

    def _best(self, q: np.ndarray, slots: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``want`` highest (scores, slots) among ``slots``, highest first."""
        all_scores, all_slots = [], []
        for start, block, inside in self._per_block(slots):
            k = min(want, inside.shape[0])
            if inside.shape[0] * DENSE_SHARE >= block.shape[0]:
                scores, local = _dense_best(q, block, inside, k)
            else:
                scores = np.empty(k, dtype=np.float32)
                local = np.empty(k, dtype=np.int64)
                faiss.knn_inner_products_by_idx(
                    faiss.swig_ptr(q), faiss.swig_ptr(block), faiss.swig_ptr(inside),
                    self.dim, 1, block.shape[0], inside.shape[0], k,
                    faiss.swig_ptr(scores), faiss.swig_ptr(local), 0,
                )  # fmt: skip
            all_scores.append(scores)
            all_slots.append(local + start)
        scores, best = np.concatenate(all_scores), np.concatenate(all_slots)
        if len(all_scores) > 1:
            top = np.argsort(-scores, kind="stable")[:want]
            scores, best = scores[top], best[top]
        return scores, best


DENSE_SHARE = 2
"""A scan selecting at least 1/DENSE_SHARE of a block's rows multiplies the whole block:
one BLAS product (both cores) beats FAISS's one-thread scan of a long index list."""


def _dense_best(q: np.ndarray, block: np.ndarray, inside: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest (scores, rows) of ``block @ q`` among rows ``inside``, highest first."""
    scores = np.full(block.shape[0], -np.inf, dtype=np.float32)
    scores[inside] = (block @ q)[inside]
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return scores[best], best
